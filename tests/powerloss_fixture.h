// Helpers of powerloss_test, part one: recording a workload (the io layer's record plus what
// the workload appended, was acknowledged and retired) and the explorer's settings from the
// environment. The checks run on each crash state are in powerloss_checks.h.
// Not for: production code. Header-only, as the other fixtures.
// Thread-safety: Journal is thread-safe; the rest is per call.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "crash/explore.h"
#include "wal_writer_fixture.h"
#include "walseg/io_record.h"

namespace walseg_test::powerloss {

using walseg::Lsn;

/// A digest of a payload: comparing it is what makes checking a state's records cheap (a
/// seq_payload regenerated per record read took half the run's time).
inline std::uint64_t digest(std::span<const std::byte> p) {
  return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(p.data()), p.size()));
}

struct Record {
  Lsn end = 0;
  std::uint64_t seq = 0;
  std::size_t size = 0;
  std::uint64_t digest = 0;  ///< of seq_payload(seq, size)
};

/// Appends seq_payload(seq, size) through w and returns it as a Record.
inline Record append_record(walseg::WalWriter& w, std::uint64_t seq, std::size_t size) {
  const std::vector<std::byte> p = seq_payload(seq, size);
  return Record{w.append(p), seq, size, digest(p)};
}
struct Mark {  // something that happened once `events` events were recorded
  std::uint64_t events = 0;
  Lsn lsn = 0;
};

/// What a workload appended, was acknowledged and retired, against the record's length.
class Journal {
 public:
  Lsn append(walseg::WalWriter& w, std::uint64_t seq, std::size_t size) {
    const Record rec = append_record(w, seq, size);
    std::lock_guard lk(mu_);
    records_.push_back(rec);
    return rec.end;
  }
  /// flush(lsn); once it returned, the acknowledgement holds for every cut at or after the
  /// record's length read then (read after the return: never earlier than the truth).
  void flush(walseg::WalWriter& w, Lsn lsn) {
    w.flush(lsn);
    const std::uint64_t n = walseg::io_record::count();
    std::lock_guard lk(mu_);
    acks_.push_back(Mark{n, lsn});
  }
  /// truncate_before(lsn), noted as possibly in effect for every cut after the length read
  /// before the call.
  void retire(walseg::WalWriter& w, Lsn lsn) {
    {
      std::lock_guard lk(mu_);
      retires_.push_back(Mark{walseg::io_record::count(), lsn});
    }
    w.truncate_before(lsn);
  }
  /// A segment manager operation (a timeline switch) that may, from the cut after the length
  /// read now, make the WAL start at lsn's segment: records before it are then not required.
  void note_start_moves(Lsn lsn) {
    std::lock_guard lk(mu_);
    retires_.push_back(Mark{walseg::io_record::count(), lsn});
  }
  std::vector<Record> records() const {
    std::lock_guard lk(mu_);
    auto r = records_;
    std::sort(r.begin(), r.end(), [](const Record& a, const Record& b) { return a.end < b.end; });
    return r;
  }
  std::vector<Mark> acks() const {
    std::lock_guard lk(mu_);
    return acks_;
  }
  std::vector<Mark> retires() const {
    std::lock_guard lk(mu_);
    return retires_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Record> records_;
  std::vector<Mark> acks_, retires_;
};

struct Recording {
  std::string name;
  std::string root;  ///< the directory the workload ran in (the model's root)
  std::string wal;   ///< its WAL directory, relative to root ("" when root is the WAL)
  walseg::Config cfg;
  walseg::TimeLineId timeline = 1;
  /// Only the segment names are checked (a final name only ever names a complete file): for the PostgreSQL extension's install
  /// path, whose directory is pg_wal (no walseg.control, no WAL of walseg's).
  bool names_only = false;
  /// A workload's own check of each state (optional), run before the common ones.
  std::function<std::string(std::size_t cut, const walseg_crash::CrashState& st)> extra_check;
  std::vector<walseg_crash::Event> events;
  std::vector<Record> records;  ///< by end LSN
  std::vector<Mark> acks, retires;
  std::map<std::string, std::string> final_tree;
};

/// Explorer settings from the environment: WALSEG_POWERLOSS_RANDOM (random states per cut),
/// _SEED, _CUT and _STATE (one state only), _KEEP (directory for states with a problem),
/// _TOOL_EVERY (`walseg recover` on every Nth state; 0: never).
struct Settings {
  std::size_t random_per_cut = 4;
  std::uint64_t seed = 1;
  std::size_t tool_every = 50;
  std::optional<std::size_t> only_cut, only_state;
  std::string keep;
  int scale = 1;  ///< WALSEG_POWERLOSS_SCALE: workload size multiplier (the long mode)

