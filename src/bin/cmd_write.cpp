// walseg write: K clients append records and wait for each to be flushed (group commit),
// printing commits/s and commit latency; --ack-log records each acknowledgement (clients.h).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "bench_stop.h"
#include "clients.h"
#include "command.h"
#include "made_directory.h"
#include "number_options.h"
#include "output_file.h"
#include "new_wal_directory.h"
#include "postgresql_dirs.h"
#include "settings_options.h"
#include "tool_util.h"
#include "walseg/dir_scan.h"
#include "walseg/wal.h"
#include "walseg/wal_format.h"

namespace walseg::tool {
namespace {

struct WriteArgs {
  std::string dir;
  std::uint64_t records = 1000;
  std::string record_size = "100";
  std::string segment_size;  ///< --segment-size, as create's: "" for walseg.segment_size
  int clients = 1;
  double seconds = 0;
  std::string ack_log;
  SettingsOptions settings;
};

// The clients' payload buffers together (one record each): bounded, so that a size typed
// wrong is a usage error, not an allocation failure after the directory was opened.
// --record-size 0 is a record without data (pg_waldump_tool_test.sh writes them).
constexpr std::uint64_t kMaxPayloadBuffersBytes = std::uint64_t{4} << 30;

// An ack log under one of the WAL's own names (walseg.control, a segment) would write into
// the WAL it checks (break-it round 6 F5: every record unreadable afterwards).
// The ack log is appended to as it is named, so it must not be a file of the WAL: one inside
// the WAL directory, by any path to it (a symbolic link, a WAL directory still to be made:
// break-it round 7 F6), is refused, and so is one whose directory does not exist, before the
// open changes anything (round 7 L2).
void refuse_ack_log_in_the_wal(const WriteArgs& a) {
  if (a.ack_log.empty()) return;
  // Elsewhere "-" is stdout (bench --json -), but the log is appended to and read back by the
  // checker, and stdout carries the summary: a file named "-" would surprise everyone.
  if (a.ack_log == "-")
    throw std::invalid_argument("--ack-log -: the ack log must be a file, which walseg_powercut_check reads back "
                                "after a crash (stdout carries the summary); give a path, e.g. --ack-log ./acks");
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path log = fs::weakly_canonical(fs::absolute(a.ack_log), ec);
  const fs::path wal = ec ? fs::path() : fs::weakly_canonical(fs::absolute(a.dir), ec);
  // /dev/stdout of a pipe resolves to "pipe:[N]" (round 25 L: only "No such file or directory").
  if (ec)
    throw std::invalid_argument(fmt::format("--ack-log \"{}\": could not resolve the path ({}); the ack log must be a "
                                            "regular file, e.g. --ack-log ./acks",
                                            a.ack_log, ec.message()));
  struct stat wal_st{}, parent_st{};
  const bool same_dir = ::stat(wal.c_str(), &wal_st) == 0 && ::stat(log.parent_path().c_str(), &parent_st) == 0 &&
                        wal_st.st_dev == parent_st.st_dev && wal_st.st_ino == parent_st.st_ino;  // a bind mount
  if (log.parent_path() == wal || log == wal || same_dir)
    throw std::invalid_argument(fmt::format("--ack-log \"{}\" is in the WAL directory \"{}\", where every name may "
                                            "be one of walseg's: put the ack log elsewhere",
                                            a.ack_log, a.dir));
  struct stat st{};
  if (::stat(log.parent_path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::invalid_argument(fmt::format("--ack-log \"{}\": its directory \"{}\" does not exist", a.ack_log,
                                            log.parent_path().string()));
}

// An existing ack log is appended to only if it is one: its first line is a start line and
// the complete lines at its end are start or ack lines, each as this command writes them (break-
// it round 13 F3: any file whose first six bytes were "start " was appended to, a user's notes
// among them). A line cut short at the very end (a crash mid-write) is allowed.
bool is_ack_log_line(std::string_view line) {
  static const std::regex start_line("start [0-9]{1,20} [0-9]{1,20} [0-9]{1,10}");
  static const std::regex ack_line("ack [0-9]{1,20} [0-9]{1,10} [0-9]{1,20} [0-9]{1,20}");
  if (std::regex_match(line.begin(), line.end(), start_line) || std::regex_match(line.begin(), line.end(), ack_line))
    return true;
  // A run that started after a line a crash cut short (or zeros a power cut left) appended
  // its start line to that line's remains.
  const std::size_t at = line.rfind("start ");
  return at != std::string_view::npos && at > 0 && std::regex_match(line.begin() + static_cast<std::ptrdiff_t>(at), line.end(), start_line);
}

std::optional<std::string> is_ack_log(int fd, off_t size) {
  const std::string refused =
      "exists and is not an ack log (its first line is not a start line, or its last lines are not start and ack "
      "lines as walseg write writes them): walseg will not append to it; give another path";
  auto read_at = [fd](off_t off, std::size_t n) {
    std::string b(n, '\0');
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd, b.data() + got, n - got, off + static_cast<off_t>(got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    b.resize(got);
    return b;
  };
  constexpr std::size_t kLook = 4096;
  const std::string head = read_at(0, kLook);
  const std::size_t nl = head.find('\n');
  if (nl == std::string::npos || !is_ack_log_line(std::string_view(head).substr(0, nl))) return refused;
  const off_t tail_at = size > static_cast<off_t>(kLook) ? size - static_cast<off_t>(kLook) : 0;
  std::string tail = read_at(tail_at, kLook);
  // Whole lines only: from the first newline on when the tail starts mid-file, up to the last.
  std::size_t from = tail_at > 0 ? tail.find('\n') + 1 : 0;
  const std::size_t last_nl = tail.rfind('\n');
  if (from == 0 && tail_at > 0) return refused;  // no newline in 4 kB: not lines of ours
  if (last_nl == std::string::npos || last_nl < from) return std::nullopt;  // only the checked first line
  for (std::size_t at = from; at <= last_nl;) {
    const std::size_t e = tail.find('\n', at);
    if (!is_ack_log_line(std::string_view(tail).substr(at, e - at))) return refused;
    at = e + 1;
  }
  return std::nullopt;
}

void run_write(const WriteArgs& a) {
  refuse_wal_in_postgresql_directory(a.dir);
  refuse_new_wal_beside_other_files(a.dir);
  const std::uint64_t size = parse_size_option("--record-size", a.record_size, 0, kMaxRecordPayloadBytes);
  if (size * static_cast<std::uint64_t>(a.clients) > kMaxPayloadBuffersBytes)
    throw std::invalid_argument(fmt::format("--record-size {} with --clients {} needs {} bytes of record buffers, "
                                            "more than the {} walseg write allows: use fewer clients or "
                                            "smaller records",
                                            a.record_size, a.clients, size * static_cast<std::uint64_t>(a.clients),
                                            format_size(kMaxPayloadBuffersBytes)));
  std::uint64_t option_size = 0;
  const SettingsOptions settings = with_segment_size_option(a.settings, a.segment_size, &option_size);
  if (option_size != 0) refuse_segment_size_option_against_wal(a.segment_size, option_size, a.dir);
  Config cfg = load_config(settings, a.dir);
  check_segment_size(cfg.segment_size_bytes);
  // Before the open, which takes a writer epoch and may make the directory: a refused run
  // changes nothing.
  if (size > WalWriter::max_payload_bytes(cfg))
    throw std::invalid_argument(fmt::format("--record-size {}: a record of {} bytes does not fit in walseg.wal_buffers "
                                            "({} bytes; a record takes at most {} bytes there): use smaller records "
                                            "or a larger walseg.wal_buffers",
                                            a.record_size, size, cfg.wal_buffers_bytes,
                                            WalWriter::max_payload_bytes(cfg)));
  refuse_ack_log_in_the_wal(a);
  // Opened once, before the WAL, and checked as opened: a name re-pointed during the open was
  // followed to another WAL's control file (break-it round 9 F2).
  std::optional<OutputFile> ack_file;
  if (!a.ack_log.empty()) ack_file.emplace(OutputFile::open("--ack-log", a.ack_log, a.dir, O_APPEND, is_ack_log));
  // SIGINT, SIGTERM, SIGHUP or a closed stdout end the run after the commits in progress, with
  // the summary and a clean end, as --seconds would (issue 17); before any thread starts.
  StopSignals stop;
  MadeDirectory made(a.dir);
  std::unique_ptr<Wal> wal;
  try {
    refuse_new_wal_beside_other_files(made.directory(), a.dir);  // as opened: the path may lead elsewhere now
    wal = Wal::open(made.open(), cfg);
    if (ack_file) ack_file->refuse_in(a.dir);  // a WAL directory made or moved where the log's directory was
  } catch (...) {
    // A refused run leaves no empty --ack-log of its own making (break-it round 21: a busy
    // lock, a linked walseg.control or an unusable --dir left one).
    if (ack_file) ack_file->remove_if_unwritten();
    throw;
  }
  made.keep();
  WalWriter& w = wal->writer();
  std::optional<AckLog> ack_log;
  if (ack_file) ack_log.emplace(std::move(*ack_file));
  // An error (a full disk, say) still gets the summary of what was acknowledged before it
  // (the new-user trial: ENOSPC ended a run with the error alone; recover later found 510
  // records).
  ClientRun run = run_clients(w, size, a.clients, a.records, a.seconds, 0, ack_log ? &*ack_log : nullptr,
                              [] { return stop_signal() != 0; }, false);
  // A clean end, as PostgreSQL's shutdown checkpoint: from now on a record missing below
  // here is damage, not a torn tail.
  // Its failure (a full disk) is the run's error, after the summary of what was acknowledged
  // (break-it round 34 L3: the error alone was printed).
  if (!run.failure) {
    try {
      wal->checkpoint();
    } catch (...) {
      run.failure = std::current_exception();
    }
  }
  double elapsed = run.seconds;
  Summary s = summarize(run.us);
  WalWriterStats st = w.stats();
  std::string summary = fmt::format("{} commits of {} bytes by {} client{} in {:.2f} s: {:.0f} commits/s\n", s.n,
                                    size, a.clients, a.clients == 1 ? "" : "s", elapsed,
                                    static_cast<double>(s.n) / elapsed);
  // No commit, no latency: zeros would read as measured.
  summary += s.n == 0 ? std::string("commit latency us: none (no commit)\n")
                      : fmt::format("commit latency us: p50 {:.0f}, p99 {:.0f}, max {:.0f}\n", s.median, s.p99, s.max);
  summary += fmt::format("io_method {}, sync_method {}: {} syncs for {} commits ({} flushes covered by another's "
                         "sync, {} syncs waited up to walseg.commit_delay {} us for their group), {} segment "
                         "switches, {} short writes completed\n",
                         to_string(cfg.io_method), to_string(cfg.sync_method), st.syncs, s.n, st.flush_waits,
                         st.commit_delays, cfg.commit_delay_us, st.segment_switches, st.short_writes);
  summary += fmt::format("WAL now ends at {}\n", format_lsn(w.flushed_lsn()));
  // A closed stdout (`| head`) is a stop like a signal, not an error: the summary then goes
  // to stderr, as bench's does, so that what was acknowledged is still said somewhere.
  check_stdout_reader();
  if (!stdout_closed() && (std::fputs(summary.c_str(), stdout) < 0 || std::fflush(stdout) != 0)) {
    if (errno != EPIPE) {
      // What was acknowledged is still said (on stderr) before the error (stdout on a full disk).
      const int e = errno;
      std::fputs(summary.c_str(), stderr);
      throw std::system_error(e, std::generic_category(), "could not write the summary to stdout");
    }
    request_stop(SIGPIPE);
  }
  if (stdout_closed()) std::fputs(summary.c_str(), stderr);
  if (run.failure) {
    std::fprintf(stderr, "walseg write: stopped by the error below after %llu acknowledged commits; each is in the "
                 "WAL, which ends at %s\n",
                 static_cast<unsigned long long>(s.n), format_lsn(w.flushed_lsn()).c_str());
    std::rethrow_exception(run.failure);
  }
  if (const int signo = stop_signal(); signo != 0) {
    // As create's: a closed stdout is no signal the user sent.
    const std::string why = stop_reason(signo);
    std::fprintf(stderr, "walseg write: %s after %llu acknowledged commits; each is in the WAL, "
                 "which ends at %s\n",
                 why.c_str(), static_cast<unsigned long long>(s.n),
                 format_lsn(w.flushed_lsn()).c_str());
    exit_status() = 128 + signo;
  }
}

RegisterCommand reg("write", [](CLI::App& app) {
  auto a = std::make_shared<WriteArgs>();
  auto* cmd = app.add_subcommand("write", "append records with K clients, each commit flushed (group commit)");
  cmd->add_option("--dir", a->dir, "WAL directory (created if missing)")->required()->check(dir_given());
  cmd->add_option("--records", a->records, "records to write in total (default 1000; ignored with --seconds)")
      ->transform(integer_in(1, std::uint64_t{1} << 40));
  cmd->add_option("--record-size", a->record_size, size_option_help("payload per record, e.g. 100 or 8kB (default 100)"))
      ->check(value_given());
  // As create's, ls's and bench's (the new-user trial: `write --segment-size 1MB` was "not expected").
  cmd->add_option("--segment-size", a->segment_size,
                  size_option_help("segment size of a new WAL, e.g. 1MB (default: walseg.segment_size, or an existing "
                                   "WAL's own)"))
      ->check(value_given());
  cmd->add_option("--clients", a->clients, "concurrent clients (default 1)")->transform(integer_in(1, 1024));
  cmd->add_option("--seconds", a->seconds, "run for this long instead of --records (default 0: use --records)")
      ->transform(seconds_in(0, true, 86400))
      // Below the clock's use here a run would make no commit and still succeed (break-it
      // round 27 L4: --seconds 1e-9 ran 0 commits, exit 0).
      ->check(CLI::Validator(
          [](std::string& text) {
            const double v = std::strtod(text.c_str(), nullptr);
            return v > 0 && v < 0.001 ? std::string("--seconds below 0.001 (a millisecond) runs no commit: give at "
                                                    "least 0.001, or 0 to write --records")
                                      : std::string();
          },
          ""));
  cmd->add_option("--ack-log", a->ack_log,
                  "append to FILE a start line (run, resume LSN, clients) and a line per acknowledged commit "
                  "(run, client, sequence, end LSN), for crash checks (README: the ack log)")
      ->check(file_named());
  add_settings_options(*cmd, a->settings);
  cmd->callback([a] { run_write(*a); });
});

}  // namespace
}  // namespace walseg::tool
