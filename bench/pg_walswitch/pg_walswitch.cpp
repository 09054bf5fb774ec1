// pg_walswitch: commit latency of PostgreSQL across WAL segment switches (libpq client).
//
// K connections run single-row INSERT transactions (autocommit: one commit each) through a
// warm-up, an optional CHECKPOINT (--checkpoint: issued by a control connection while the
// load goes on), then T measured seconds. Each row carries --payload bytes of fresh random
// data sent as a bytea literal into a column with STORAGE EXTERNAL (stored out of line, never
// compressed), so every transaction writes at least that much WAL and the server switches
// segments every few seconds. For every commit started inside the measured window the client
// keeps its latency (the PQexec round trip, std::chrono::steady_clock) and the WAL insert
// position the INSERT saw (RETURNING pg_current_wal_insert_lsn(), a spinlock read), which
// dates the segment switches. Commits in flight at the end are waited for and kept, so a
// stall at the end is not cut off.
//
// The control connection marks the window in the server log (RAISE LOG "pg_walswitch:
// measure start|end LABEL"), so that a script can count what the server logged inside it,
// and reads at both ends the insert position, the segment files in pg_wal (pg_ls_waldir) and,
// when the walseg extension is installed, walseg_status().segments_created.
//
// Output: plain text (default) or JSON (--format json), and --json FILE in any case: TPS,
// p50/p99/p99.9/p99.99/max commit latency, WAL bytes per commit, segment switches, segments
// the walseg preallocator created, the switch times, the slowest commits (time in the window,
// offset in their segment, time since the switch), commits and max latency per second.
// --samples FILE writes every measured commit as "start latency" (microseconds, start from the
// beginning of the window), one a line, for pooling runs and matching them with the server log.
//
//   pg_walswitch --conninfo "host=/tmp port=5432 user=postgres dbname=postgres" --setup-only
//   pg_walswitch --conninfo ... --clients 4 --warmup 5 --checkpoint --duration 30 --json out.json
#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "walseg/latency_summary.h"

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

struct Options {
  std::string conninfo = "dbname=postgres";
  std::string table = "walswitch";
  std::string label = "run";
  int clients = 4;
  double duration_s = 30;
  double warmup_s = 5;
  int payload_bytes = 8192;
  bool setup = false;
  bool setup_only = false;
  bool checkpoint = false;
  std::string format = "plain";
  std::string json_file;
  std::string samples_file;
  int slowest = 20;
};

struct ConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using Conn = std::unique_ptr<PGconn, ConnDeleter>;

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

Conn connect(const std::string& conninfo) {
  Conn c(PQconnectdb(conninfo.c_str()));
  if (!c || PQstatus(c.get()) != CONNECTION_OK)
    throw std::runtime_error(
        fmt::format("connection failed: {}", c ? PQerrorMessage(c.get()) : "out of memory"));
  // NOTICEs (e.g. DROP TABLE IF EXISTS) are not part of the output.
  PQsetNoticeProcessor(c.get(), [](void*, const char*) {}, nullptr);
  return c;
}

Result exec(PGconn* c, const std::string& sql) {
  Result r(PQexec(c, sql.c_str()));
  auto st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    throw std::runtime_error(fmt::format("query failed: {}: {}", sql.substr(0, 120),
                                         PQerrorMessage(c)));
  return r;
}

std::string value(PGconn* c, const std::string& sql) {
  Result r = exec(c, sql);
  if (PQntuples(r.get()) < 1 || PQgetisnull(r.get(), 0, 0)) return {};
  return PQgetvalue(r.get(), 0, 0);
}

std::string quote_ident(PGconn* c, const std::string& s) {
  char* q = PQescapeIdentifier(c, s.data(), s.size());
  if (!q) throw std::runtime_error(PQerrorMessage(c));
  std::string out = q;
  PQfreemem(q);
  return out;
}

std::string quote_literal(PGconn* c, const std::string& s) {
  char* q = PQescapeLiteral(c, s.data(), s.size());
  if (!q) throw std::runtime_error(PQerrorMessage(c));
  std::string out = q;
  PQfreemem(q);
  return out;
}

