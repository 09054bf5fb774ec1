// Helpers of powerloss_test, part two: the checks run on every crash state of a recorded
// workload (powerloss_fixture.h), and the loop that explores them and prints what it found.
//
// A state passes when:
//   - every final segment name refers to a file of walseg.segment_size bytes (at most that in
//     append mode) that got the name by a rename made when its fill was durable;
//   - reading the WAL returns only records of this life, each intact, at the LSN it was
//     appended at, in order without a gap, covering every record acknowledged before the cut
//     (except those in segments a truncate_before begun before the cut may have retired);
//   - the reader, Wal::open's recovery and (every tool_every-th state) `walseg recover` agree
//     on the end and report no corruption: a torn tail is a clean end;
//   - Wal::open resumes, and the records it appends and flushes are read back after the rest.
// Not for: production code. Header-only, as the other fixtures.
// Thread-safety: per call.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "powerloss_fixture.h"
#include "tool_test_util.h"
#include "walseg/dir_lock.h"
#include "walseg/segment_name.h"

namespace walseg_test::powerloss {

/// What a read of the WAL found: records[first, first + count) of the expected list.
struct ReadBack {
  std::size_t first = 0;
  std::size_t count = 0;
  walseg::WalStop stop;
};

/// Reads the WAL in dir; every record must be expected[first + j] for consecutive j (same end
/// LSN, intact payload of the same sequence number and size). Returns "" or the problem.
inline std::string match(const Recording& r, walseg::TimeLineId tli, const std::string& dir,
                         const std::vector<Record>& expected, ReadBack* out) {
  walseg::WalReaderOptions o;
  o.timeline = tli;
  o.segment_size_bytes = r.cfg.segment_size_bytes;
  o.block_size_bytes = r.cfg.block_size_bytes;
  // As walseg reads it: from where walseg.control says the WAL starts (a state may have lost
  // it only together with everything else: the control file is made before any segment).
  if (auto c = walseg::read_control(dir)) {
    o = walseg::reader_options_for(*c);
    o.timeline = tli;
  }
  walseg::WalReader rd = walseg::WalReader::open(dir, o);
  walseg::WalRecord rec;
  *out = ReadBack{};
  while (rd.next(&rec)) {
    auto it = std::lower_bound(expected.begin(), expected.end(), rec.end_lsn,
                               [](const Record& a, Lsn l) { return a.end < l; });
    std::ostringstream why;
    if (it == expected.end() || it->end != rec.end_lsn || rec.payload.size() != it->size ||
        digest(rec.payload) != it->digest) {
      auto seq = seq_of(rec.payload);
      why << "a record that was not written in this life is returned\n  record at "
          << walseg::format_lsn(rec.lsn) << " ending at " << walseg::format_lsn(rec.end_lsn) << ", "
          << rec.payload.size() << " bytes, sequence " << (seq ? std::to_string(*seq) : "unreadable");
      return why.str();
    }
    const std::size_t idx = static_cast<std::size_t>(it - expected.begin());
    if (out->count == 0) out->first = idx;
    if (idx != out->first + out->count) {
      why << "records are returned out of order or with a gap\n  record " << idx << " read after record "
          << out->first + out->count - 1;
      return why.str();
    }
    ++out->count;
  }
  out->stop = rd.stop();
  return "";
}

/// Invariant 1 on the state's final segment names.
inline std::string check_segment_names(const Recording& r, const walseg_crash::CrashState& st) {
  const std::string prefix = r.wal.empty() ? "" : r.wal + "/";
  for (const auto& f : st.files) {
    if (f.path.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string name = f.path.substr(prefix.size());
    if (!walseg::parse_segment_file_name(name, r.cfg.segment_size_bytes)) continue;
    const std::uint64_t size = st.images.at(f.inode).bytes.size();
    const bool appending = walseg::append_mode(r.cfg.init_method);
    const std::uint64_t want = r.cfg.segment_size_bytes;
    if (appending ? size > want : size != want)
      return "a final segment name refers to a file of the wrong size\n  " + name + " has " +
             std::to_string(size) + " bytes, segment size " + std::to_string(want);
    if (!f.renamed_when_durable)
      return "a final segment name was given to a file whose fill was not durable\n  " + name;
  }
  return "";
}

/// The records a state must still hold: records[lo, end) (none when lo >= end): those
/// acknowledged before the cut, less those that may sit in segments a truncate_before begun
/// before the cut retired.
inline std::pair<std::size_t, std::size_t> required(const Recording& r, std::size_t cut) {
  Lsn acked = 0, retired = 0;
  for (const Mark& a : r.acks)
    if (a.events <= cut) acked = std::max(acked, a.lsn);
  for (const Mark& t : r.retires)
    if (t.events < cut) retired = std::max(retired, t.lsn - t.lsn % r.cfg.segment_size_bytes);
  // A record starts at or after its predecessor's end; the first is taken to start at 0.
  std::size_t lo = 0;
  if (retired > 0) {
    lo = 1;
    while (lo < r.records.size() && r.records[lo - 1].end < retired) ++lo;
  }
  std::size_t end = 0;
  while (end < r.records.size() && r.records[end].end <= acked) ++end;
  return {lo, end};
}

/// `walseg recover` on wal_dir, as a user would run it after the crash: it must exit 0, see
/// no corruption and find the end the reader found.
inline std::string check_tool(walseg::TimeLineId tli, const std::string& wal_dir, const ReadBack& raw) {
  const std::string out_path = wal_dir + ".recover";
  const std::string cmd = "'" + tool_path().string() + "' recover --dir '" + wal_dir + "' --timeline " +
                          std::to_string(tli) + " >'" + out_path + "' 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(out_path);
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::remove(out_path);
  const std::string out = text.str();
  // A cut before the first walseg.control was durable leaves no WAL, which recover reports as
  // an error (status 1); right only when the reader found no record either.
  if (raw.count == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 1 && out.find("no WAL in") != std::string::npos)
    return "";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.find("corruption: no") == std::string::npos)
    return "walseg recover fails or reports corruption after a power cut\n  " + out;
  const std::string end = "end of WAL: " + walseg::format_lsn(raw.stop.end_lsn) + "\n";
  if (raw.count > 0 && out.find(end) == std::string::npos)
    return "walseg recover finds another end of WAL than the reader\n  reader: " + end + "  walseg recover: " + out;
  return "";
}

/// Wal::open on the state, as a user would: its recovery must agree with the reader and see
/// no corruption; then the writer appends three records, flushes, and a read must return what
/// was there followed by them.
inline std::string reopen_and_resume(const Recording& r, walseg::TimeLineId tli, const std::string& wal_dir,
                                     const ReadBack& raw) {
  std::vector<Record> expect(r.records.begin() + static_cast<std::ptrdiff_t>(raw.first),
                             r.records.begin() + static_cast<std::ptrdiff_t>(raw.first + raw.count));
  Lsn flushed = 0;
  try {
    // A temporary file a cut leaves is listed in walseg.lock and named for a PID it holds: that
    // is how the next writer knows it for a leftover of a crash and removes it (break-it round 18 F4: the
    // PID was never synced, so a cut that kept a temporary file's name but lost the PID left
    // the file for good). By the state's files, before anything opens them.
    if (std::filesystem::is_directory(wal_dir)) {
      const walseg::Directory d = walseg::Directory::open(wal_dir);
      const std::vector<std::uint32_t> pids = walseg::lock_file_pids(d);
      const std::vector<std::string> listed = walseg::lock_file_temps(d);
      for (const auto& e : d.list()) {
        if ((e.name == walseg::kControlTempFileName || walseg::parse_temp_file_name(e.name)) &&
            std::find(listed.begin(), listed.end(), e.name) == listed.end())
          return "a power cut left a temporary file walseg.lock does not list\n  " + e.name;
        if (const auto t = walseg::parse_temp_file_name(e.name);
            t && std::find(pids.begin(), pids.end(), t->pid) == pids.end()) {
          std::string named;
          for (auto p : pids) named += " " + std::to_string(p);
          return "a power cut left a temporary file walseg.lock does not name the writer of\n  " + e.name +
                 ", walseg.lock's PIDs:" + (named.empty() ? std::string(" none") : named);
        }
      }
    }
    auto wal = walseg::Wal::open(wal_dir, r.cfg);  // on the control file's timeline, as a user opens it
    const walseg::RecoveryResult& rec = wal->recovery();
    if (rec.corruption != raw.stop.corruption) return "Wal::open's recovery and the reader disagree on corruption";
    // With no segment at all the preallocator may have made the first one before recovery
    // looked: then recovery starts from its first page, the reader found nothing.
    const bool had_segments = raw.stop.end_lsn != 0;
    if (rec.records != raw.count || (had_segments && rec.end_lsn != raw.stop.end_lsn))
      return "Wal::open's recovery disagrees with the reader\n  recovery: " + std::to_string(rec.records) +
             " records, end " + walseg::format_lsn(rec.end_lsn) + "; reader: " + std::to_string(raw.count) +
             " records, end " + walseg::format_lsn(raw.stop.end_lsn);
    // No power cut leaves a file with a segment name walseg would not take for its own.
    const auto& foreign = wal->manager().scan_report().foreign;
    if (!foreign.empty())
      return "a power cut left a file walseg does not take for its own\n  " + foreign.front().name + ": " +
             foreign.front().why;
    for (std::uint64_t k = 0; k < 3; ++k) {
      const std::size_t size = k == 1 ? 2 * kBlockBytes + 100 : 200;
      expect.push_back(append_record(wal->writer(), kResumeSeq + k, size));
    }
    wal->writer().flush(expect.back().end);
    flushed = wal->writer().flushed_lsn();
  } catch (const std::exception& e) {
    return std::string("reopening or resuming failed\n  ") + e.what();
  }
  ReadBack again;
  if (std::string p = match(r, tli, wal_dir, expect, &again); !p.empty()) return "after resuming, " + p;
  if (again.first != 0 || again.count != expect.size())
    return "after resuming, the WAL does not read back as before plus what was appended\n  read " +
           std::to_string(again.count) + " of " + std::to_string(expect.size()) + " records; reader stopped: " +
           walseg::describe(again.stop);
  if (again.stop.corruption) return "after resuming, the reader reports corruption\n  " + walseg::describe(again.stop);
  if (again.stop.end_lsn != flushed) return "after resuming, the WAL does not end where the writer flushed";
  return "";
}

/// Every check of one materialised state (see the file comment); state_no counts states.
inline std::string check_state(const Recording& r, const Settings& s, std::size_t cut,
                               const walseg_crash::CrashState& st, const std::string& dir, std::uint64_t state_no) {
  if (std::string p = check_segment_names(r, st); !p.empty()) return p;
  if (r.extra_check)
    if (std::string p = r.extra_check(cut, st); !p.empty()) return p;
  if (r.names_only) return "";
  const std::string wal_dir = r.wal.empty() ? dir : dir + "/" + r.wal;
  const bool exists = std::filesystem::is_directory(wal_dir);
  // The timeline the WAL goes on in is the control file's (a switch may be durable or not).
  walseg::TimeLineId tli = r.timeline;
  if (exists)
    if (auto c = walseg::read_control(wal_dir)) tli = c->timeline;
  ReadBack raw;
  if (exists) {
    try {
      if (std::string p = match(r, tli, wal_dir, r.records, &raw); !p.empty()) return p;
    } catch (const std::exception& e) {
      return std::string("reading the WAL failed\n  ") + e.what();
    }
  }
  // Reported last: whatever else is wrong with the state is the bigger finding.
  const std::string corruption =
      raw.stop.corruption ? "the reader reports corruption after a power cut (a torn tail must be a clean end)\n  " +
                                walseg::describe(raw.stop)
                          : "";
  const auto [lo, end] = required(r, cut);
  if (lo < end && (raw.count == 0 || raw.first > lo || raw.first + raw.count < end)) {
    std::ostringstream why;
    why << "a record acknowledged before the cut is not read back\n  records " << lo << ".." << end - 1
        << " (to " << walseg::format_lsn(r.records[end - 1].end) << ") must be read; read "
        << (raw.count == 0 ? std::string("none") : std::to_string(raw.first) + ".." + std::to_string(raw.first + raw.count - 1))
        << (exists ? "; reader stopped: " + walseg::describe(raw.stop) : "; the WAL directory is gone");
    return why.str();
  }
  static const bool tool = std::filesystem::exists(tool_path());  // not built: checked elsewhere
  if (exists && tool && s.tool_every > 0 && state_no % s.tool_every == 0)
    if (std::string p = check_tool(tli, wal_dir, raw); !p.empty()) return p;
  if (std::string p = reopen_and_resume(r, tli, wal_dir, raw); !p.empty()) return p;
  return corruption;
}

/// Explores every crash state of r and prints "crash states explored: N" with what was found.
inline walseg_crash::ExploreResult explore_recording(const Recording& r, const Settings& s, const TempDir& tmp) {
  walseg_crash::ExploreOptions o;
  o.random_per_cut = s.random_per_cut;
  o.seed = s.seed;
  o.scratch = tmp / "state";
  o.keep = s.keep.empty() ? "" : s.keep + "/" + r.name;
  o.only_cut = s.only_cut;
  o.only_state = s.only_state;
  o.final_tree = r.final_tree;
  o.expectation = [&r](std::size_t cut) {
    const auto [lo, end] = required(r, cut);
    return lo < end ? (static_cast<std::uint64_t>(lo) << 32) + end : 0;
  };
  std::uint64_t n = 0;
  QuietLog quiet;
  auto res = walseg_crash::explore(r.events, r.root, o, [&](std::size_t cut, const walseg_crash::CrashState& st,
                                                            const std::string& dir) {
    return check_state(r, s, cut, st, dir, n++);
  });
  std::printf("workload %s: crash states explored: %llu (%zu events, %zu acknowledged flushes, %llu duplicates "
              "skipped, %.1f s)\n",
              r.name.c_str(), static_cast<unsigned long long>(res.states), r.events.size(), r.acks.size(),
              static_cast<unsigned long long>(res.duplicates), res.seconds);
  for (const auto& [kind, count] : res.problems)
    std::printf("  %llu states: %s\n", static_cast<unsigned long long>(count), kind.c_str());
  for (const std::string& rep : res.reproductions) std::printf("FINDING in workload %s: %s\n", r.name.c_str(), rep.c_str());
  std::fflush(stdout);
  return res;
}

}  // namespace walseg_test::powerloss
