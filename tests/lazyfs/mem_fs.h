// MemFs: the in-memory filesystem behind walseg_lazyfs (lazyfs.cpp says how it is mounted), with
// two copies of everything: what programs see now, and what a power cut would leave.
//
// The power-cut model, per object:
//   - file data, in 4 kB blocks: a write changes the visible copy and marks its blocks dirty;
//     a successful fsync or fdatasync copies the dirty blocks and the size to the durable copy
//     (both calls persist data and size: fdatasync must persist a size change to make new data
//     readable, and nothing here is metadata fdatasync could skip). A write through a handle
//     opened with O_DSYNC or O_SYNC persists its own blocks and the size it reached on return.
//     O_DIRECT is treated as any other write: durable only after the next flush, as on a disk
//     with a volatile cache.
//   - directory entries: create, mkdir, link, unlink, rmdir and rename change the visible name
//     map only; an fsync of the directory copies its whole name map to the durable one. A
//     rename is atomic: after a cut each name refers to its old or its new inode, never a mix.
//     fsync of a file persists its data, never its name.
//   - drop() is the power cut: every file's visible copy becomes its durable copy, every
//     directory's names become its durable names, inodes no durable name reaches vanish, and
//     every open handle turns stale (I/O through it fails with EIO, so a writer killed just
//     before the cut cannot change the state after it). With keep_percent > 0, each dirty block
//     inside the durable size survives with that probability (seeded): torn writes.
//   - fail_fsync(n): the nth next fsync/fdatasync of a file fails with EIO, and the blocks that
//     were dirty are marked clean without being persisted, as Linux does after a writeback
//     error ("fsyncgate"): they stay readable until the cut, a later fsync reports success
//     without them, and drop() loses them. With a name pattern, only calls on files that have
//     a visible name matching it (fnmatch) are counted, so that a test can fail one program's
//     fsync (a PostgreSQL extension's temporary file) and not another's on the same mount.
//   - lie_fsync(true): fsync and fdatasync report success and persist nothing, as a disk
//     whose volatile cache ignores flushes; only for proving that a checker sees the loss.
//   - capacity: blocks allocated by the visible copies of files that still have a name or an
//     open handle count against it; a write needing more blocks is cut short at the last block
//     that fits (ENOSPC when none does), fallocate that does not fit fails whole with ENOSPC.
//     Holes cost nothing, fallocated blocks (unwritten) do, as on ext4.
// Not modelled: directory changes torn among themselves (all of a directory's unsynced name
// changes are undone together; XXX: a real journal may keep some), timestamps after a cut
// (they keep their visible values), xattrs, symlinks, special files.
//
// Errors are returned as negative errno values, never thrown (FUSE replies with them).
// Thread-safety: every public method takes one mutex, so FUSE worker threads and the control
// thread may call concurrently. Lifetime: handles (fh) are valid until release() or drop().
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace lazyfs {

inline constexpr std::uint64_t kBlockBytes = 4096;
inline constexpr std::uint64_t kRootIno = 1;  // FUSE_ROOT_ID

using Block = std::array<std::byte, kBlockBytes>;
/// Shared between the visible and the durable copy until one is written (copy on write).
/// Null: a hole. kUnwritten(): allocated by fallocate, reads as zeros.
using BlockRef = std::shared_ptr<Block>;

struct FileData {
  std::uint64_t size = 0;
  std::vector<BlockRef> blocks;  ///< by block number; may reach past size (FALLOC_FL_KEEP_SIZE)
};

struct Inode {
  std::uint64_t ino = 0;
  mode_t mode = 0;  ///< S_IFREG or S_IFDIR plus permission bits
  uid_t uid = 0;
  gid_t gid = 0;
  std::uint32_t nlink = 0;          ///< names in the visible tree
  std::uint64_t lookups = 0;        ///< the kernel's references (FUSE lookup count)
  std::uint32_t opens = 0;          ///< live handles
  std::uint64_t allocated = 0;      ///< non-null blocks of `data`
  bool charged = false;             ///< `allocated` counts against the capacity
  struct timespec mtime{}, ctime{};
  FileData data, durable;           ///< regular files
  std::vector<bool> dirty;          ///< per block of `data`: changed since its last sync
  std::map<std::string, std::uint64_t> entries, durable_entries;  ///< directories
  std::uint64_t parent = kRootIno;  ///< directories: for ".."
  bool is_dir() const { return S_ISDIR(mode); }
};

/// Which fsync calls fail_fsync counts.
enum class SyncKind { kAny, kFsync, kFdatasync };

struct MemFsCounters {
  std::uint64_t writes = 0, bytes_written = 0, fsyncs = 0, fdatasyncs = 0, dir_fsyncs = 0;
  std::uint64_t failed_fsyncs = 0, lied_fsyncs = 0, enospc = 0, drops = 0, stale_ops = 0;
};

struct DirEntry {
  std::string name;
  struct stat st;
};

class MemFs {
 public:
  MemFs(bool no_fallocate, std::uint64_t capacity_bytes);

  // Namespace (parent and ino are FUSE inode numbers; *st filled on success).
  int lookup(std::uint64_t parent, const std::string& name, struct stat* st);  // +1 lookup
  void forget(std::uint64_t ino, std::uint64_t n);
  int getattr(std::uint64_t ino, struct stat* st);
  /// FUSE_SET_ATTR_* bits in `to_set`; a size change allocates nothing (holes).
  int setattr(std::uint64_t ino, const struct stat& attr, int to_set, struct stat* st);
  /// create + open: O_EXCL on an existing name is EEXIST; +1 lookup, a handle in *fh.
  int create(std::uint64_t parent, const std::string& name, mode_t mode, int flags, uid_t uid, gid_t gid,
             struct stat* st, std::uint64_t* fh);
  int mkdir(std::uint64_t parent, const std::string& name, mode_t mode, uid_t uid, gid_t gid, struct stat* st);
  int unlink(std::uint64_t parent, const std::string& name);
  int rmdir(std::uint64_t parent, const std::string& name);
  /// flags: 0, RENAME_NOREPLACE or RENAME_EXCHANGE (both names must exist; directories only
  /// within one parent); others: EINVAL.
  int rename(std::uint64_t parent, const std::string& name, std::uint64_t newparent, const std::string& newname,
             unsigned flags);
  int link(std::uint64_t ino, std::uint64_t newparent, const std::string& newname, struct stat* st);
  int readdir(std::uint64_t ino, std::vector<DirEntry>* out);
  void statfs(struct statvfs* out);

  // Data, through a handle from open() or create().
  int open(std::uint64_t ino, int flags, std::uint64_t* fh);
  void release(std::uint64_t fh);
  /// Reads up to `size` bytes at `off` (fewer at the end of file) into *out.
  int read(std::uint64_t fh, std::uint64_t off, std::size_t size, std::vector<std::byte>* out);
  /// Returns the bytes written (short only at the capacity) or -errno.
  long write(std::uint64_t fh, std::uint64_t off, const void* buf, std::size_t size);
  /// mode 0 or FALLOC_FL_KEEP_SIZE; EOPNOTSUPP for others and under --no-fallocate.
  int fallocate(std::uint64_t fh, int mode, std::uint64_t off, std::uint64_t len);
  int fsync(std::uint64_t fh, bool datasync);
  int fsyncdir(std::uint64_t ino);

  // Control (control commands, see lazyfs.cpp). Each returns a one-line report.
  std::string drop(std::uint64_t seed, unsigned keep_percent);
  std::string persist_all();
  /// name_glob empty: every file counts; otherwise only files with a visible name matching it.
  std::string fail_fsync(std::uint64_t nth, SyncKind kind, const std::string& name_glob);
  std::string set_capacity(std::uint64_t bytes);
  std::string lie_fsync(bool on);
  std::string stats();

 private:
  Inode* find(std::uint64_t ino);
  Inode* find_dir(std::uint64_t ino);
  Inode* handle_inode(std::uint64_t fh, int* flags);
  Inode& new_inode(mode_t mode, uid_t uid, gid_t gid);
  void fill_stat(const Inode& n, struct stat* st) const;
  void maybe_free(Inode& n);
  void recharge(Inode& n);
  void add_allocated(Inode& n, std::int64_t blocks);
  void touch(Inode& n);
  void unlink_name(Inode& dir, const std::string& name);
  int resize(Inode& n, std::uint64_t size);
  long write_blocks(Inode& n, std::uint64_t off, const std::byte* src, std::size_t size);
  void persist_blocks(Inode& n, std::uint64_t first, std::uint64_t end, std::uint64_t durable_size);
  void sync_file(Inode& n);
  bool fsync_should_fail(const Inode& n, bool datasync);
  bool has_name_matching(std::uint64_t ino, const std::string& glob) const;
  void sync_dir(Inode& dir);
  std::uint64_t relink_durable();
  std::uint64_t free_blocks() const;

  struct Handle {
    std::uint64_t ino;
    int flags;
  };
  std::mutex mu_;
  std::map<std::uint64_t, std::unique_ptr<Inode>> inodes_;
  std::map<std::uint64_t, Handle> handles_;
  std::uint64_t next_ino_ = kRootIno;
  std::uint64_t next_fh_ = 1;  ///< never reused, so a handle from before a drop stays unknown
  bool no_fallocate_;
  std::uint64_t capacity_bytes_;  ///< 0: unlimited
  std::uint64_t used_blocks_ = 0;
  std::uint64_t fail_countdown_ = 0;
  SyncKind fail_kind_ = SyncKind::kAny;
  std::string fail_glob_;  ///< empty: any file
  bool lie_fsync_ = false;
  MemFsCounters counters_;
};

}  // namespace lazyfs
