// made_files: the files this process made itself, by identity (st_dev, st_ino), for a host
// that must later remove only what it made (walseg bench's scratch directory,
// src/bin/bench_scratch.h). A name tells nothing: anyone can put a file named as walseg names
// its own into a directory.
//
// While tracking is on, File::open and File::open_at note every file they made with
// O_CREAT | O_EXCL (the way walseg makes each of its files; a lock file is made so too), and
// Directory::unlink and Directory::rename_over forget the file whose name they remove, so that
// an inode number the filesystem hands to someone else's file afterwards is not taken for
// ours. A rename keeps a file's identity, so a recycled segment stays ours.
// A file of ours removed by other means than Directory (by a user) stays noted, so another
// file that reuses its inode number would look ours: made() also compares its Mark (the birth
// time, or where the filesystem keeps none the inode generation), which such a file does not
// share. Where the filesystem keeps neither (some FUSE and network ones), nothing counts as
// made: the host leaves its files rather than risk another's.
//
// Not for: deciding what is in a WAL (walseg.control and the segments' system identifier do).
// Cost when off: one relaxed atomic load per call site. Thread-safety: every function may be
// called from any thread. Lifetime: tracking, once started, lasts until the process exits.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace walseg::made_files {

namespace detail {
extern std::atomic<bool> tracking;
}

/// Whether tracking is on: the one relaxed load each call site makes first.
inline bool active() noexcept { return detail::tracking.load(std::memory_order_relaxed); }

/// What tells a file from a later one under the same inode number: its birth time (statx
/// STATX_BTIME, nanoseconds since the epoch) or, where the filesystem keeps none, its inode
/// generation (FS_IOC_GETVERSION: ext2/3/4). -1 for each that is unknown.
struct Mark {
  std::int64_t born_ns = -1;
  std::int64_t generation = -1;
};
/// Whether two marks are of one file: the birth times where either is known, else the
/// generations; false where neither is known (no proof is no match).
bool same_file(const Mark& made_as, const Mark& now) noexcept;
/// The mark of `name` in `dirfd` (not following a link); for the generation a regular file
/// is opened read-only. Never throws: unknown parts are -1.
Mark mark_of(int dirfd, const std::string& name) noexcept;
/// The mark of the file open on `fd`. Never throws: unknown parts are -1.
Mark mark_of_fd(int fd) noexcept;

/// Turns tracking on. Files made before are not known.
void start();
/// Notes the file open on `fd` (fstat) as made by this process (the io layer calls it);
/// `dir_fd` (or, -1, the parent of `path`) is the directory it was made in, for journals.
void note_made(int fd, int dir_fd = -1, const char* path = nullptr) noexcept;

/// A journal: while tracking is on, every file made in the directory open on `dir_fd` is
/// also written, one line each ("made DEV INO BORN_NS GENERATION"), to the file open on
/// `journal_fd` (O_APPEND, one write(2) per line, not synced), so that a later process can tell
/// that directory's files from files put there by others after this one died (a PostgreSQL
/// backend's scratch directory: break-it round 14 F1). A crash between a file's creation and
/// its line leaves that file unjournaled, so it is left, never the reverse.
void journal_in(int dir_fd, int journal_fd) noexcept;
void stop_journal(int dir_fd) noexcept;

/// The identities and marks a journal's text lists (other lines are skipped).
struct JournalEntry {
  std::uint64_t dev = 0, ino = 0;
  Mark mark;
};
std::vector<JournalEntry> read_journal(const std::string& text);
/// Whether the file `name` in `dirfd`, whose lstat is `st`, is one `journal` lists: the same
/// device, inode and Mark (same_file).
bool journaled(const std::vector<JournalEntry>& journal, int dirfd, const std::string& name, const struct stat& st);
/// Forgets the file with this identity and mark: its name was removed (the io layer calls
/// it, with the mark taken before the removal). An entry with another mark is a file made
/// since under the freed inode number, and stays.
void note_removed(std::uint64_t dev, std::uint64_t ino, const Mark& removed) noexcept;
/// The birth time (statx STATX_BTIME, not following a link) of `name` in `dirfd`, in
/// nanoseconds since the epoch; -1 where it is unknown (the filesystem keeps none, or the
/// name is gone). The comparison made() makes, for a caller that orders files by it.
std::int64_t birth_time_ns(int dirfd, const std::string& name) noexcept;
/// Whether `name` in `dirfd` (not following a link) was born after its last modification:
/// a file the filesystem made gets a birth time equal to its mtime (ext4, xfs, btrfs and
/// tmpfs take both from one clock reading), and writes only move the mtime on, so a later
/// birth means the mtime was set back: `cp -a`, `rsync -t` or `tar x` copied it with its
/// times kept. False where either time is unknown. Never throws.
bool born_after_its_mtime(int dirfd, const std::string& name) noexcept;
/// The same for the file open on `fd`.
bool born_after_its_mtime(int fd) noexcept;

/// Whether the file `name` in the directory `dirfd`, whose lstat is `st`, is one this process
/// made while tracking was on: the same device and inode, and the same Mark (same_file).
bool made(int dirfd, const std::string& name, const struct stat& st);

}  // namespace walseg::made_files
