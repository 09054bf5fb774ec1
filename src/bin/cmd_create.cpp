// walseg create: install N segments by one init method, printing what each creation cost.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "bench_stop.h"
#include "command.h"
#include "made_directory.h"
#include "number_options.h"
#include "new_wal_directory.h"
#include "postgresql_dirs.h"
#include "settings_options.h"
#include "tool_util.h"
#include "walseg/error.h"
#include "walseg/log.h"
#include "walseg/segment_manager.h"
#include "walseg/segment_name.h"
#include "walseg/wal_control.h"
#include "walseg/wal_reader.h"

namespace walseg::tool {
namespace {

struct CreateArgs {
  std::string dir;
  std::string method;
  std::string segment_size;
  int count = 1;
  TimeLineId timeline = 1;
  SegNo start = 1;
  SettingsOptions settings;
};

// Before anything is made: every name this run would create must be free (of anything, not
// only of segments), and ahead of the WAL already in the directory, so that create can only
// add future segments, never a file below or inside the WAL (which a later reader or writer
// could take for its start, or write over records after it), and never stops half-way.
// "Ahead" is past both the end recovery finds and the last segment holding WAL of this
// system: a segment missing below that one is a gap in the WAL, and filling it would make
// the next writer resume there, over acknowledged records. A WAL recovery finds corrupt is
// refused whatever --start says, as Wal::open refuses to write to it.
void refuse_unless_ahead(const CreateArgs& a, SegmentManager& m, std::uint64_t segment_size) {
  const WalControl control = m.control();
  // An append-mode segment (none, fallocate_keep_size) is short: a full-size writer has no
  // use for it, and one that gets written is WAL only an append-mode writer can go on with.
  // It joins only a WAL whose last writer appended (a new WAL takes this run's mode).
  if (append_mode(m.config().init_method) && !control.append_mode)
    throw make_error(EINVAL, "create", a.dir,
                     fmt::format("cannot create {} segments in \"{}\": its WAL is written in full-size segments "
                                 "({}), and {} makes short segments for appends; nothing was created. Use a "
                                 "full-size method (e.g. --method zero_write)",
                                 to_string(m.config().init_method), a.dir, kControlFileName,
                                 to_string(m.config().init_method)));
  // The other way round: a WAL whose segments are made for appends stays so. The manager would
  // take a full-size method as the start of full-size writing and remove the append-mode
  // segments never written, but create only adds segments (the new-user trial: create
  // --method zero_write removed four 44-byte segments and took the WAL out of append mode).
  if (!append_mode(m.config().init_method) && control.append_mode)
    throw make_error(EINVAL, "create", a.dir,
                     fmt::format("cannot create {} segments in \"{}\": its WAL is written in append mode ({}), and {} "
                                 "makes full-size segments; nothing was created or removed. Use an append-mode "
                                 "method (--method none or fallocate_keep_size), or start a WAL of full-size "
                                 "segments in a new directory",
                                 to_string(m.config().init_method), a.dir, kControlFileName,
                                 to_string(m.config().init_method)));
  // What to suggest: past the WAL, the first --count numbers of this timeline none of whose
  // names is taken, so that following the advice never meets the next refusal (and a name
  // taken far ahead, the last number itself, does not rule out the free ones between: break-it
  // round 28 L1 was told to use a later timeline).
  std::set<SegNo> taken;
  for (const auto& e : m.directory().list())
    if (auto n = parse_segment_file_name(e.name, segment_size); n && n->timeline == a.timeline) taken.insert(n->segno);
  auto suggestion = [&](SegNo first_free) {
    SegNo n = first_free;
    for (auto it = taken.lower_bound(n); it != taken.end() && *it - n < static_cast<SegNo>(a.count);
         it = taken.lower_bound(n))
      n = *it + 1;
    return n;
  };
  // Never a number that is itself refused (break-it round 19: after the last segment number,
  // "use --start 17592186044416" named one past it).
  const SegNo last_segno = UINT64_MAX / segment_size;
  auto use_start = [&](SegNo first_free, const char* how) {
    const SegNo n = suggestion(first_free);
    if (n > last_segno)
      return fmt::format("no later segment number exists with {} segments (the last is {}): use a later --timeline",
                         format_size(segment_size), last_segno);
    // Decimal, where segment names are hex: both, so that 223 is not read as 0x223 (break-it
    // round 38 L3).
    return fmt::format("use --start {}{} (--start is decimal: {} is the segment named \"{}\")", n, how, n,
                       segment_file_name(a.timeline, n, segment_size));
  };
  // Another timeline's segments are ahead of the WAL too: a switch to it branches where the WAL
  // ends, so below that they can never be written (break-it round 16 L5: `--timeline 2 --start
  // 0` on a timeline-1 WAL was made, and so could be 1,000,000 of them). An older timeline is
  // history.
  if (a.timeline < control.timeline)
    throw make_error(EINVAL, "create", a.dir,
                     fmt::format("timeline {} is older than the WAL's in \"{}\" (timeline {}, as {} says): its "
                                 "segments can never be written; nothing was created",
                                 a.timeline, a.dir, control.timeline, kControlFileName));
  // Made ahead for a later timeline switch, which is allowed; said, since ls alone showed it
  // (new-user trial 6: `create --timeline 2` on a timeline-1 WAL made them without a word).
  if (a.timeline > control.timeline)
    log(LogLevel::kWarning,
        fmt::format("the WAL in \"{}\" is on timeline {}: segments of timeline {} are used only once it switches to "
                    "that timeline (until then writers and recovery pass them by)",
                    a.dir, control.timeline, a.timeline));
  {
    const WalReaderOptions ro = reader_options_for(control);
    const RecoveryResult end = find_end_of_wal(m.directory(), ro);
    if (end.corruption)
      throw make_error(ENOTRECOVERABLE, "create", a.dir,
                       fmt::format("cannot create segments in \"{}\": {}. walseg makes no segment inside a WAL "
                                   "it cannot read to its end: nothing was created",
                                   a.dir, describe_corruption(end, control.durable_lsn)));
    const std::optional<SegNo> last_wal = WalReader::open(m.directory(), ro).last_segment_with_wal();
    const SegNo oldest = control.oldest_lsn / segment_size;
    SegNo first_free = end.records > 0 ? segno_of_lsn_end(end.end_lsn, segment_size) + 1 : oldest;
    if (last_wal) first_free = std::max(first_free, *last_wal + 1);
    if (a.start < first_free) {
      std::string where = end.records > 0 ? fmt::format("it ends at {}", format_lsn(end.end_lsn))
                                          : fmt::format("it starts at {}", format_lsn(control.oldest_lsn));
      if (last_wal && *last_wal + 1 == first_free)
        where += fmt::format(", and segment \"{}\" holds WAL of it",
                             segment_file_name(control.timeline, *last_wal, segment_size));
      throw make_error(EINVAL, "create", a.dir,
                       fmt::format("segment {}{} is not ahead of the WAL in \"{}\" ({}); nothing was created. "
                                   "create makes future segments only: {}",
                                   a.start,
                                   a.timeline == control.timeline ? "" : fmt::format(" of timeline {}", a.timeline),
                                   a.dir, where, use_start(first_free, " or higher")));
    }
  }
  for (int i = 0; i < a.count; ++i) {
    const std::string name = segment_file_name(a.timeline, a.start + static_cast<SegNo>(i), segment_size);
    if (!m.directory().exists(name)) continue;
    throw make_error(EEXIST, "create", m.directory().path_of(name),
                     fmt::format("segment \"{}\" already exists in \"{}\"; nothing was created or replaced. "
                                 "Segments of timeline {} go up to {}: {}",
                                 name, a.dir, a.timeline, *taken.rbegin(), use_start(a.start, ", the first free from there")));
  }
}

void run_create(const CreateArgs& a) {
  refuse_wal_in_postgresql_directory(a.dir);
  refuse_new_wal_beside_other_files(a.dir);
  std::uint64_t option_size = 0;
  const SettingsOptions settings = with_segment_size_option(a.settings, a.segment_size, &option_size);
  if (option_size != 0) refuse_segment_size_option_against_wal(a.segment_size, option_size, a.dir);
  Config cfg = load_config(settings, a.dir);
  if (!a.method.empty()) cfg.init_method = parse_method_option(a.method);
  check_segment_size(cfg.segment_size_bytes);
  // The last segment must have an LSN: past 2^64 bytes a name would wrap to a low segment.
  const SegNo last_segno = UINT64_MAX / cfg.segment_size_bytes;
  if (a.start > last_segno || static_cast<SegNo>(a.count - 1) > last_segno - a.start)
    throw std::invalid_argument(fmt::format("--start {} with --count {} goes past the last segment of {} segments "
                                            "({}): use a lower --start or --count",
                                            a.start, a.count, format_size(cfg.segment_size_bytes), last_segno));
  // auto: the segment manager's choice for this directory, as a writer's would be (the new-user
  // trial: a settings file with auto made plain `walseg create` a usage error); the table's
  // `method used` column names it.
  // Like every writer of a WAL directory: one process at a time, the settings checked
  // against the WAL there, leftovers of a crash dealt with, and files of others left alone.
  SegmentManager::Options mo;
  mo.config = cfg;
  mo.background = false;
  mo.new_timeline = a.timeline;
  mo.init_method_option = "--method";  // the new-user trial: create's advice named the setting
  // Refused before the manager changes anything (a new WAL's control file, leftovers).
  mo.before_changes = [&a, &cfg](SegmentManager& m) { refuse_unless_ahead(a, m, cfg.segment_size_bytes); };
  // SIGINT, SIGTERM, SIGHUP or a closed stdout stop the run between segments: the one being
  // filled is finished and installed, so nothing is left under a temp name (a kill mid-fill
  // left xlogtemp.<pid> for the next writer to clear), and the run says how far it got.
  StopSignals stop;
  MadeDirectory made(a.dir);
  refuse_new_wal_beside_other_files(made.directory(), a.dir);  // as opened: the path may lead elsewhere now
  SegmentManager m(made.open(), mo);
  for (int i = 0; i < a.count; ++i) {
    check_stdout_reader();
    if (const int signo = stop_signal(); signo != 0) {
      // A closed stdout is no signal the user sent (round 23 L1: it said "interrupted by SIGPIPE").
      const std::string why = stop_reason(signo);
      std::fprintf(stderr, "walseg create: %s after %d of %d segments; each made is complete and "
                   "installed, none was begun after it\n",
                   why.c_str(), i, a.count);
      exit_status() = 128 + signo;
      return;
    }
    const SegNo segno = a.start + static_cast<SegNo>(i);
    CreateReport r;
    try {
      r = m.create_now(a.timeline, segno);
    } catch (...) {
      // A new WAL in which not even the first segment could be made is taken back, and the
      // directory too if this run made it (the new-user trial: a full disk left a new
      // walseg.control behind, which fixed the next run's segment size).
      if (i == 0 && m.abandon_new_wal()) throw;
      made.keep();
      throw;
    }
    made.keep();
    if (stdout_closed()) continue;  // its reader is gone: the loop's check stops
    std::string row;
    if (i == 0) row = fmt::format("{:<26} {:<16} {:>12} {:>14} {:>10}\n", "segment", "method used", "size", "allocated", "total us");
    row += fmt::format("{:<26} {:<16} {:>12} {:>14} {:>10}\n", r.name, to_string(r.alloc.used), r.alloc.size_bytes,
                       r.alloc.allocated_bytes, r.times.total_us);
    if (std::fputs(row.c_str(), stdout) < 0 || std::fflush(stdout) != 0) {
      if (errno == EPIPE) {
        request_stop(SIGPIPE);
        continue;
      }
      // Named as write's summary is (break-it round 27 L2: "cannot write to file" named no file).
      throw std::system_error(errno, std::generic_category(),
                              fmt::format("could not write the table to stdout after {} of {} segments, each made "
                                          "complete and installed",
                                          i + 1, a.count));
    }
  }
}

RegisterCommand reg("create", [](CLI::App& app) {
  auto args = std::make_shared<CreateArgs>();
  auto* cmd = app.add_subcommand("create", "create segments durably by one init method");
  cmd->add_option("--dir", args->dir, "WAL directory (created if missing)")->required()->check(dir_given());
  cmd->add_option("--method", args->method, "init method (default: walseg.init_method)")
      ->check(value_given());
  cmd->add_option("--count", args->count, "number of segments (default 1)")->transform(integer_in(1, 1000000));
  cmd->add_option("--segment-size", args->segment_size,
                  size_option_help("segment size, e.g. 16MB (default: walseg.segment_size)"))
      ->check(value_given());
  cmd->add_option("--timeline", args->timeline, "timeline id (default 1)")->transform(integer_in(1, 0xFFFFFFFF));
  // Its bound depends on the segment size (checked with it): the help says that, not the
  // loosest bound the parser takes (2^56 - 1, which no segment size allows).
  cmd->add_option("--start", args->start, "first segment number, in decimal; file names show it in hex (default 1)")
      ->transform(integer_in(0, 0xFFFFFFFFFFFFFF).description("0..2^64/segment size - 1"));
  add_settings_options(*cmd, args->settings);
  cmd->callback([args] { run_create(*args); });
});

}  // namespace
}  // namespace walseg::tool