std::uint64_t parse_lsn(const std::string& s) {
  unsigned hi = 0, lo = 0;
  if (std::sscanf(s.c_str(), "%X/%X", &hi, &lo) != 2)
    throw std::runtime_error(fmt::format("cannot parse LSN '{}'", s));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

/// splitmix64: fast, good enough to make the payload incompressible.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

/// What the control connection reads at each end of the measured window.
struct Snapshot {
  std::uint64_t lsn = 0;
  std::string lsn_text;
  std::string segment;
  std::optional<std::int64_t> walseg_created;
  std::int64_t future_segments = 0;  // segment files in pg_wal after the insert segment
  std::int64_t segment_files = 0;    // all segment files in pg_wal
};

Snapshot snapshot(PGconn* c, bool walseg) {
  Snapshot s;
  Result r = exec(c, "SELECT pg_current_wal_insert_lsn(), "
                     "pg_walfile_name(pg_current_wal_insert_lsn())");
  s.lsn_text = PQgetvalue(r.get(), 0, 0);
  s.segment = PQgetvalue(r.get(), 0, 1);
  s.lsn = parse_lsn(s.lsn_text);
  Result f = exec(c, fmt::format("SELECT count(*) FILTER (WHERE name > '{}'), count(*) "
                                 "FROM pg_ls_waldir() WHERE name ~ '^[0-9A-F]{{24}}$'",
                                 s.segment));
  s.future_segments = std::stoll(PQgetvalue(f.get(), 0, 0));
  s.segment_files = std::stoll(PQgetvalue(f.get(), 0, 1));
  if (walseg) {
    std::string v = value(c, "SELECT segments_created FROM walseg_status()");
    if (!v.empty()) s.walseg_created = std::stoll(v);
  }
  return s;
}

void mark(PGconn* c, const std::string& what, const std::string& label) {
  std::string msg = fmt::format("pg_walswitch: measure {} {}", what, label);
  // RAISE LOG reaches the server log whatever client_min_messages is.
  exec(c, fmt::format("DO $walswitch$ BEGIN RAISE LOG '%', {}; END $walswitch$",
                      quote_literal(c, msg)));
}

struct Sample {
  std::int64_t start_us;  // from the start of the measured window
  std::int64_t latency_us;
  std::uint64_t lsn;      // WAL insert position when the INSERT ran (RETURNING)
};

struct Worker {
  std::vector<Sample> samples;
  std::string error;
};

/// The measured window, in microseconds since the clients started. The control thread sets
/// it when the warm-up (and the optional CHECKPOINT after it) is over; until then both are
/// "never", so the clients keep committing.
struct Window {
  static constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
  std::atomic<std::int64_t> start_us{kNever};
  std::atomic<std::int64_t> end_us{kNever};
};

std::int64_t micros(Clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

void run_worker(const Options& o, int id, PGconn* c, Clock::time_point t_begin,
                const Window& window, std::atomic<bool>& abort, Worker& w) {
  try {
    Rng rng{0x5eed0000ULL + static_cast<std::uint64_t>(id) * 7919 +
            static_cast<std::uint64_t>(Clock::now().time_since_epoch().count())};
    std::string table = quote_ident(c, o.table);
    std::string prefix = fmt::format("INSERT INTO {} (c, payload) VALUES ({}, '\\x", table, id);
    std::string sql;
    sql.reserve(prefix.size() + 2 * static_cast<std::size_t>(o.payload_bytes) + 64);
    static constexpr char kHex[] = "0123456789abcdef";
    w.samples.reserve(static_cast<std::size_t>(std::max(1.0, o.duration_s + o.warmup_s) * 3000));
    while (!abort.load(std::memory_order_relaxed)) {
      auto t0 = Clock::now();
      if (micros(t0 - t_begin) >= window.end_us.load(std::memory_order_relaxed)) break;
      sql.assign(prefix);
      for (int i = 0; i < o.payload_bytes; i += 8) {
        std::uint64_t x = rng.next();
        for (int b = 0; b < 8 && i + b < o.payload_bytes; ++b, x >>= 8) {
          sql.push_back(kHex[(x >> 4) & 0xf]);
          sql.push_back(kHex[x & 0xf]);
        }
      }
      sql.append("'::bytea) RETURNING pg_current_wal_insert_lsn()");
      Result r(PQexec(c, sql.c_str()));
      auto t1 = Clock::now();
      if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK || PQntuples(r.get()) != 1)
        throw std::runtime_error(
            fmt::format("client {}: INSERT failed: {}", id, PQerrorMessage(c)));
      w.samples.push_back(
          {micros(t0 - t_begin), micros(t1 - t0), parse_lsn(PQgetvalue(r.get(), 0, 0))});
    }
  } catch (const std::exception& e) {
    w.error = e.what();
    abort = true;
  }
}

/// The library's nearest-rank percentile (walseg/latency_summary.h) of sorted values
/// (microseconds), in milliseconds, so this client and `walseg bench` define it alike.
double percentile_ms(const std::vector<std::int64_t>& sorted, double p) {
  const std::vector<double> us(sorted.begin(), sorted.end());
  return walseg::nearest_rank(us, p) / 1000.0;
}

void setup_table(const Options& o) {
  Conn c = connect(o.conninfo);
  std::string t = quote_ident(c.get(), o.table);
  exec(c.get(), fmt::format("DROP TABLE IF EXISTS {}", t));
  exec(c.get(), fmt::format("CREATE TABLE {} (c int NOT NULL, payload bytea NOT NULL)", t));
  // Out of line and never compressed: the random payload goes to WAL at its full size.
  exec(c.get(), fmt::format("ALTER TABLE {} ALTER COLUMN payload SET STORAGE EXTERNAL", t));
  exec(c.get(), "CHECKPOINT");
}

int run(const Options& o) {
  if (o.setup || o.setup_only) setup_table(o);
  if (o.setup_only) return 0;

  Conn control = connect(o.conninfo);
  bool walseg =
      value(control.get(), "SELECT count(*) FROM pg_extension WHERE extname = 'walseg'") == "1";
  std::int64_t seg_size = std::stoll(
      value(control.get(), "SELECT pg_size_bytes(current_setting('wal_segment_size'))"));
  std::vector<Conn> conns;
  for (int i = 0; i < o.clients; ++i) conns.push_back(connect(o.conninfo));

  auto t_begin = Clock::now();
  Window window;
  std::atomic<bool> abort{false};
  std::vector<Worker> workers(static_cast<std::size_t>(o.clients));
  std::vector<std::thread> threads;
  for (int i = 0; i < o.clients; ++i)
    threads.emplace_back(run_worker, std::cref(o), i, conns[static_cast<std::size_t>(i)].get(),
                         t_begin, std::cref(window), std::ref(abort),
                         std::ref(workers[static_cast<std::size_t>(i)]));

  Snapshot s0, s1;
  auto measure_start = t_begin;
  auto wall_start = std::chrono::system_clock::now();
  double checkpoint_s = -1;
  std::string control_error;
  try {
    std::this_thread::sleep_until(t_begin + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(o.warmup_s)));
    if (o.checkpoint && !abort) {
      auto c0 = Clock::now();
      exec(control.get(), "CHECKPOINT");
      checkpoint_s = std::chrono::duration<double>(Clock::now() - c0).count();
    }
    measure_start = Clock::now();
    wall_start = std::chrono::system_clock::now();
    window.start_us = micros(measure_start - t_begin);
    window.end_us = window.start_us + static_cast<std::int64_t>(o.duration_s * 1e6);
    if (!abort) {
      mark(control.get(), "start", o.label);
      s0 = snapshot(control.get(), walseg);
    }
  } catch (const std::exception& e) {
    control_error = e.what();
    abort = true;
  }
  for (auto& t : threads) t.join();
  auto t_done = Clock::now();
  try {
    if (!abort) {
      s1 = snapshot(control.get(), walseg);
      mark(control.get(), "end", o.label);
    }
  } catch (const std::exception& e) {
    control_error = e.what();
  }
  for (auto& w : workers)
    if (!w.error.empty()) throw std::runtime_error(w.error);
  if (!control_error.empty()) throw std::runtime_error(control_error);

  // The commits started inside the window, their start times made relative to it.
  std::vector<Sample> all;
  const std::int64_t w0 = window.start_us, w1 = window.end_us;
  for (auto& w : workers)
    for (const Sample& s : w.samples)
      if (s.start_us >= w0 && s.start_us < w1)
        all.push_back({s.start_us - w0, s.latency_us, s.lsn});
  std::vector<std::int64_t> lat;
  lat.reserve(all.size());
  for (auto& s : all) lat.push_back(s.latency_us);
  std::sort(lat.begin(), lat.end());
  double measured_s =
      std::max(o.duration_s, std::chrono::duration<double>(t_done - measure_start).count());
  double tps = static_cast<double>(lat.size()) / measured_s;
  double mean_ms = 0;
  for (auto v : lat) mean_ms += static_cast<double>(v);
  mean_ms = lat.empty() ? 0 : mean_ms / static_cast<double>(lat.size()) / 1000.0;

  std::uint64_t wal_bytes = s1.lsn > s0.lsn ? s1.lsn - s0.lsn : 0;
  double bytes_per_commit =
      lat.empty() ? 0.0 : static_cast<double>(wal_bytes) / static_cast<double>(lat.size());
  auto seg0 = s0.lsn / static_cast<std::uint64_t>(seg_size);
  auto seg1 = s1.lsn / static_cast<std::uint64_t>(seg_size);

  Json j;
  j["label"] = o.label;
  j["clients"] = o.clients;
  j["duration_s"] = o.duration_s;
  j["warmup_s"] = o.warmup_s;
  j["measured_s"] = measured_s;
  j["checkpoint_before_s"] = checkpoint_s >= 0 ? Json(checkpoint_s) : Json(nullptr);
  j["payload_bytes"] = o.payload_bytes;
  j["start_unix_ms"] =
      std::chrono::duration_cast<std::chrono::milliseconds>(wall_start.time_since_epoch()).count();
  // CLOCK_MONOTONIC seconds (steady_clock on Linux): lines up with kernel traces.
  j["start_monotonic_s"] = std::chrono::duration<double>(measure_start.time_since_epoch()).count();
  j["commits"] = lat.size();
  j["tps"] = tps;
  j["latency_ms"] = {{"mean", mean_ms},
                     {"p50", percentile_ms(lat, 0.50)},
                     {"p99", percentile_ms(lat, 0.99)},
                     {"p99.9", percentile_ms(lat, 0.999)},
                     {"p99.99", percentile_ms(lat, 0.9999)},
                     {"max", lat.empty() ? 0.0 : static_cast<double>(lat.back()) / 1000.0}};
  j["wal"] = {{"segment_size", seg_size},
              {"start_lsn", s0.lsn_text},
              {"end_lsn", s1.lsn_text},
              {"start_segment", s0.segment},
              {"end_segment", s1.segment},
              {"bytes", wal_bytes},
              {"bytes_per_commit", bytes_per_commit},
              {"segments_switched", seg1 - seg0},
              {"future_segments_start", s0.future_segments},
              {"future_segments_end", s1.future_segments},
              {"segment_files_start", s0.segment_files},
              {"segment_files_end", s1.segment_files}};
  if (walseg && s0.walseg_created && s1.walseg_created)
    j["walseg_created"] = *s1.walseg_created - *s0.walseg_created;
  else
    j["walseg_created"] = nullptr;

  // Segment switches as the clients saw them: the first commit (by start time) whose insert
  // position is in a segment after the previous commit's.
  auto seg_of = [&](std::uint64_t lsn) { return lsn / static_cast<std::uint64_t>(seg_size); };
  std::sort(all.begin(), all.end(),
            [](const Sample& a, const Sample& b) { return a.start_us < b.start_us; });
  std::vector<std::pair<std::uint64_t, std::int64_t>> switches;  // segno, first start_us
  for (auto& s : all)
    if (switches.empty() || seg_of(s.lsn) > switches.back().first)
      switches.emplace_back(seg_of(s.lsn), s.start_us);
  auto since_switch_s = [&](const Sample& s) -> Json {
    auto it = std::upper_bound(switches.begin(), switches.end(), s.start_us,
                               [](std::int64_t t, const auto& sw) { return t < sw.second; });
    if (it == switches.begin() || it - 1 == switches.begin()) return nullptr;  // not seen
    return static_cast<double>(s.start_us - (it - 1)->second) / 1e6;
  };
  Json jsw = Json::array();
  for (std::size_t i = 1; i < switches.size(); ++i)
    jsw.push_back(static_cast<double>(switches[i].second) / 1e6);
  j["switch_times_s"] = jsw;

  std::vector<Sample> slow = all;
  std::sort(slow.begin(), slow.end(),
            [](const Sample& a, const Sample& b) { return a.latency_us > b.latency_us; });
  if (slow.size() > static_cast<std::size_t>(std::max(0, o.slowest)))
    slow.resize(static_cast<std::size_t>(std::max(0, o.slowest)));
  Json js = Json::array();
  for (auto& s : slow)
    js.push_back({{"t_s", static_cast<double>(s.start_us) / 1e6},
                  {"ms", static_cast<double>(s.latency_us) / 1000.0},
                  {"segment_offset_kB", (s.lsn % static_cast<std::uint64_t>(seg_size)) / 1024},
                  {"since_switch_s", since_switch_s(s)}});
  j["slowest"] = js;

  auto seconds = static_cast<std::size_t>(std::ceil(measured_s));
  std::vector<std::int64_t> per_n(seconds + 1, 0), per_max(seconds + 1, 0);
  for (auto& s : all) {
    auto i = std::min<std::size_t>(static_cast<std::size_t>(s.start_us / 1000000), seconds);
    ++per_n[i];
    per_max[i] = std::max(per_max[i], s.latency_us);
  }
  Json jp = Json::array();
  for (std::size_t i = 0; i < seconds; ++i)
    jp.push_back({{"s", i},
                  {"commits", per_n[i]},
                  {"max_ms", static_cast<double>(per_max[i]) / 1000.0}});
  j["per_second"] = jp;

  if (!o.json_file.empty()) {
    std::ofstream f(o.json_file);
    f << j.dump(2) << '\n';
    if (!f) throw std::runtime_error(fmt::format("cannot write {}", o.json_file));
  }
  if (!o.samples_file.empty()) {
    std::ofstream f(o.samples_file);
    for (auto& s : all) f << s.start_us << ' ' << s.latency_us << '\n';
    if (!f) throw std::runtime_error(fmt::format("cannot write {}", o.samples_file));
  }
  if (o.format == "json") {
    std::cout << j.dump(2) << '\n';
  } else {
    const auto& l = j["latency_ms"];
    fmt::print("{}: {} clients, {:.1f} s measured, {} commits, {:.1f} TPS\n", o.label, o.clients,
               measured_s, lat.size(), tps);
    fmt::print("  commit latency ms: mean {:.3f}  p50 {:.3f}  p99 {:.3f}  p99.9 {:.3f}  "
               "p99.99 {:.3f}  max {:.3f}\n",
               l["mean"].get<double>(), l["p50"].get<double>(), l["p99"].get<double>(),
               l["p99.9"].get<double>(), l["p99.99"].get<double>(), l["max"].get<double>());
    fmt::print("  WAL: {} .. {} ({:.0f} bytes/commit), {} segment switches{}\n", s0.lsn_text,
               s1.lsn_text, j["wal"]["bytes_per_commit"].get<double>(), seg1 - seg0,
               j["walseg_created"].is_null()
                   ? std::string()
                   : fmt::format(", walseg created {}", j["walseg_created"].get<std::int64_t>()));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"pg_walswitch: commit latency of PostgreSQL across WAL segment switches"};
  app.add_option("--conninfo,-d", o.conninfo, "libpq connection string")->capture_default_str();
  app.add_option("--clients,-c", o.clients, "connections committing concurrently")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--duration,-T", o.duration_s, "measured seconds")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  app.add_option("--warmup,-w", o.warmup_s, "seconds of load before the measured window")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--payload", o.payload_bytes, "random bytes per row (one row per transaction)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_flag("--checkpoint", o.checkpoint,
               "issue CHECKPOINT at the end of the warm-up (the load goes on); the measured "
               "window starts when it returns");
  app.add_option("--table", o.table, "table to insert into")->capture_default_str();
  app.add_option("--label", o.label, "name of this run in the output and the log markers")
      ->capture_default_str();
  app.add_flag("--setup", o.setup, "(re)create the table and CHECKPOINT before the run");
  app.add_flag("--setup-only", o.setup_only, "only (re)create the table");
  app.add_option("--format", o.format, "output on stdout")
      ->check(CLI::IsMember({"plain", "json"}))
      ->capture_default_str();
  app.add_option("--json", o.json_file, "also write the JSON result to this file");
  app.add_option("--samples", o.samples_file,
                 "write every measured commit as 'start_us latency_us' to this file");
  app.add_option("--slowest", o.slowest, "how many slowest commits to list in the JSON")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "pg_walswitch: {}\n", e.what());
    return 1;
  }
}
