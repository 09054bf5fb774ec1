// walseg bench: the main job. Measures, on the filesystem of --dir, what each init method costs
// to create a segment and what commits into such a segment cost, next to PostgreSQL's own fills,
// and ends with a verdict a DBA can act on. Output is modelled on pg_test_fsync.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench.h"
#include "bench_advice.h"
#include "bench_log.h"
#include "bench_space.h"
#include "bench_tables.h"
#include "bench_verdict.h"
#include "command.h"
#include "number_options.h"
#include "output_file.h"
#include "postgresql_dirs.h"
#include "settings_options.h"
#include "walseg/auto_method.h"
#include "walseg/error.h"
#include "walseg/guc_definitions.h"
#include "walseg/segment_name.h"

namespace walseg::tool {
namespace {

const std::vector<std::string> kPhases = {"create", "write", "switch", "append", "commit"};

struct BenchArgs {
  std::string dir = ".";
  bool keep = false;
  std::string segment_size;
  int segments = 10;
  std::string write_size = "8kB";
  std::string write_bytes = "4MB";
  bool write_bytes_given = false;  ///< --write-bytes was on the command line
  bool full = false;
  std::vector<std::string> methods;
  std::vector<std::string> phases;
  std::string json;
  std::vector<std::string> clients;
  double commit_seconds = 3;
  std::string switch_segment_size = "1MB";
  int switch_boundaries = 64;
  SettingsOptions settings;
  std::string device_of;
};

// The switch phase's segment manager counters, as its "Segment manager during the switch
// phase" lines print them.
nlohmann::json manager_json(const ManagerStats& st, std::uint64_t writer_switches) {
  auto lat = [](const LatencySummary& l) {
    return nlohmann::json{{"count", l.count}, {"p50_us", l.p50_us}, {"p99_us", l.p99_us}, {"max_us", l.max_us},
                          {"total_us", l.total_us}};
  };
  return {{"method", to_string(st.method)}, {"created_by_method", st.created_by_method},
          {"recycled", st.recycled}, {"removed", st.removed}, {"stalls", st.stalls}, {"stall", lat(st.stall)},
          {"create", lat(st.create)}, {"fill", lat(st.fill)}, {"fsync", lat(st.fsync)},
          {"dir_fsync", lat(st.dir_fsync)}, {"recycle", lat(st.recycle)}, {"writer_switches", writer_switches}};
}

nlohmann::json row_json(const Row& r, const FsInfo& fs) {
  nlohmann::json j = {{"phase", r.phase}, {"method", r.method}, {"io", r.io}, {"n", r.lat.n},
          {"p10_us", r.lat.p10}, {"median_us", r.lat.median}, {"p90_us", r.lat.p90}, {"p99_us", r.lat.p99},
          {"p999_us", r.lat.p999}, {"max_us", r.lat.max}, {"mean_us", r.lat.mean},
          {"ops_per_s", r.ops_per_s}, {"mb_per_s", r.mb_per_s},
          {"allocated_bytes", r.allocated_bytes}, {"method_used", r.method_used},
          {"note", r.note}, {"reference", r.reference},
          {"syscalls", r.syscalls ? nlohmann::json(*r.syscalls) : nlohmann::json(nullptr)},
          {"fs_type", fs.type_name}, {"fs_mount_options", fs.mount_options}};
  if (r.manager) j["manager"] = manager_json(*r.manager, r.writer_switches);
  if (!r.config.empty()) j["config"] = r.config;
  if (!r.kind.empty()) j["kind"] = r.kind;
  if (r.clients > 0) j["clients"] = r.clients;
  if (r.phase == "append") j["created_while_measuring"] = r.created_while_measuring;
  if (r.phase == "write" || r.phase == "append") add_device_json(j, r.device);
  return j;
}

BenchSettings make_settings(const BenchArgs& a) {
  BenchSettings s;
  const SettingsOptions settings = with_segment_size_option(a.settings, a.segment_size, &s.segment_size);
  const guc::Registry registry = load_registry(settings);
  s.config = guc::make_config(registry);
  for (const guc::ShowRow& r : registry.show_all()) s.shown_settings.push_back({r.name, r.value, r.source});
  if (a.segment_size.empty()) s.segment_size = s.config.segment_size_bytes;
  check_segment_size(s.segment_size);
  s.segments = a.segments;
  s.write_size = parse_size_option("--write-size", a.write_size);
  s.write_bytes = a.full ? s.segment_size : parse_size_option("--write-bytes", a.write_bytes);
  if (s.write_size == 0 || s.write_size > s.segment_size)
    throw std::invalid_argument(fmt::format("--write-size must be between 1 byte and the segment size ({})", format_size(s.segment_size)));
  for (const auto& m : split_list(a.methods)) {
    // auto is what the verdict works out from the others, not one to measure: not offered.
    const std::optional<InitMethod> parsed = enum_from_name<InitMethod>(m, kInitMethodNames);
    if (!parsed || *parsed == InitMethod::kAuto) {
      std::vector<std::string> names;
      for (auto n : kInitMethodNames)
        if (n != to_string(InitMethod::kAuto)) names.emplace_back(n);
      throw std::invalid_argument(fmt::format("--methods: {}; the methods to measure are: {} (auto is the verdict "
                                              "worked out from them)",
                                              parsed ? std::string("auto is not a method to measure")
                                                     : fmt::format("invalid init method \"{}\"", m),
                                              fmt::join(names, ", ")));
    }
    InitMethod im = *parsed;
    if (std::find(s.methods.begin(), s.methods.end(), im) == s.methods.end()) s.methods.push_back(im);
  }
  if (s.methods.empty())
    for (std::size_t i = 0; i < kInitMethodNames.size(); ++i)
      if (static_cast<InitMethod>(i) != InitMethod::kAuto) s.methods.push_back(static_cast<InitMethod>(i));
  s.progress = ::isatty(2) != 0;
  if (!a.clients.empty()) s.clients.clear();
  for (const auto& c : split_list(a.clients)) {
    std::uint64_t n = 0;
    if (const std::string why = parse_integer(c, 1, 1024, &n); !why.empty())
      throw std::invalid_argument(fmt::format("--clients: \"{}\": {}", c, why));
    s.clients.push_back(static_cast<int>(n));
  }
  if (s.write_bytes < s.write_size)
    throw std::invalid_argument(fmt::format("--write-bytes ({}{}) must be at least --write-size ({}): the write phase "
                                            "writes --write-bytes into each segment in writes of --write-size; give "
                                            "a larger --write-bytes, or --full",
                                            a.write_bytes, a.write_bytes_given ? "" : ", the default",
                                            format_size(s.write_size)));
  s.commit_seconds = a.commit_seconds;
  s.switch_segment_size = parse_segment_size_option("--switch-segment-size", a.switch_segment_size);
  check_segment_size(s.switch_segment_size);
  s.switch_boundaries = a.switch_boundaries;
  s.device_dir = a.device_of;
  return s;
}

// What the phases produced, for the JSON file.
struct BenchResults {
  std::string started_at;  // ISO 8601 UTC, when the first phase started
  std::vector<std::string> phases;  // as run, each once
  FsInfo fs;
  std::vector<Row> rows;
  nlohmann::json verdict;
};

// "2026-12-01T23:28:38Z".
std::string utc_now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  char buf[32] = "";
  if (::gmtime_r(&t, &tm) != nullptr) std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// walseg.init_method = auto for the switch and commit phases, probed once in the scratch
// directory, so that every configuration and client count runs one method (the new-user trial:
// the switch phase's unpooled and pooled runs each probed, and ran zero_write and
// posix_fallocate, so the pool's effect was mixed with the method's).
// The verdict's own line about auto reuses this probe (a second one chose differently at times,
// and cost as much again).
AutoDecision auto_for_wal_phases(const BenchSettings& s, Scratch& scratch) {
  Directory d = scratch.make_dir("auto-wal-phases");
  const AutoDecision a = choose_init_method(d, s.config);
  fmt::print("walseg.init_method = auto: {} for the switch and commit phases, probed once for all of them (its "
             "numbers: the LOG line)\n",
             to_string(a.method));
  return a;
}

BenchResults run_phases(BenchSettings s, const std::vector<std::string>& phases, Scratch& scratch) {
  BenchResults res;
  res.started_at = utc_now_iso8601();
  res.phases = phases;
  res.fs = fs_info(scratch.root());
  print_header(s, phases, scratch.root(), res.fs);
  s.row_done = [&s](const Row& r) { print_row(s, r); };  // as pg_test_fsync: each row when measured
  BenchSettings wal_s = s;
  const bool wal_phases = std::any_of(phases.begin(), phases.end(), [](const std::string& p) { return p == "switch" || p == "commit"; });
  std::optional<AutoDecision> probed;
  if (wal_phases && s.config.init_method == InitMethod::kAuto) {
    probed = auto_for_wal_phases(s, scratch);
    wal_s.config.init_method = probed->method;
  }
  for (const auto& p : phases) {
    print_phase_head(s, p);
    std::optional<BenchLogWarningsOnly> quiet;
    if (p == "switch" || p == "commit" || p == "append") quiet.emplace();
    auto got = p == "create"   ? bench_create(s, scratch)
               : p == "write"  ? bench_write(s, scratch)
               : p == "switch" ? bench_switch(wal_s, scratch)
               : p == "append" ? bench_append(s, scratch)
                               : bench_commit(wal_s, scratch);
    res.rows.insert(res.rows.end(), got.begin(), got.end());
    print_phase_foot(s, res.fs, res.rows, p);
    if (p == "write" || p == "append") print_device_rows(res.rows, p);
  }
  res.verdict = verdict(s, res.fs, res.rows);
  if (res.verdict.contains("both")) {
    res.verdict["auto"] = auto_choice(scratch, s, res.verdict, probed);
    res.verdict["what_to_set"] = what_to_set(s, res.fs, res.rows, res.verdict);
  } else if (nlohmann::json pool = pool_to_set(s, res.rows); !pool.is_null()) {
    res.verdict = nlohmann::json{{"what_to_set", std::move(pool)}};
  }
  check_stop();
  return res;
}

// --json replaces its file's content when the run ends: never one of a WAL's (break-it round 8
// F5: a segment or walseg.control became JSON, every acknowledged record lost; OutputFile
// refuses those), nor any file but a document an earlier bench wrote (round 9 L1: any JSON
// document was replaced, a user's included).
constexpr off_t kMaxJsonBytes = off_t{64} << 20;

std::optional<std::string> is_bench_json(int fd, off_t size) {
  const std::string refused = "exists and is not a JSON document walseg bench wrote (one with \"tool\": \"walseg "
                              "bench\"), so walseg will not overwrite it: give another path";
  if (size > kMaxJsonBytes) return refused;
  std::string text(static_cast<std::size_t>(size), '\0');
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fmt::format("could not be read: {}", errno_text(errno));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_object() && doc.value("tool", "") == "walseg bench") return std::nullopt;
  return refused;
}

// Removes what bench made, unless --keep, and says what became of the scratch directory. After
// a stop signal (signo != 0) it says so on stderr: stdout may be the closed pipe that stopped it,
// and a closed pipe is not worth a word unless something was left. When anything was left the
// message names each thing and where, and never says the directory was removed.
void finish_scratch(const BenchArgs& a, Scratch& scratch, int signo) {
  const std::string why = signo != 0 ? fmt::format("interrupted by {}; ", signal_name(signo)) : "";
  if (a.keep) {
    if (signo != 0) fmt::print(stderr, "walseg bench: {}kept {}\n", why, scratch.root());
    else fmt::print("\nkept {}\n", scratch.root());
    return;
  }
  scratch.remove("");
  if (const auto left = scratch.left(); !left.empty())
    fmt::print(stderr,
               "walseg bench: {}left in the scratch directory \"{}\", untouched, what walseg bench did not "
               "make: {}\n",
               why, scratch.root(), fmt::join(left, "; "));
  else if (!scratch.removed())
    fmt::print(stderr, "walseg bench: {}the scratch directory \"{}\" is still there\n", why, scratch.root());
  else if (signo != 0 && signo != SIGPIPE)
    fmt::print(stderr, "walseg bench: {}removed the scratch directory \"{}\"\n", why, scratch.root());
  else if (signo == 0)  // the new-user trial: a run that ended well did not say where its files went
    fmt::print("\nremoved the scratch directory {} (--keep keeps it)\n", scratch.root());
}

// After an error: the cleanup must not replace the error being reported.
void finish_after_error(const BenchArgs& a, Scratch& scratch) noexcept {
  try {
    finish_scratch(a, scratch, 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "walseg bench: could not remove the scratch directory \"%s\": %s\n",
                 scratch.root().c_str(), e.what());
  }
}

nlohmann::json results_json(const BenchSettings& s, const BenchResults& res) {
  nlohmann::json out;
  out["tool"] = "walseg bench";
  // Which build measured what, when and on which kernel: results are compared across runs.
  out["version"] = WALSEG_VERSION;
  out["started_at"] = res.started_at;
  struct utsname u{};
  out["kernel"] = ::uname(&u) == 0 ? nlohmann::json(std::string(u.sysname) + " " + u.release) : nlohmann::json();
  out["segment_size"] = s.segment_size;
  out["write_size"] = s.write_size;
  out["write_bytes"] = std::min(s.write_bytes, s.segment_size);
  out["segments"] = s.segments;
  out["sync_method"] = to_string(s.config.sync_method);
  // What the run was asked for, whole (the new-user trial: methods, phases, clients and the
  // settings in effect were missing, so two files could not be told apart).
  nlohmann::json methods = nlohmann::json::array(), walseg = nlohmann::json::object();
  for (InitMethod m : s.methods) methods.push_back(to_string(m));
  for (const auto& [name, value, source] : s.shown_settings) walseg[name] = {{"value", value}, {"source", source}};
  out["settings"] = {{"phases", res.phases},
                     {"methods", methods},
                     {"segments", s.segments},
                     {"segment_size", s.segment_size},
                     {"write_size", s.write_size},
                     {"write_bytes", std::min(s.write_bytes, s.segment_size)},
                     {"clients", s.clients},
                     {"commit_seconds", s.commit_seconds},
                     {"switch_segment_size", s.switch_segment_size},
                     {"switch_boundaries", s.switch_boundaries},
                     {"walseg", walseg}};
  const FsInfo& fs = res.fs;
  out["filesystem"] = {{"type", fs.type_name}, {"block_size", fs.block_size},
                       {"copy_on_write", fs.copy_on_write}, {"mount_point", fs.mount_point},
                       {"mount_options", fs.mount_options}, {"device", fs.device}};
  out["rows"] = nlohmann::json::array();
  for (const Row& r : res.rows) out["rows"].push_back(row_json(r, fs));
  out["verdict"] = res.verdict;
  return out;
}

// --json FILE (the file opened at the start), or --json - for stdout (json_fd: stdout as it was
// before the tables were sent to stderr, so that stdout carries the JSON document alone).
void write_json(std::optional<OutputFile>& file, int json_fd, const nlohmann::json& out) {
  const std::string text = out.dump(2) + "\n";
  if (file) {
    file->replace_content(text);
    return;
  }
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(json_fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(fmt::format("could not write the JSON to stdout: {}", errno_text(errno)));
    done += static_cast<std::size_t>(n);
  }
}

// --dir, or the nearest directory above it that exists (Scratch::create makes the rest, on
// that directory's filesystem unless a mount point is made on the way, which it never is).
std::string existing_ancestor(const std::string& dir) {
  std::filesystem::path p(dir);
  std::error_code ec;
  while (!std::filesystem::exists(p, ec)) {
    if (!p.has_parent_path() || p.parent_path() == p) return ".";  // "a" of a relative "a/b"
    p = p.parent_path();
  }
  return p.string();
}

// Not in PostgreSQL's pg_wal or data directory, or below them (the new-user trial: `--dir
// $PGDATA/pg_wal` beside a running server made its scratch directory there, and a default
// run's 1.4GB could fill the disk PostgreSQL PANICs on). walseg_bench() is the way to measure
// there: it keeps max_wal_size free for the server.
void refuse_postgresql_directories(const std::string& dir) {
  if (const auto pg = postgresql_directory_of(dir))
    throw std::invalid_argument(describe("--dir", dir, *pg) +
                                ": bench's files there would take the server's space, and a full disk makes "
                                "PostgreSQL stop; measure that filesystem from a directory outside the data "
                                "directory (a new one beside it), or with the extension's walseg_bench(), which "
                                "keeps max_wal_size free");
}

void run_bench(const BenchArgs& a) {
  BenchSettings s = make_settings(a);
  std::vector<std::string> phases;
  for (const auto& p : a.phases.empty() ? kPhases : split_list(a.phases)) {
    if (std::find(kPhases.begin(), kPhases.end(), p) == kPhases.end())
      throw std::invalid_argument(fmt::format("unknown phase \"{}\"; valid phases are: {}", p, fmt::join(kPhases, ", ")));
    // Each phase once, in the order first given (as --methods): a repeat is no second round.
    if (std::find(phases.begin(), phases.end(), p) == phases.end()) phases.push_back(p);
  }
  // --json -: the document alone on stdout, the tables and progress on stderr.
  int json_fd = -1;
  if (a.json == "-") {
    std::fflush(stdout);
    json_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (json_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
      throw std::runtime_error(fmt::format("could not set up --json - (stdout): {}", errno_text(errno)));
  }
  // Opened now and kept: a file that cannot be written should not cost the whole run first, and
  // a name re-pointed meanwhile is not followed at the end (break-it round 9 F1: a symbolic link
  // put there mid-run had a segment truncated into JSON).
  std::optional<OutputFile> json_file;
  if (!a.json.empty() && json_fd < 0) json_file.emplace(OutputFile::open("--json", a.json, "", 0, is_bench_json));
  const std::string& parent = a.dir;
  // A run refused before it starts leaves no empty --json behind (break-it round 23 M6: one
  // refused for lack of space did).
  try {
    // Before anything is made: a full filesystem otherwise fails mid-phase, minutes in.
    // As create and ls refuse them (the new-user trial: '' meant the current directory, and a
    // WAL directory was accepted, though a --json file in one is refused).
    if (a.dir.empty()) throw std::invalid_argument("--dir '': give a directory (. for the current one)");
    if (struct stat st{}; ::stat((a.dir + "/" + kControlFileName).c_str(), &st) == 0)
      throw std::invalid_argument(fmt::format("--dir \"{}\" is a WAL directory (it holds {}): bench makes its scratch "
                                              "directory elsewhere; give its parent or another directory on the same "
                                              "filesystem",
                                              a.dir, kControlFileName));
    refuse_postgresql_directories(a.dir);
    const FsInfo where = fs_info(existing_ancestor(parent));
    // /proc, /sys and their kind: "not enough free space" would send the user looking for space.
    if (where.total_bytes == 0)
      throw std::runtime_error(fmt::format("\"{}\" is on a {} filesystem, which holds no files' data (statvfs: 0 blocks "
                                           "in all): give --dir a directory on the filesystem to measure",
                                           parent, where.type_name.empty() ? "pseudo" : where.type_name));
    check_free_space(bench_space_need(s, phases), where.free_bytes, parent);
  } catch (...) {
    if (json_file) json_file->remove_if_unwritten();
    throw;
  }
  StopSignals stop;  // before any thread is started, so that every thread inherits the block
  Scratch scratch = [&] {
    try {
      return Scratch::create(parent);
    } catch (...) {
      if (json_file) json_file->remove_if_unwritten();
      throw;
    }
  }();
  BenchResults res;
  int signo = 0;
  try {
    res = run_phases(s, phases, scratch);
  } catch (const BenchInterrupted& e) {
    signo = e.signo();
  } catch (const std::system_error& e) {
    // fmt's EPIPE from stdout: its reader is gone (`walseg bench | head -1`), and SIGPIPE is
    // blocked, so this is where the shell's SIGPIPE would have been.
    if (e.code().value() != EPIPE) {
      finish_after_error(a, scratch);
      if (json_file) json_file->remove_if_unwritten();
      throw;
    }
    signo = SIGPIPE;
  } catch (...) {
    finish_after_error(a, scratch);
    if (json_file) json_file->remove_if_unwritten();
    throw;
  }
  check_stdout_reader();
  if (signo == 0) signo = stop_signal();  // one that arrived after the last check
  finish_scratch(a, scratch, signo);
  if (signo != 0) {
    if (json_file) json_file->remove_if_unwritten();
    // Said, since the file named is missing or as it was (new-user trial 17: an interrupted
    // run's --json file was silently not there).
    if (!a.json.empty())
      std::fprintf(stderr, "walseg bench: --json %s not written: an interrupted run writes no results (the tables "
                   "above are all it measured)\n",
                   a.json == "-" ? "-" : ("\"" + a.json + "\"").c_str());
    exit_status() = 128 + signo;  // as a shell reports a process killed by that signal
    return;
  }
  if (!a.json.empty()) write_json(json_file, json_fd, results_json(s, res));
}

RegisterCommand reg("bench", [](CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd = app.add_subcommand("bench", "measure segment creation and commit cost per init method");
  cmd->add_option("--dir", a->dir, "where to make the scratch directory walseg-bench-XXXXXX (default: .)");
  cmd->add_flag("--keep", a->keep, "keep the scratch directory and what is left in it at the end: the create phase's segments (README: --keep)");
  cmd->add_option("--segment-size", a->segment_size,
                  size_option_help("segment size (default: walseg.segment_size, 16MB)"))
      ->check(value_given());
  cmd->add_option("--segments", a->segments, "segments per method and phase (default 10)")->transform(integer_in(1, 100000));
  cmd->add_option("--write-size", a->write_size, size_option_help("bytes per commit in the write phase (default 8kB)"))
      ->check(value_given());
  cmd->add_option("--write-bytes", a->write_bytes,
                  size_option_help("bytes written per segment in the write phase (default 4MB)"))
      ->check(value_given());
  cmd->add_flag("--full", a->full, "write whole segments in the write phase (instead of --write-bytes)")
      ->excludes(cmd->get_option("--write-bytes"));
  cmd->add_option("--methods", a->methods, "init methods to measure in the create, write and append phases (default: all; switch and commit use walseg.init_method)")
      ->check(list_items_given());
  cmd->add_option("--phases", a->phases, "phases to run: create, write, switch, append, commit (default: all)")
      ->check(list_items_given());
  cmd->add_option("--json", a->json, "also write every row as JSON to this file (-: to stdout, the tables then go to stderr)")
      ->check(file_named());
  // Split by split_list, not CLI11's delimiter, which drops empty items ("1,,8").
  cmd->add_option("--clients", a->clients, "phase commit: client counts (default 1,8)")->check(list_items_given());
  cmd->add_option("--commit-seconds", a->commit_seconds, "phase commit: seconds per row (default 3)")
      ->transform(seconds_in(0, false, 86400));
  cmd->add_option("--switch-segment-size", a->switch_segment_size,
                  size_option_help("phase switch: segment size (default 1MB)"))
      ->check(value_given());
  cmd->add_option("--switch-boundaries", a->switch_boundaries, "phase switch: boundaries per configuration (default 64, at least 8)")
      ->transform(integer_in(8, 100000));
  cmd->add_option("--device-of", a->device_of,
                  "phases write and append: read the block-device counters of the filesystem under this "
                  "directory instead of --dir's (e.g. a FUSE pass-through mount's backing directory)")
      ->check(value_given())
      ->check(CLI::ExistingDirectory);
  add_settings_options(*cmd, a->settings);
  cmd->callback([a, cmd] {
    a->write_bytes_given = cmd->get_option("--write-bytes")->count() > 0;
    run_bench(*a);
  });
});

}  // namespace

Row latency_row(std::string phase, std::string method, std::vector<double>& us,
                std::uint64_t bytes_per_op, double wall_seconds) {
  Row row;
  row.phase = std::move(phase);
  row.method = method;
  row.method_used = std::move(method);
  row.lat = summarize(us);
  if (wall_seconds <= 0) {
    // One operation at a time (create, write): from the median, the statistic of the table's
    // other columns, so that ops/s reads as 1 / median and not as 1 / a mean no table prints.
    row.ops_per_s = row.lat.median > 0 ? 1e6 / row.lat.median : 0;
    row.mb_per_s = row.ops_per_s * static_cast<double>(bytes_per_op) / 1e6;
    return row;
  }
  // Concurrent clients (append, commit): throughput over the run's wall time.
  const double n = static_cast<double>(row.lat.n);
  row.ops_per_s = n / wall_seconds;
  row.mb_per_s = n * static_cast<double>(bytes_per_op) / wall_seconds / 1e6;
  return row;
}

void progress(const BenchSettings& s, const std::string& phase, const std::string& method, int done, int total) {
  check_stop();
  if (s.progress) fmt::print(stderr, "\r\033[K{}: {} {}/{}", phase, method, done, total);
}

}  // namespace walseg::tool
