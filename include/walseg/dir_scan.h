// The start-up scan of a WAL directory: what is there, whose it is, and the clean-up the rules
// allow.
//
// Every entry is classified by name (segment_name.h), type, size and, for segment names, its
// first kReadyStampBytes bytes, against the directory's control file (wal_control.h):
//   segment of this WAL  a strict segment name, a regular file whose first bytes are a long
//                        page header or a ready stamp (wal_format.h) carrying the control
//                        file's system identifier, segment size and block size; complete when
//                        exactly segment_size bytes (in append mode: at most that);
//   short segment        of this WAL, shorter than segment_size outside append mode: WAL
//                        written in append mode (reported; the manager refuses to go on);
//   temp leftover        xlogtemp.<pid>[.<n>] and walseg.control.tmp, walseg's own names for
//                        a file being made (PostgreSQL removes xlogtemp.* too): removed, with
//                        a LOG line (case C11), if it is a plain file of one link; but in a
//                        directory whose walseg.control was only just created, xlogtemp.* are
//                        left alone (walseg makes the control file first, so they cannot be
//                        walseg's), and a walseg.control.tmp that is not a leftover of
//                        walseg's (wal_control.h) makes the scan refuse;
//   foreign              every other segment-named entry (zeros, PostgreSQL's or another
//                        system's WAL, another segment size, a symbolic link, a directory):
//                        walseg did not make it for this WAL, so it is never used, recycled,
//                        renamed, moved aside or removed (nothing walseg did not make is); it is
//                        reported with the reason;
//   everything else      history, partial and backup files, other names: left alone and
//                        reported once (case C20), except walseg's own lock, control and
//                        auto-cache files.
// Removals are made durable with one directory fsync at the end; survey_wal_directory only
// lists them, for a caller that removes them once it accepted the WAL.
//
// Not for: deciding what to recycle (the segment manager) or reading records (wal layer).
// Thread-safety: call while holding the directory's DirLock, before other threads use it.
// Lifetime: nothing passed in is retained.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "walseg/directory.h"
#include "walseg/file.h"
#include "walseg/file_identity.h"
#include "walseg/segment_name.h"
#include "walseg/wal_format.h"