  static Settings from_environment() {
    Settings s;
    auto num = [](const char* name) -> std::optional<std::uint64_t> {
      const char* v = std::getenv(name);
      if (v == nullptr || *v == '\0') return std::nullopt;
      return std::strtoull(v, nullptr, 10);
    };
    if (auto v = num("WALSEG_POWERLOSS_RANDOM")) s.random_per_cut = *v;
    if (auto v = num("WALSEG_POWERLOSS_SEED")) s.seed = *v;
    if (auto v = num("WALSEG_POWERLOSS_TOOL_EVERY")) s.tool_every = *v;
    if (auto v = num("WALSEG_POWERLOSS_SCALE")) s.scale = std::max<int>(1, static_cast<int>(*v));
    s.only_cut = num("WALSEG_POWERLOSS_CUT");
    s.only_state = num("WALSEG_POWERLOSS_STATE");
    if (const char* k = std::getenv("WALSEG_POWERLOSS_KEEP")) s.keep = k;
    return s;
  }
};

/// Where workloads run: WALSEG_POWERLOSS_DIR, else /dev/shm (materialising ten thousand states
/// on a disk would measure the disk), else the fixtures' /var/tmp.
inline std::string base_dir() {
  if (const char* d = std::getenv("WALSEG_POWERLOSS_DIR")) return d;
  return std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/var/tmp";
}

/// Sequence numbers of records appended after a reopen, far above any workload's.
inline constexpr std::uint64_t kResumeSeq = std::uint64_t{1} << 40;


/// Drops the library's log lines while states are checked (each reopen logs what it found).
struct QuietLog {
  QuietLog() { walseg::set_log_sink([](walseg::LogLevel, const std::string&) {}); }
  ~QuietLog() {
    walseg::set_log_sink([](walseg::LogLevel l, const std::string& m) {
      if (l != walseg::LogLevel::kDebug2) std::fprintf(stderr, "%s:  %s\n", walseg::log_level_name(l), m.c_str());
    });
  }
};

/// Runs body(wal_dir, journal) with the io record on, in tmp/run (the WAL directory is
/// tmp/run/wal_rel, created beforehand unless wal_rel is set). body must close everything it
/// opened before it returns: no background thread may write once recording stops.
template <typename Body>
Recording record_workload(const std::string& name, const walseg::Config& cfg, const TempDir& tmp, Body&& body,
                          const std::string& wal_rel = "") {
  Recording r;
  r.name = name;
  r.root = tmp / "run";
  r.wal = wal_rel;
  r.cfg = cfg;
  std::filesystem::create_directories(r.root);
  Journal j;
  QuietLog quiet;
  walseg::io_record::start();
  try {
    body(wal_rel.empty() ? r.root : r.root + "/" + wal_rel, j);
  } catch (...) {
    walseg::io_record::stop();
    throw;
  }
  r.events = walseg::io_record::stop();
  r.records = j.records();
  r.acks = j.acks();
  r.retires = j.retires();
  r.final_tree = walseg_crash::read_tree(r.root);
  return r;
}

}  // namespace walseg_test::powerloss
