// walseg_powercut_check: after a power cut, compares the records of a WAL directory with what
// `walseg write --ack-log` said was acknowledged (src/bin/clients.h describes the log and the
// tag every payload starts with), as LevelDB's fault_injection_test verifies what survived.
//
//   walseg_powercut_check --dir D --ack-log FILE [--lsns OUT]
//
// Reads every record in LSN order through WalReader (as `walseg dump` does) and counts:
//   lost   an acknowledged record (run, client, seq) that is not in the WAL, or not at the end
//          LSN it was acknowledged at;
//   stale  a record this WAL's writers did not append where it stands: an unknown run or a
//          damaged tag or filler; a client's sequence number past its last acknowledgement + 1
//          (each client appends one record at a time and waits for it, so nothing later was
//          ever appended); a duplicate, or a client's records out of order; a record of run r
//          at or past the LSN where the next run started writing (that run overwrote it, so it
//          can only be an old copy come back); or before run r's own start.
// A record too short to carry the whole tag (--record-size below 20 bytes) carries its first
// bytes only: it counts as the acknowledged record ending at its end LSN when those bytes
// match that record's tag, and otherwise cannot be judged (counted as "untagged", neither
// lost nor stale, since nothing says which record it is).
// The WAL is read as walseg.control describes it (its timeline, sizes and oldest LSN), as
// `walseg dump` reads it; without a control file, from the lowest segment of timeline 1.
// --lsns writes every record's LSN, one per line as `walseg dump` prints it, so that the
// caller can check that both read the same records.
// Prints each problem (at most 20 of each kind), then one summary line:
//   records N, acknowledged A, lost L, stale S[, untagged U], end X/X
// Exit 0 when nothing is lost or stale, 1 otherwise, 2 on usage or I/O errors.
#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "walseg/error.h"
#include "walseg/wal_control.h"
#include "walseg/wal_reader.h"

namespace {

using walseg::Lsn;

constexpr std::size_t kTagBytes = 20;  // clients.h: kPayloadTagBytes
constexpr std::byte kFill{0x5a};

struct Run {
  std::uint64_t id = 0;
  Lsn start = 0;
  int clients = 0;
  std::map<std::pair<int, std::uint64_t>, Lsn> acks;  // (client, seq) -> end LSN
  std::map<int, std::uint64_t> last_ack;              // client -> highest acknowledged seq
};

struct AckAt {
  std::size_t run = 0;  // position in Log::runs
  int client = 0;
  std::uint64_t seq = 0;
};

struct Log {
  std::vector<Run> runs;
  std::map<std::uint64_t, std::size_t> index;  // run id -> position in runs
  std::map<Lsn, AckAt> by_end;                 // end LSN -> the acknowledgement there (latest run)
};

Log read_log(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("could not open ack log \"" + path + "\"");
  Log log;
  std::string line;
  while (std::getline(in, line)) {
    // A last line without its newline is a write cut short (the ack log's filesystem full, a
    // kill inside the write): no acknowledgement, since walseg writes a line whole or reports
    // the write failed (break-it round 24 L2: "ack RUN 0 10" of seq 109 was read as seq 10
    // acknowledged at 0/0, and called stale).
    if (in.eof()) {
      if (!line.empty()) std::fprintf(stderr, "ack log: its last line has no newline (a write cut short), ignored: %s\n", line.c_str());
      break;
    }
    // A run that started after a line cut short appends its start line to that line's remains
    // (walseg write accepts such a log): the remains are no acknowledgement (break-it round 28
    // L2: "ack 1 2 3 4start ..." was read as an ack before its start line).
    if (const std::size_t at = line.find("start "); at != std::string::npos && at > 0) {
      std::fprintf(stderr, "ack log: a line cut short before a start line, ignored: %s\n", line.substr(0, at).c_str());
      line.erase(0, at);
    }
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    if (kind == "start") {
      Run r;
      ls >> r.id >> r.start >> r.clients;
      log.index[r.id] = log.runs.size();
      log.runs.push_back(r);
    } else if (kind == "ack") {
      std::uint64_t id = 0, seq = 0;
      int client = 0;
      Lsn end = 0;
      if (!(ls >> id >> client >> seq >> end)) throw std::runtime_error("ack log: unreadable line: " + line);
      auto it = log.index.find(id);
      if (it == log.index.end()) throw std::runtime_error("ack log: ack before its start line: " + line);
      Run& r = log.runs[it->second];
      r.acks[{client, seq}] = end;
      log.by_end[end] = AckAt{it->second, client, seq};
      auto& last = r.last_ack[client];
      last = std::max(last, seq);
    }
  }
  return log;
}

std::string lsn_text(Lsn l) { return fmt::format("{:X}/{:08X}", l >> 32, l & 0xFFFFFFFF); }

template <typename T>
T le(std::span<const std::byte> p, std::size_t at) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(std::to_integer<std::uint8_t>(p[at + i])) << (8 * i);
  return v;
}

