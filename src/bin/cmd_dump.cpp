// walseg dump / walseg recover: read a WAL directory back.
#include <optional>
#include <cstdio>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.h"
#include "number_options.h"
#include "settings_options.h"
#include <fcntl.h>
#include <sys/stat.h>

#include "walseg/dir_lock.h"
#include "walseg/dir_scan.h"
#include "walseg/directory.h"
#include "walseg/file.h"
#include "walseg/segment_name.h"
#include "walseg/wal_format.h"
#include "walseg/error.h"
#include "walseg/wal_control.h"
#include "walseg/wal_reader.h"

namespace walseg::tool {
namespace {

struct ReadArgs {
  std::string dir;
  std::string start;
  std::uint64_t limit = 0;
  TimeLineId timeline = 0;  ///< 0: the control file's
  SettingsOptions settings;
};

// The WAL's control file says where it starts and what its sizes are; nothing is learnt from
// file names. A directory with segment files but no control file is not read as if empty.
std::optional<WalReaderOptions> reader_options(const ReadArgs& a, std::uint64_t segment_size_given) {
  std::optional<WalControl> control = read_control(a.dir);
  if (!control) {
    const Directory dir = Directory::open(a.dir);
    for (const auto& e : dir.list())
      if (parse_segment_file_name(e.name, kMinSegmentSizeBytes))
        throw make_error(EINVAL, "read WAL", a.dir,
                         fmt::format("directory \"{}\" holds segment files (\"{}\" among them) but no {}: "
                                     "walseg cannot tell which WAL they belong to or where it starts. {}",
                                     a.dir, e.name, kControlFileName, no_control_advice(dir)));
    return std::nullopt;
  }
  warn_if_not_the_wals_segment_size(segment_size_given, "walseg.segment_size", control->segment_size_bytes);
  WalReaderOptions o = reader_options_for(*control);
  if (a.timeline != 0 && a.timeline != control->timeline) {
    // Another timeline's WAL: a mistyped number is not a damaged WAL, and the control file's
    // durable LSN is the current timeline's (an older one ends at its switch point, below it).
    std::set<TimeLineId> present;
    for (const auto& e : Directory::open(a.dir).list())
      if (auto n = parse_segment_file_name(e.name, control->segment_size_bytes)) present.insert(n->timeline);
    // Status 1, as "no WAL in D" and pg_waldump's "could not find any WAL file": 2 is what
    // recover and dump say for corruption, and a script must tell the two apart.
    if (!present.count(a.timeline))
      throw make_error(ENOENT, "read WAL", a.dir,
                       fmt::format("--timeline {}: \"{}\" holds no segment of timeline {} (its WAL is on "
                                   "timeline {}, as {} says; segments here are of timeline{} {})",
                                   a.timeline, a.dir, a.timeline, control->timeline, kControlFileName,
                                   present.size() == 1 ? "" : "s", fmt::join(present, ", ")));
    o.timeline = a.timeline;
    o.durable_lsn.reset();
  }
  return o;
}

// A directory without walseg.control (nor segments) holds no WAL: an error, as pg_waldump's
// "could not locate WAL file", and not "end of WAL: none ... corruption: no" with status 0 (the
// new-user trial: a mistyped --dir passed a script's recovery check).
Error no_wal_here(const std::string& dir) {
  return make_error(ENOENT, "read WAL", dir,
                    fmt::format("no WAL in \"{}\": it has no {}, so it is not a walseg WAL directory, or no "
                                "writer got as far as making one there (nothing was acknowledged in it); give "
                                "--dir the directory walseg write made",
                                dir, kControlFileName));
}

// Reading while a writer works on the directory would see its half-written tail as its end:
// a shared lock keeps writers out but not other readers, and writes nothing (a read-only
// copy or snapshot is read without one).
DirLock lock_for_reading(const std::string& path) {
  Directory dir = Directory::open(path);
  return DirLock::acquire_shared(dir);
}

// One line per record, in pg_waldump's layout.
void run_dump(const ReadArgs& a) {
  // The reader takes its sizes from walseg.control; bad settings still refuse.
  const std::uint64_t given = segment_size_set_in(load_registry(a.settings));
  DirLock lock = lock_for_reading(a.dir);
  const auto options = reader_options(a, given);
  if (!options) throw no_wal_here(a.dir);
  std::optional<Lsn> lsn;
  if (!a.start.empty()) {
    lsn = parse_lsn(a.start);
    if (!lsn) throw std::invalid_argument(fmt::format("invalid LSN \"{}\" for --start (expected X/X)", a.start));
    // Before the WAL's start there is nothing of it to read: a position typed wrong, not a
    // segment missing from the WAL.
    if (options->start_lsn && *lsn < *options->start_lsn)
      throw std::invalid_argument(fmt::format("--start {} is before the start of the WAL in \"{}\", {} ({}'s oldest "
                                              "LSN): use --start {} or later, or leave --start out",
                                              format_lsn(*lsn), a.dir, format_lsn(*options->start_lsn),
                                              kControlFileName, format_lsn(*options->start_lsn)));
  }
  WalReader r = WalReader::open(a.dir, *options);
  if (lsn) {
    // pg_waldump's XLogFindNextRecord and its line, also on stdout, also not for a segment start.
    const auto first = r.find_next_record(*lsn);
    // Nothing begins at or after it: said first, so that the end of WAL below, before the
    // position asked for, is not read as a record there (the new-user trial). Not an error: a
    // position in the zeros ahead of the end is WAL not yet written (case C27); pg_waldump
    // says "could not find a valid record after" and exits 1.
    if (!first && !r.stop().corruption) {
      // One end, not two (the new-user trial: then "end of WAL: invalid magic number ... LSN" at
      // the position asked for, past the end just given).
      const RecoveryResult whole = find_end_of_wal(a.dir, *options);
      const Lsn end = whole.end_lsn;
      // The WAL may end before the position because it is damaged there, with valid WAL
      // after: that is corruption, as recover and a plain dump say (break-it round 18 L5).
      if (whole.corruption) {
        fmt::print("no record at or after {}: the WAL cannot be read past {}\n", format_lsn(*lsn), format_lsn(end));
        fmt::print("end of WAL: {}, before {}; {}\n", format_lsn(end), format_lsn(*lsn), whole.stop_reason);
        exit_status() = 2;
        return;
      }
      fmt::print("no record at or after {}: not yet written (the WAL ends at {})\n", format_lsn(*lsn), format_lsn(end));
      fmt::print("end of WAL: {}, before {}\n", format_lsn(end), format_lsn(*lsn));
      return;
    }
    if (first && *first != *lsn && *lsn % r.segment_size_bytes() != 0)
      fmt::print("first record is after {}, at {}, skipping over {} byte{}\n", format_lsn(*lsn),
                 format_lsn(*first), *first - *lsn, *first - *lsn == 1 ? "" : "s");
  }
  WalRecord rec;
  std::uint64_t n = 0;
  while ((a.limit == 0 || n < a.limit) && r.next(&rec)) {
    ++n;
    // xl_tot_len: record header, data header (short up to 255 bytes), payload.
    std::size_t p = rec.payload.size();
    std::size_t tot = kRecordHeaderBytes + (p == 0 ? 0 : p <= 255 ? 2 : 5) + p;
    // PostgreSQL 15's pg_waldump line for a record of a custom resource manager it has no
    // module for (XLogDumpDisplayRecord): rec_len is the total less block data (none here),
    // LSNs as %X/%08X, and its description of an unknown record.
    fmt::print("rmgr: {:<11} len (rec/tot): {:6}/{:6}, tx: {:10}, lsn: {:X}/{:08X}, prev {:X}/{:08X}, "
               "desc: UNKNOWN ({:X}) rmid: {}\n",
               fmt::format("custom{:03}", rec.rmid), tot, tot, rec.xid, rec.lsn >> 32, rec.lsn & 0xFFFFFFFF,
               rec.prev_lsn >> 32, rec.prev_lsn & 0xFFFFFFFF, rec.info & 0xF0, rec.rmid);
  }
  if (a.limit == 0 || n < a.limit) {
    fmt::print("end of WAL: {}\n", describe(r.stop()));
    if (r.stop().corruption) exit_status() = 2;  // as recover, for what dump has just found
  } else {
    // Said, so that a script reading the last line never takes the limit for the end.
    fmt::print("stopped after {} record{} (--limit {})\n", n, n == 1 ? "" : "s", a.limit);
  }
}

// Where reading stopped at the start of a segment whose file is not this WAL's (someone's file
// put at the next segment name, which a writer refuses to replace), the invalid magic number
// alone hid the cause (break-it round 21): said, in the writer's words. Empty when it is not so.
std::string foreign_segment_note(const ReadArgs& a, const WalReaderOptions& o, const RecoveryResult& res) {
  const std::optional<WalControl> control = read_control(a.dir);
  if (!control || res.stop_page == 0 || segment_offset(res.stop_page, control->segment_size_bytes) != 0) return "";
  const std::string name =
      segment_file_name(o.timeline, segno_of_lsn(res.stop_page, control->segment_size_bytes), control->segment_size_bytes);
  try {
    const Directory dir = Directory::open(a.dir);
    struct stat st{};
    if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "";
    std::optional<std::string> why;
    if (!S_ISREG(st.st_mode)) {
      // A link, FIFO or directory there said nothing at all (break-it round 23 M5).
      why = fmt::format("it is {}, not a regular file", S_ISLNK(st.st_mode)   ? "a symbolic link"
                                                        : S_ISDIR(st.st_mode) ? "a directory"
                                                        : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                                                : "a special file");
    } else {
      bool ready = false;
      why = foreign_reason(dir, name, static_cast<std::uint64_t>(st.st_size), *control, &ready);
    }
    if (!why) return "";
    // This WAL's own file that a writer may not use as it is (links, size): moving it out would
    // take its records away (break-it round 25 H2: following that advice lost acknowledged
    // records past the durable point).
    if (const auto back = give_back_advice(dir, name, st, *control))
      return fmt::format("segment \"{}\" holds this WAL (its first page says so), but a writer may not use it as it "
                         "is: {}. Do not move it out of the directory, which would take its records away; {}",
                         name, *why, *back);
    // With WAL after it, moving it out does not let writing go on: the WAL has a hole there
    // (break-it round 23 M5: the note advised it, and write still refused).
    const std::string what_to_do =
        res.corruption ? "WAL goes on after it, so this is damage, not the end of the WAL: put this WAL's own segment "
                         "back under that name (from a backup or an archive), as for any missing segment"
                       : "A writer stops there and never replaces it: move it out of the directory to let writing "
                         "go on";
    return fmt::format("segment \"{}\" is not walseg's: it has a segment's name but walseg did not make it for this "
                       "WAL: {}. {}",
                       name, *why, what_to_do);
  } catch (const Error&) {
    return "";
  }
}

void run_recover(const ReadArgs& a) {
  const std::uint64_t given = segment_size_set_in(load_registry(a.settings));
  DirLock lock = lock_for_reading(a.dir);
  const auto options = reader_options(a, given);
  if (!options) throw no_wal_here(a.dir);
  RecoveryResult res = find_end_of_wal(a.dir, *options);
  fmt::print("end of WAL: {}\n", format_lsn(res.end_lsn));
  fmt::print("last record: {}\n", format_lsn(res.last_record_lsn));
  fmt::print("records: {}\n", res.records);
  fmt::print("stopped: {}\n", res.stop_reason);
  fmt::print("corruption: {}\n", res.corruption ? "yes" : "no");
  if (const std::string note = foreign_segment_note(a, *options, res); !note.empty()) fmt::print("note: {}\n", note);
  // "end of WAL" is where reading stopped; with corruption that is not where the WAL ends, and
  // a script cutting the WAL there would lose what follows (new-user trial 16).
  if (res.corruption)
    fmt::print("note: reading stopped at damage, not at the end of the WAL{}: do not cut or overwrite the WAL at {}; "
               "copy the directory away and restore the damaged segment from a backup\n",
               options->durable_lsn ? fmt::format(" ({} says records are durable up to {})", kControlFileName,
                                                  format_lsn(*options->durable_lsn))
                                    : std::string(),
               format_lsn(res.end_lsn));
  if (res.corruption) exit_status() = 2;
}

void add_common(CLI::App* cmd, ReadArgs& a) {
  cmd->add_option("--dir", a.dir, "WAL directory")->required()->check(dir_given());
  cmd->add_option("--timeline", a.timeline, "timeline to read (default: the WAL's, from walseg.control)")
      ->transform(integer_in(1, 0xFFFFFFFF));
  add_settings_options(*cmd, a.settings);
}

RegisterCommand dump("dump", [](CLI::App& app) {
  auto a = std::make_shared<ReadArgs>();
  auto* cmd = app.add_subcommand("dump", "print the records of a WAL directory, as pg_waldump does");
  add_common(cmd, *a);
  cmd->add_option("--start", a->start, "first LSN (X/X; default: start of the WAL)")
      ->check(value_given());
  cmd->add_option("--limit", a->limit, "stop after N records (0: no limit)")->transform(integer_in(0, UINT64_MAX));
  cmd->callback([a] { run_dump(*a); });
});

RegisterCommand recover("recover", [](CLI::App& app) {
  auto a = std::make_shared<ReadArgs>();
  auto* cmd = app.add_subcommand("recover", "find the end of WAL after a crash; exit 2 on corruption");
  add_common(cmd, *a);
  cmd->callback([a] { run_recover(*a); });
});

}  // namespace
}  // namespace walseg::tool