namespace walseg {

/// Suffix walseg 0.1 gave wrong-size segment files it moved aside ("<name>.broken[.N]"); walseg
/// no longer moves anything, but `walseg ls` still labels such files.
inline constexpr const char* kBrokenSuffix = ".broken";

/// A segment of the directory's WAL.
struct ScannedSegment {
  SegmentName name;
  std::uint64_t size_bytes = 0;
  bool ready = false;  ///< carries a ready stamp: made by walseg and never written since
  FileIdentity file;   ///< the file found under the name
};

/// A segment-named entry walseg did not make for this WAL.
struct ForeignFile {
  std::string name;
  std::optional<SegmentName> segment;  ///< what the name says (nullopt: out of range for the size)
  std::string why;                     ///< e.g. "its first page is zeros"
  /// When its first page is this WAL's (a file of the WAL whose owner, mode or links changed,
  /// or someone's copy): how to make it walseg's again (give_back_advice). Empty otherwise.
  std::string give_back;
};

struct ScanReport {
  std::vector<ScannedSegment> segments;        ///< complete segments, sorted (timeline, segno)
  std::vector<ScannedSegment> short_segments;  ///< see above; sorted
  std::vector<ForeignFile> foreign;            ///< sorted by name
  std::vector<std::string> leftover_temps;     ///< temp leftovers found, not yet removed
  /// Each leftover's identity (st_dev, st_ino) when surveyed, in leftover_temps' order: what
  /// is under the name at removal must still be that file.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> leftover_temp_ids;
  std::vector<std::string> removed_temps;      ///< temp leftovers removed
  std::vector<std::string> left_alone;         ///< "name (what)" of other entries reported
};

/// Whether the segment-named regular file `name` of `size_bytes` in `dir` is a segment of the
/// WAL `control` describes (see above). Returns nullopt for ours, with `*ready` set when it
/// carries a ready stamp, or the reason it is not. Throws walseg::Error for open/read errors.
std::optional<std::string> foreign_reason(const Directory& dir, const std::string& name,
                                          std::uint64_t size_bytes, const WalControl& control,
                                          bool* ready);

/// The same for an open file `f` (read with pread, so not an O_DIRECT descriptor), by what it
/// is now: a regular file of one name (a hard link would make walseg's writes change another
/// name's file too), at most a segment's size, whose first bytes are this WAL's long page
/// header, or its ready stamp followed by zeros to 4 kB or the end (bytes after a stamp are
/// someone's: walseg's first write into a segment covers its stamp). For a writer about to write into a segment it was handed: the name may
/// have been replaced or linked since the scan. Throws walseg::Error for stat/read errors.
std::optional<std::string> foreign_reason(File& f, const WalControl& control, bool* ready);

/// Scans `dir` for the WAL `control` describes, changing nothing: leftover temporary files
/// are listed in leftover_temps (SegmentManager removes them at start(), with
/// remove_leftover_temps, once nothing can refuse the WAL any more). append_mode: the init
/// method grows segments by appends (none, fallocate_keep_size), so shorter files are
/// complete segments. control_is_new: the caller has just written the directory's first
/// control file (see above). Throws walseg::Error for listing, stat or read failures (path,
/// errno text), and EEXIST for a walseg.control.tmp that is not walseg's (check_control_temp).
/// earlier_writer_pids: walseg.lock's PIDs before this opening (temp_file_left_alone_reason);
/// lock_existed: walseg.lock was there before this opening: with control_is_new and without
/// it, no walseg crash can have left a walseg.control.tmp, and one there is refused (EEXIST).
/// listed_temps: the temporary names walseg.lock listed before this opening
/// (DirLock::earlier_listed_temps): a file under any other temporary name is no leftover, and
/// a walseg.control.tmp not listed is refused (EEXIST).
ScanReport survey_wal_directory(const Directory& dir, const WalControl& control, bool append_mode,
                                bool control_is_new, const std::vector<std::uint32_t>& earlier_writer_pids,
                                bool lock_existed, const std::vector<std::string>& listed_temps);

/// Removes report's leftover_temps that are still the files surveyed and still hold only what
/// walseg writes to one (moving them to removed_temps, each with a LOG line; one replaced
/// since, even under a reused inode number, is left, with a LOG line), then fsyncs `dir` if
/// any was removed. Throws walseg::Error from the unlink or the fsync.
void remove_leftover_temps(Directory& dir, ScanReport& report, const WalControl& control);

/// Why the segment file `s` of this WAL (its first page or ready stamp is this WAL's) is
/// someone's copy of another segment: its first page names segment N (page address), not its
/// own, and still_here(N) says segment N of its timeline is here. walseg recycles a segment by
/// renaming it, so a recycled one's earlier name is gone (break-it rounds 28 H2, 29 H1).
/// nullopt when it names itself, the segment it names is gone, or it cannot be read now.
/// Shared by the writer's survey and `walseg ls`. Never throws.
std::optional<std::string> copy_of_a_live_segment(const Directory& dir, const SegmentName& s, const WalControl& c,
                                                  const std::function<bool(SegNo)>& still_here);

/// True when the segment file `name` still holds only this WAL's ready stamp and zeros (an
/// append-mode segment never written), checked right before a removal: recovery, which runs
/// between the survey and the removal, takes long enough for a user's file to be moved onto
/// the name. Never throws: an unreadable file is not walseg's to remove.
bool still_unwritten_ready_segment(const Directory& dir, const std::string& name, const WalControl& control);

/// True when `name` is one of walseg's own bookkeeping files in a WAL directory (lock,
/// control, auto-method cache) that no scan reports.
bool is_walseg_bookkeeping_file(const std::string& name);

/// True for every name walseg gives files of its own: segment names (of any segment size),
/// temporary names (xlogtemp.<pid>[.<n>], walseg.control.tmp) and the bookkeeping files. For
/// cleaning up directories walseg made itself (bench and probe scratch directories); the
/// name alone never makes a file in a WAL directory walseg's (dir_scan does that).
bool is_walseg_file_name(const std::string& name);

/// For a segment-named entry `name` of `dir` (lstat `st`) that a writer refuses but whose first
/// page is this WAL's: how to make it walseg's to write again, without moving it out of the
/// directory, which would take its records away (break-it round 25 H2: walseg advised "move it
/// out" for a hard-linked segment, a link to one, a grown one, and following that lost
/// acknowledged records past the durable point). E.g. "remove its other names (hard links)".
/// When this user may not read it (EACCES, EPERM), whether it holds this WAL is unknown, and the
/// advice is to give it back to this user first (round 26 H1). nullopt when its first page is
/// not this WAL's, or the read fails otherwise. A symbolic link is read through (never
/// written). Never throws.
std::optional<std::string> give_back_advice(const Directory& dir, const std::string& name, const struct stat& st,
                                            const WalControl& control);

/// Whether the open file `f` is a segment of the WAL whose control file is `control`: a plain
/// file (no other link) whose first bytes are this WAL's long page header or ready stamp (its
/// system identifier, segment and page size). For a writer about to write into a segment it
/// opened by name after a step in which the name could have been given another file (break-it
/// round 11 F1: recovery's clean-up zeroed pages of a user's file moved onto the last
/// segment's name during the control file's update). Never throws.
bool is_this_wals_segment(File& f, const WalControl& control);

/// Why the file `name` with a temporary name (xlogtemp.<pid>[.<n>]), whose lstat is `st`, is
/// not a leftover a writer's open removes from the WAL `control` describes, or nullopt when it
/// is one: a plain file (no other link) named for one of `earlier_writer_pids` (walseg.lock's
/// PIDs before this opening: the last writer, and those before it whose leftovers were not yet
/// removed, whose crash left it), born after walseg.lock, holding only what
/// walseg writes under such a name (zeros, its ready stamp, the auto probe's commits).
/// The PID is what a copy of the directory keeps (break-it round 16 F1: rsync gave a user's
/// zero-filled xlogtemp.4242 a birth time after the copied walseg.lock, and the copy's first
/// writer removed it); none there leaves every temporary file alone. control_is_new: the
/// opening just made the control file, so nothing here is walseg's. listed_temps:
/// walseg.lock's temporary names (DirLock::will_create); a name not listed holds no
/// file a writer made (break-it round 35 H3). The scan's own test, and `walseg ls`'s label.
/// Never throws.
std::optional<std::string> temp_file_left_alone_reason(const Directory& dir, const std::string& name,
                                                       const struct stat& st, const WalControl& control,
                                                       bool control_is_new,
                                                       const std::vector<std::uint32_t>& earlier_writer_pids,
                                                       const std::vector<std::string>& listed_temps);

/// What a directory without walseg.control that holds segment files most likely is, for the
/// refusal's message: " It looks like PostgreSQL's pg_wal (...): ..." when it bears one of
/// PostgreSQL's signs (postgresql_sign_at: the tool's refusals use the same test), else "".
/// Never throws.
std::string postgresql_pg_wal_hint(const Directory& dir);
/// What to do about segment files without walseg.control, most likely first: PostgreSQL's
/// pg_wal (postgresql_pg_wal_hint) before "restore walseg.control from a backup", which a
/// DBA would otherwise act on first (new-user trial 6). `otherwise` ends the plain advice
/// ("" or e.g. " otherwise use an empty directory"). Never throws.
std::string no_control_advice(const Directory& dir, const std::string& otherwise = "");

}  // namespace walseg