class Checker {
 public:
  explicit Checker(const Log& log) : log_(log) {}

  void record(const walseg::WalRecord& rec) {
    ++records_;
    std::string why = judge(rec);
    if (!why.empty()) problem(stale_, fmt::format("stale record at {}: {}", lsn_text(rec.lsn), why));
  }

  void finish() {
    for (const Run& r : log_.runs)
      for (const auto& [key, end] : r.acks) {
        ++acknowledged_;
        if (found_.count({r.id, key.first, key.second}) == 0)
          problem(lost_, fmt::format("lost: run {} client {} seq {} acknowledged at end LSN {} is not in the WAL",
                                     r.id, key.first, key.second, lsn_text(end)));
      }
  }

  std::uint64_t lost() const { return lost_; }
  std::uint64_t stale() const { return stale_; }
  std::uint64_t records() const { return records_; }
  std::uint64_t acknowledged() const { return acknowledged_; }
  std::uint64_t untagged() const { return untagged_; }

 private:
  std::string judge(const walseg::WalRecord& rec) {
    auto p = rec.payload;
    if (p.size() < kTagBytes) return judge_short(rec);
    for (std::size_t i = kTagBytes; i < p.size(); ++i)
      if (p[i] != kFill) return fmt::format("payload byte {} is not the filler", i);
    auto id = le<std::uint64_t>(p, 0);
    auto client = static_cast<int>(le<std::uint32_t>(p, 8));
    auto seq = le<std::uint64_t>(p, 12);
    auto it = log_.index.find(id);
    if (it == log_.index.end()) return fmt::format("run {} is not in the ack log", id);
    const Run& r = log_.runs[it->second];
    std::string who = fmt::format("run {} (#{}) client {} seq {}", id, it->second + 1, client, seq);
    if (client < 0 || client >= r.clients) return who + ": no such client";
    auto last = r.last_ack.find(client);
    std::uint64_t limit = last == r.last_ack.end() ? 0 : last->second + 1;
    if (seq > limit) return who + fmt::format(": never appended (last acknowledged seq + 1 = {})", limit);
    if (rec.lsn < r.start) return who + fmt::format(": before its run's start {}", lsn_text(r.start));
    if (it->second + 1 < log_.runs.size() && rec.lsn >= log_.runs[it->second + 1].start)
      return who + fmt::format(": at or past {}, where the next run started writing",
                               lsn_text(log_.runs[it->second + 1].start));
    if (!found_.insert({id, client, seq}).second) return who + ": duplicate";
    auto& prev = order_[{id, client}];
    if (prev != 0 && seq < prev) return who + ": out of order";
    prev = seq;
    auto ack = r.acks.find({client, seq});
    if (ack != r.acks.end() && ack->second != rec.end_lsn)
      return who + fmt::format(": ends at {}, acknowledged at {}", lsn_text(rec.end_lsn), lsn_text(ack->second));
    return {};
  }

