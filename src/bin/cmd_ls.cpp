// walseg ls: the directory's control file (as pg_controldata prints pg_control), then every
// entry with its size, allocated bytes and what walseg takes it for: a segment of this WAL
// (holding WAL, recycled, preallocated), a temp leftover, PostgreSQL's other files, or not
// walseg's and why.
#include <algorithm>
#include <fcntl.h>
#include <sys/stat.h>

#include <string_view>

#include <fmt/format.h>

#include "command.h"
#include "number_options.h"
#include "settings_options.h"
#include "tool_util.h"
#include "walseg/auto_method.h"
#include "walseg/dir_lock.h"
#include "walseg/dir_scan.h"
#include "walseg/guc_definitions.h"
#include "walseg/directory.h"
#include "walseg/error.h"
#include "walseg/file.h"
#include "walseg/own_files.h"
#include "walseg/segment_name.h"
#include "walseg/wal_control.h"

namespace walseg::tool {
namespace {

struct LsArgs {
  std::string dir;
  std::string segment_size;
  SettingsOptions settings;
};

// What a non-regular file is, in the words of ls -l's first letter.
std::string file_type(const struct stat& st) {
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "a device";
}

// What a first page names (decode_first_page, as the directory scan reads it): a long page
// header or walseg's ready stamp carries the system and segment size (as pg_waldump learns
// the segment size from the first page).
std::optional<FirstPage> first_page(const Directory& dir, const std::string& name) {
  try {
    File f = File::open_at(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    std::byte b[kReadyStampBytes] = {};
    if (f.pread(b, sizeof b, 0) != sizeof b) return std::nullopt;
    const std::optional<FirstPage> p = decode_first_page(b);
    if (!p || !is_valid_segment_size(p->header.segment_size_bytes)) return std::nullopt;
    return p;
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::string page_text(const FirstPage& p) {
  return fmt::format("{} system {}, {} segments", p.ready_stamp ? "preallocated by walseg for" : "WAL of",
                     p.header.system_id, format_size(p.header.segment_size_bytes));
}

// When no control file says whose a segment-named file is. "" for zeros or anything else.
std::string header_says(const Directory& dir, const std::string& name) {
  const auto p = first_page(dir, name);
  return p ? fmt::format("; its first page says {} (no usable walseg.control here to check it against)", page_text(*p)) : "";
}

// walseg 0.1's moved-aside files: whether the file is this WAL's is what a user bringing it
// back must know (the new-user trial: 1MB of random bytes under such a name was "walseg's").
std::string describe_broken(const Directory& dir, const std::string& name, const struct stat& st,
                            const std::optional<WalControl>& control) {
  const std::string what = "a name walseg 0.1 gave a segment-named file it moved aside; walseg never uses or removes it";
  const auto p = first_page(dir, name);
  if (!p) return what + "; its first page is no WAL page: not a segment to bring back";
  if (!control) return fmt::format("{}; its first page says {} (no usable walseg.control here to check it against)", what, page_text(*p));
  if (p->header.system_id != control->system_id || p->header.segment_size_bytes != control->segment_size_bytes)
    return fmt::format("{}; its first page says {}: not this WAL's", what, page_text(*p));
  if (static_cast<std::uint64_t>(st.st_size) != control->segment_size_bytes)
    return fmt::format("{}; its first page is this WAL's, but it is {} bytes, not {}: not a whole segment", what,
                       st.st_size, control->segment_size_bytes);
  // The name to bring it back under is the one its first page says, and only if it is free (the
  // new-user trial: ls did not say whether the name was taken, which README made the condition).
  const std::string own = segment_file_name(p->header.timeline, p->header.page_addr / control->segment_size_bytes,
                                            control->segment_size_bytes);
  if (own != name.substr(0, kSegmentNameLength))
    return fmt::format("{}; its first page is this WAL's, but it is segment {}'s (timeline {}, LSN {}), not {}'s: "
                       "not a segment to bring back under this name",
                       what, own, p->header.timeline, format_lsn(p->header.page_addr), name.substr(0, kSegmentNameLength));
  if (struct stat taken{}; ::fstatat(dir.fd(), own.c_str(), &taken, AT_SYMLINK_NOFOLLOW) == 0)
    return fmt::format("walseg's: {}; its first page is this WAL's ({}), but the name {} is taken: compare the two "
                       "(walseg dump) before replacing either",
                       what, page_text(*p), own);
  // The command itself, not a pointer to README (new-user trial 16).
  return fmt::format("walseg's: {}; its first page is this WAL's ({}) and the name {} is free: with no writer "
                     "running, bring it back with mv '{}' '{}', then run walseg recover",
                     what, page_text(*p), own, dir.path_of(name), dir.path_of(own));
}

// Without a control file, nothing says what segment size the directory's WAL has: a file of
// another valid segment size is labelled by its size (bench --keep's rows, a WAL of 1MB
// segments), and --segment-size is suggested only for sizes no segment can have.
std::string describe_without_control(const Directory& dir, const std::string& name, const WalFileInfo& info,
                                     const struct stat& st, const Config& cfg) {
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (!S_ISREG(st.st_mode)) return fmt::format("not walseg's ({}, not a regular file)", file_type(st));
  switch (info.kind) {
    case WalFileKind::kSegmentFile: {
      const std::string head = [&] {
        const std::string h = header_says(dir, name);
        return h.empty() ? std::string("; whose is unknown") : h;
      }();
      if (size == cfg.segment_size_bytes)
        return fmt::format("segment name, timeline {}{}", info.timeline, head);
      if (is_valid_segment_size(size))
        return fmt::format("segment name, timeline {}, the size of a {} segment{}", info.timeline,
                           format_size(size), head);
      if (size == 0 || head.rfind("; its first page", 0) == 0)
        // Not "as none leaves it" for 0 bytes: none stamps 44 bytes (the new-user trial read
        // bench's unstamped create-phase files so).
        return fmt::format("segment name, timeline {}, {} bytes ({}){}", info.timeline, size,
                           size == 0 ? "empty: a segment of an append-mode method before its ready stamp, as bench's "
                                       "create phase leaves them, or a file cut short"
                                     : "short, as an append-mode method (init_method none, fallocate_keep_size) "
                                       "makes a segment: its ready stamp, then what was appended",
                           head);
      return fmt::format("segment name, {} bytes (not {}: another segment size? try --segment-size)", size,
                         cfg.segment_size_bytes);
    }
    case WalFileKind::kTempFile: return "temp leftover";
    case WalFileKind::kForeign: return "not walseg's";
    default: return std::string(to_string(info.kind));
  }
}

// A segment of this WAL: holding its own records, an earlier segment's (recycled), or nothing
// yet (a ready stamp); below the oldest segment still needed it is retired at the next
// checkpoint.
std::string describe_ours(const Directory& dir, const std::string& name, const WalFileInfo& info,
                          std::uint64_t size, bool ready, const WalControl& c) {
  std::string what = "segment of this WAL";
  File f = File::open_at(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  std::byte b[kLongPageHeaderBytes] = {};
  f.pread(b, sizeof b, 0);
  const Lsn own = lsn_of_segment(info.segno, 0, c.segment_size_bytes);
  const Lsn addr = decode_page_header(b).page_addr;
  // The writer's rule, over what the writer's survey keeps as this WAL's segments.
  auto still_here = [&](SegNo s) {
    const std::string other = segment_file_name(info.timeline, s, c.segment_size_bytes);
    struct stat st{};
    bool other_ready = false;
    try {
      return ::fstatat(dir.fd(), other.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
             !not_walsegs_to_change(st) &&
             !foreign_reason(dir, other, static_cast<std::uint64_t>(st.st_size), c, &other_ready);
    } catch (const Error&) {
      return false;
    }
  };
  if (auto copy = copy_of_a_live_segment(dir, SegmentName{info.timeline, info.segno}, c, still_here))
    return fmt::format("not walseg's: {} (a writer refuses the directory until it is moved out)", *copy);
  if (ready)
    what += ", preallocated, not yet written";
  else
    what += addr == own ? ", holds WAL" : fmt::format(", recycled (holds WAL of {} from an earlier life)", format_lsn(addr));
  // One never written holds nothing to restore: the writer writes into it, which extends it
  // (break-it round 33: ls said a writer refuses it while the writer used it).
  if (size < c.segment_size_bytes)
    what += c.append_mode ? fmt::format(", append mode: {} bytes", size)
            : ready       ? fmt::format(", cut short: {} of {} bytes (it holds no record; a writer writes into it "
                                        "all the same, which makes it full size again)",
                                        size, c.segment_size_bytes)
                          : fmt::format(", cut short: {} of {} bytes (this WAL's segments are full size; a writer "
                                        "refuses it: restore the complete file)",
                                        size, c.segment_size_bytes);
  if (info.timeline == c.timeline && info.segno < c.oldest_lsn / c.segment_size_bytes)
    what += ", below the oldest segment needed (retired at the next checkpoint)";
  if (info.timeline != c.timeline) what += fmt::format(", timeline {} (not the WAL's)", info.timeline);
  return what;
}

// "<segment name>.broken[.N]": the names walseg 0.1 gave what it moved aside.
bool is_broken_name(const std::string& name) {
  if (name.size() < kSegmentNameLength + std::string_view(kBrokenSuffix).size() ||
      !parse_segment_file_name(name.substr(0, kSegmentNameLength), kMinSegmentSizeBytes))
    return false;
  const std::string rest = name.substr(kSegmentNameLength);
  if (rest.rfind(kBrokenSuffix, 0) != 0) return false;
  const std::string n = rest.substr(std::string_view(kBrokenSuffix).size());
  return n.empty() || (n.size() > 1 && n[0] == '.' && n.find_first_not_of("0123456789", 1) == std::string::npos);
}

std::string describe_entry(const Directory& dir, const std::string& name, const struct stat& st,
                           const std::optional<WalControl>& control, const Config& cfg) {
  const bool plain = S_ISREG(st.st_mode) && st.st_nlink == 1;
  if (is_walseg_bookkeeping_file(name) && !S_ISREG(st.st_mode))
    return fmt::format("not walseg's: {} has walseg's name \"{}\" but is {}; walseg cannot use it: move it away",
                       name == kLockFileName ? "the lock file" : "this", name, file_type(st));
  if (name == kLockFileName) {
    // A writer's test (dir_lock.cpp): it refuses to rewrite one made otherwise (round 23 H3).
    if (auto why = not_made_as_walseg_makes_files(st))
      return fmt::format("not walseg's: a lock file {} (a writer refuses the directory until it is moved away)", *why);
    // Its content, as a writer reads it (break-it round 25 H3: bare PID lines are not walseg's).
    if (auto why = lock_file_not_walsegs(dir)) return fmt::format("not walseg's: {}", *why);
    return "walseg's lock file";
  }
  // The writers' tests (round 25 H1): such files are never replaced.
  if (name == kControlFileName) {
    if (auto why = not_walsegs_to_change(st))
      return fmt::format("the WAL's control file, but not walseg's to change: {} (a writer refuses the directory)", *why);
    return "walseg's control file (the WAL's identity)";
  }
  if (name == kAutoCacheFileName) {
    if (auto why = not_made_as_walseg_makes_files(st))
      return fmt::format("not walseg's: a file {} (never replaced; auto's decision is then not cached)", *why);
    // The writer's test: its layout, not only its name and mode (break-it round 26 M1).
    if (!holds_auto_cache(dir, name))
      return "not walseg's: it does not hold walseg's auto decision (never replaced; the decision is then not cached)";
    return "walseg's init_method = auto decision";
  }
  if (name == kControlTempFileName) {
    if (!plain)
      return fmt::format("not walseg's: {} (left alone)",
                         S_ISREG(st.st_mode) ? "a file with other names (hard links)" : file_type(st));
    // The writer's own test: what it refuses, ls does not call a leftover (round 10 F7), in a
    // directory no walseg writer used too (round 17 H1).
    if (!control && !lock_file_pid(dir))
      return "not walseg's: no walseg.control and no walseg.lock of an earlier writer here, so no walseg crash "
             "left it (a writer refuses the directory until it is moved away)";
    if (!lock_file_pid(dir))
      return "not walseg's: walseg.lock names no writer whose crash may have left it (the last one closed the "
             "directory cleanly), so no walseg crash left it (a writer refuses the directory until it is moved away)";
    const std::vector<std::string> listed = lock_file_temps(dir);
    if (std::find(listed.begin(), listed.end(), name) == listed.end())
      return "not walseg's: walseg.lock does not list it as a file a writer was making, so no walseg crash left it "
             "(a writer refuses the directory until it is moved away)";
    try {
      check_control_temp(dir, control ? control->system_id : 0);
    } catch (const Error&) {
      return "not walseg's: not a control file of this WAL's (a writer refuses the directory until it is moved "
             "away)";
    }
    return "walseg's leftover: a control file being replaced when a writer stopped (removed when a writer "
           "opens the directory)";
  }
  if (is_broken_name(name) && S_ISREG(st.st_mode)) return describe_broken(dir, name, st, control);
  const WalFileInfo info = classify_wal_file_name(name, control ? control->segment_size_bytes : cfg.segment_size_bytes);
  if (!control) return describe_without_control(dir, name, info, st, cfg);
  // The scan's test (break-it round 10 F7: every temporary name was said to be removed).
  // Its words too (round 16 L2: a zero-filled file left for its birth time was said to hold
  // "bytes walseg never writes there").
  if (info.kind == WalFileKind::kTempFile) {
    const std::vector<std::string> listed = lock_file_temps(dir);
    const auto why = temp_file_left_alone_reason(dir, name, st, *control, false, lock_file_pids(dir), listed);
    return why ? fmt::format("not walseg's: a temporary file {} (left alone)", *why)
               : std::string("temp leftover (removed when a writer opens the directory)");
  }
  if (info.kind != WalFileKind::kSegmentFile) return S_ISREG(st.st_mode) ? std::string(to_string(info.kind)) : "not a regular file";
  // Its first page is this WAL's: how to make it walseg's again, never "move it out" (round 25 H2).
  const std::optional<std::string> back = give_back_advice(dir, name, st, *control);
  auto label = [&](const std::string& why) {
    return back ? fmt::format("may hold this WAL, but not walseg's to write as it is: {} (do not move it out; {})", why,
                              *back)
                : fmt::format("not walseg's: {} (left alone)", why);
  };
  if (!S_ISREG(st.st_mode)) return label(fmt::format("{}, not a regular file", file_type(st)));
  bool ready = false;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // Unreadable to this user: listed, not the end of the listing (break-it round 26).
  if (auto why = not_walsegs_to_change(st)) return label(*why);
  std::optional<std::string> why;
  try {
    why = foreign_reason(dir, name, size, *control, &ready);
  } catch (const Error& e) {
    return label(fmt::format("it cannot be read ({})", errno_text(e.errnum())));
  }
  // With a ready stamp it holds no record: nothing to give back, as in the writer's survey
  // (break-it round 33: "may hold this WAL ... do not move it out" beside "it holds no record").
  if (why) return ready ? fmt::format("not walseg's: {} (left alone)", *why) : label(*why);
  // The writer's survey too: this WAL's bytes in a file walseg may not change (a copy of
  // another user's, or read-only) are left alone (break-it round 23 H1).
  return describe_ours(dir, name, info, size, ready, *control);
}

// Names are printed as they are, except bytes a terminal would act on, and the backslash that
// starts their escapes: a name holding the four bytes "\x0A" and one holding a newline were
// printed alike (break-it round 38 L3).
std::string printable(const std::string& name) {
  std::string out;
  for (unsigned char ch : name)
    out += (ch < 0x20 || ch == 0x7F || ch == '\\') ? fmt::format("\\x{:02X}", ch) : std::string(1, static_cast<char>(ch));
  return out;
}

void run_ls(const LsArgs& a) {
  const guc::Registry registry = load_registry(a.settings);
  const std::uint64_t given = segment_size_set_in(registry);
  Config cfg = guc::make_config(registry);
  if (!a.segment_size.empty()) cfg.segment_size_bytes = parse_segment_size_option("--segment-size", a.segment_size);
  check_segment_size(cfg.segment_size_bytes);
  Directory dir = Directory::open(a.dir);
  // A damaged control file is reported and the files still listed: ls is how one looks.
  std::optional<WalControl> control;
  bool damaged = false;
  try {
    control = read_control(dir);
    if (control) {
      // What the user set is a guess where walseg.control says what the WAL has.
      if (!a.segment_size.empty())
        warn_if_not_the_wals_segment_size(cfg.segment_size_bytes, "--segment-size " + a.segment_size,
                                          control->segment_size_bytes);
      else
        warn_if_not_the_wals_segment_size(given, "walseg.segment_size", control->segment_size_bytes);
    }
    if (control) fmt::print("{}: {}\n", kControlFileName, describe(*control));
    else if (const std::string pg = postgresql_pg_wal_hint(dir); !pg.empty())
      // Listed, since ls is how one looks, but said (the new-user trial: pg_wal's segments
      // were "whose is unknown", with no word of whose they plainly are).
      fmt::print("{}: none: not a walseg WAL directory.{}\n", kControlFileName, pg);
    else fmt::print("{}: none (not a walseg WAL directory, or its control file was lost)\n", kControlFileName);
  } catch (const Error& e) {
    fmt::print("{}: cannot be used: {}\n", kControlFileName, e.what());
    exit_status() = 1;
    damaged = true;
  }
  fmt::print("{:<42} {:>12} {:>12}  {}\n", "name", "size", "allocated", "what");
  for (const auto& e : dir.list()) {
    struct stat st{};
    if (::fstatat(dir.fd(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      throw file_error(errno, "stat", dir.path_of(e.name));
    fmt::print("{:<42} {:>12} {:>12}  {}\n", printable(e.name), st.st_size,
               static_cast<std::uint64_t>(st.st_blocks) * 512,
               damaged && e.name == kControlFileName ? "walseg's control file name, but cannot be used (see above)"
                                                     : describe_entry(dir, e.name, st, control, cfg));
  }
}

RegisterCommand reg("ls", [](CLI::App& app) {
  auto a = std::make_shared<LsArgs>();
  auto* cmd = app.add_subcommand("ls", "list a WAL directory and classify each file");
  cmd->add_option("--dir", a->dir, "WAL directory")->required()->check(dir_given());
  cmd->add_option("--segment-size", a->segment_size,
                  size_option_help("segment size where the directory has no walseg.control, which says its own (default: walseg.segment_size)"))
      ->check(value_given());
  add_settings_options(*cmd, a->settings);
  cmd->callback([a] { run_ls(*a); });
});

}  // namespace
}  // namespace walseg::tool