  // The tag's first p.size() bytes: the acknowledgement ending here, if they match its tag.
  std::string judge_short(const walseg::WalRecord& rec) {
    auto at = log_.by_end.find(rec.end_lsn);
    if (at == log_.by_end.end()) {
      ++untagged_;
      return {};
    }
    const Run& r = log_.runs[at->second.run];
    std::byte tag[kTagBytes];
    for (std::size_t i = 0; i < 8; ++i) tag[i] = static_cast<std::byte>(r.id >> (8 * i));
    for (std::size_t i = 0; i < 4; ++i) tag[8 + i] = static_cast<std::byte>(static_cast<std::uint32_t>(at->second.client) >> (8 * i));
    for (std::size_t i = 0; i < 8; ++i) tag[12 + i] = static_cast<std::byte>(at->second.seq >> (8 * i));
    for (std::size_t i = 0; i < rec.payload.size(); ++i)
      if (rec.payload[i] != tag[i]) {
        ++untagged_;
        return {};
      }
    if (!found_.insert({r.id, at->second.client, at->second.seq}).second)
      return fmt::format("run {} client {} seq {} (a {}-byte payload): duplicate", r.id, at->second.client,
                         at->second.seq, rec.payload.size());
    return {};
  }

  void problem(std::uint64_t& counter, const std::string& text) {
    if (++counter <= 20) std::printf("%s\n", text.c_str());
  }

  const Log& log_;
  std::set<std::tuple<std::uint64_t, int, std::uint64_t>> found_;
  std::map<std::pair<std::uint64_t, int>, std::uint64_t> order_;
  std::uint64_t records_ = 0, acknowledged_ = 0, lost_ = 0, stale_ = 0, untagged_ = 0;
};

int run(const std::string& dir, const std::string& ack_path, const std::string& lsns_path) {
  Log log = read_log(ack_path);
  Checker check(log);
  std::ofstream lsns;
  if (!lsns_path.empty()) {
    // A new file only, never through a link: an existing one may be anything, a WAL segment
    // among them (break-it round 18: --lsns on a segment truncated acknowledged records).
    const int fd = ::open(lsns_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      std::fprintf(stderr, "walseg_powercut_check: could not create --lsns file \"%s\": %s%s\n", lsns_path.c_str(),
                   std::strerror(errno), errno == EEXIST ? " (it writes only a new file: remove it or name another)" : "");
      return 2;
    }
    ::close(fd);
    lsns.open(lsns_path, std::ios::app);
  }
  Lsn end = 0;
  try {
    // Without the control file's timeline a WAL on timeline 2 reads as empty: every record lost.
    walseg::WalReaderOptions options;
    if (std::optional<walseg::WalControl> control = walseg::read_control(dir))
      options = walseg::reader_options_for(*control);
    walseg::WalReader reader = walseg::WalReader::open(dir, options);
    walseg::WalRecord rec;
    while (reader.next(&rec)) {
      check.record(rec);
      if (lsns.is_open()) lsns << lsn_text(rec.lsn) << '\n';
    }
    end = reader.stop().end_lsn;
  } catch (const walseg::Error& e) {
    // No segment with a readable long header, or no directory at all (its name was never
    // made durable): no record survived, and finish() counts the acknowledged ones as lost.
    if (e.errnum() != EINVAL && e.errnum() != ENOENT) throw;
    std::printf("no WAL to read: %s\n", e.what());
  }
  check.finish();
  const std::string untagged =
      check.untagged() == 0 ? "" : fmt::format(", untagged {}", check.untagged());
  std::printf("records %llu, acknowledged %llu, lost %llu, stale %llu%s, end %s\n",
              static_cast<unsigned long long>(check.records()), static_cast<unsigned long long>(check.acknowledged()),
              static_cast<unsigned long long>(check.lost()), static_cast<unsigned long long>(check.stale()),
              untagged.c_str(), lsn_text(end).c_str());
  return check.lost() == 0 && check.stale() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, ack, lsns;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string o = argv[i];
    if (o == "--dir") dir = argv[i + 1];
    else if (o == "--ack-log") ack = argv[i + 1];
    else if (o == "--lsns") lsns = argv[i + 1];
    else dir.clear(), i = argc;
  }
  if (dir.empty() || ack.empty() || argc % 2 == 0) {
    std::fprintf(stderr, "usage: walseg_powercut_check --dir D --ack-log FILE [--lsns OUT]\n");
    return 2;
  }
  try {
    return run(dir, ack, lsns);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "walseg_powercut_check: %s\n", e.what());
    return 2;
  }
}
