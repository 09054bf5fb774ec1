// MemFs (mem_fs.h): inodes and the visible name tree. File data and syncs are in
// mem_data.cpp, the power cut and the other control commands in mem_control.cpp.
#include "mem_fs.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <time.h>

#include <cerrno>

#define FUSE_USE_VERSION 35
#include <fuse3/fuse_lowlevel.h>  // FUSE_SET_ATTR_*

namespace lazyfs {

MemFs::MemFs(bool no_fallocate, std::uint64_t capacity_bytes)
    : no_fallocate_(no_fallocate), capacity_bytes_(capacity_bytes) {
  Inode& root = new_inode(S_IFDIR | 0755, 0, 0);
  root.nlink = 2;
  root.lookups = 1;  // the kernel never forgets the root
}

Inode& MemFs::new_inode(mode_t mode, uid_t uid, gid_t gid) {
  auto n = std::make_unique<Inode>();
  n->ino = next_ino_++;
  n->mode = mode;
  n->uid = uid;
  n->gid = gid;
  touch(*n);
  Inode& ref = *n;
  inodes_.emplace(ref.ino, std::move(n));
  return ref;
}

Inode* MemFs::find(std::uint64_t ino) {
  auto it = inodes_.find(ino);
  return it == inodes_.end() ? nullptr : it->second.get();
}

Inode* MemFs::find_dir(std::uint64_t ino) {
  Inode* n = find(ino);
  return n != nullptr && n->is_dir() ? n : nullptr;
}

void MemFs::touch(Inode& n) {
  clock_gettime(CLOCK_REALTIME, &n.mtime);
  n.ctime = n.mtime;
}

void MemFs::fill_stat(const Inode& n, struct stat* st) const {
  *st = {};
  st->st_ino = n.ino;
  st->st_mode = n.mode;
  st->st_nlink = n.nlink;
  st->st_uid = n.uid;
  st->st_gid = n.gid;
  st->st_size = static_cast<off_t>(n.is_dir() ? 4096 : n.data.size);
  st->st_blocks = static_cast<blkcnt_t>(n.allocated * (kBlockBytes / 512));
  st->st_blksize = kBlockBytes;
  st->st_mtim = n.mtime;
  st->st_ctim = n.ctime;
  st->st_atim = n.mtime;
}

// An inode lives while the visible tree, the durable tree, an open handle or the kernel refers
// to it: a file unlinked but durably named must come back on drop().
void MemFs::maybe_free(Inode& n) {
  recharge(n);
  if (n.ino == kRootIno || n.nlink > 0 || n.opens > 0 || n.lookups > 0) return;
  for (const auto& [ino, d] : inodes_)
    if (d->is_dir())
      for (const auto& [name, target] : d->durable_entries)
        if (target == n.ino) return;
  inodes_.erase(n.ino);
}

// Space is charged while a file has a name or a handle, as a real filesystem frees blocks on
// the last unlink and close.
void MemFs::recharge(Inode& n) {
  bool want = n.nlink > 0 || n.opens > 0;
  if (want == n.charged) return;
  n.charged = want;
  if (want) used_blocks_ += n.allocated;
  else used_blocks_ -= n.allocated;
}

void MemFs::add_allocated(Inode& n, std::int64_t blocks) {
  n.allocated += static_cast<std::uint64_t>(blocks);
  if (n.charged) used_blocks_ += static_cast<std::uint64_t>(blocks);
}

int MemFs::lookup(std::uint64_t parent, const std::string& name, struct stat* st) {
  std::lock_guard lk(mu_);
  Inode* dir = find_dir(parent);
  if (dir == nullptr) return -ENOENT;
  auto it = dir->entries.find(name);
  if (it == dir->entries.end()) return -ENOENT;
  Inode* n = find(it->second);
  if (n == nullptr) return -ENOENT;
  ++n->lookups;
  fill_stat(*n, st);
  return 0;
}

void MemFs::forget(std::uint64_t ino, std::uint64_t count) {
  std::lock_guard lk(mu_);
  Inode* n = find(ino);
  if (n == nullptr) return;  // vanished in a drop
  n->lookups = n->lookups > count ? n->lookups - count : 0;
  maybe_free(*n);
}

int MemFs::getattr(std::uint64_t ino, struct stat* st) {
  std::lock_guard lk(mu_);
  Inode* n = find(ino);
  if (n == nullptr) return -ENOENT;
  fill_stat(*n, st);
  return 0;
}

int MemFs::setattr(std::uint64_t ino, const struct stat& attr, int to_set, struct stat* st) {
  std::lock_guard lk(mu_);
  Inode* n = find(ino);
  if (n == nullptr) return -ENOENT;
  if ((to_set & FUSE_SET_ATTR_SIZE) != 0) {
    if (n->is_dir()) return -EISDIR;
    if (int r = resize(*n, static_cast<std::uint64_t>(attr.st_size)); r != 0) return r;
  }
  if ((to_set & FUSE_SET_ATTR_MODE) != 0) n->mode = (n->mode & S_IFMT) | (attr.st_mode & 07777);
  if ((to_set & FUSE_SET_ATTR_UID) != 0) n->uid = attr.st_uid;
  if ((to_set & FUSE_SET_ATTR_GID) != 0) n->gid = attr.st_gid;
  if ((to_set & FUSE_SET_ATTR_MTIME) != 0) n->mtime = attr.st_mtim;
  if ((to_set & FUSE_SET_ATTR_MTIME_NOW) != 0) clock_gettime(CLOCK_REALTIME, &n->mtime);
  clock_gettime(CLOCK_REALTIME, &n->ctime);
  fill_stat(*n, st);
  return 0;
}

int MemFs::create(std::uint64_t parent, const std::string& name, mode_t mode, int flags, uid_t uid, gid_t gid,
                  struct stat* st, std::uint64_t* fh) {
  std::unique_lock lk(mu_);
  Inode* dir = find_dir(parent);
  if (dir == nullptr) return -ENOENT;
  if (name.size() > 255) return -ENAMETOOLONG;
  auto it = dir->entries.find(name);
  if (it != dir->entries.end()) {
    if ((flags & O_EXCL) != 0) return -EEXIST;
    std::uint64_t ino = it->second;
    lk.unlock();
    if (int r = open(ino, flags, fh); r != 0) return r;
    return lookup(parent, name, st);
  }
  Inode& n = new_inode(S_IFREG | (mode & 07777), uid, gid);
  n.nlink = 1;
  n.lookups = 1;
  dir->entries[name] = n.ino;
  touch(*dir);
  recharge(n);
  n.opens = 1;
  *fh = next_fh_++;
  handles_[*fh] = Handle{n.ino, flags};
  fill_stat(n, st);
  return 0;
}

int MemFs::mkdir(std::uint64_t parent, const std::string& name, mode_t mode, uid_t uid, gid_t gid, struct stat* st) {
  std::lock_guard lk(mu_);
  Inode* dir = find_dir(parent);
  if (dir == nullptr) return -ENOENT;
  if (name.size() > 255) return -ENAMETOOLONG;
  if (dir->entries.count(name) != 0) return -EEXIST;
  Inode& n = new_inode(S_IFDIR | (mode & 07777), uid, gid);
  n.nlink = 2;
  n.lookups = 1;
  n.parent = dir->ino;
  dir->entries[name] = n.ino;
  ++dir->nlink;
  touch(*dir);
  fill_stat(n, st);
  return 0;
}

// Removes one visible name; the inode may live on (durable name, handles, kernel references).
void MemFs::unlink_name(Inode& dir, const std::string& name) {
  auto it = dir.entries.find(name);
  Inode* n = find(it->second);
  dir.entries.erase(it);
  touch(dir);
  if (n == nullptr) return;
  if (n->is_dir()) {
    n->nlink = 0;
    --dir.nlink;
  } else {
    --n->nlink;
  }
  maybe_free(*n);
}

int MemFs::unlink(std::uint64_t parent, const std::string& name) {
  std::lock_guard lk(mu_);
  Inode* dir = find_dir(parent);
  if (dir == nullptr) return -ENOENT;
  auto it = dir->entries.find(name);
  if (it == dir->entries.end()) return -ENOENT;
  Inode* n = find(it->second);
  if (n != nullptr && n->is_dir()) return -EISDIR;
  unlink_name(*dir, name);
  return 0;
}

int MemFs::rmdir(std::uint64_t parent, const std::string& name) {
  std::lock_guard lk(mu_);
  Inode* dir = find_dir(parent);
  if (dir == nullptr) return -ENOENT;
  auto it = dir->entries.find(name);
  if (it == dir->entries.end()) return -ENOENT;
  Inode* n = find(it->second);
  if (n == nullptr || !n->is_dir()) return -ENOTDIR;
  if (!n->entries.empty()) return -ENOTEMPTY;
  unlink_name(*dir, name);
  return 0;
}

int MemFs::rename(std::uint64_t parent, const std::string& name, std::uint64_t newparent,
                  const std::string& newname, unsigned flags) {
  std::lock_guard lk(mu_);
  if ((flags & ~static_cast<unsigned>(RENAME_NOREPLACE | RENAME_EXCHANGE)) != 0 ||
      flags == (RENAME_NOREPLACE | RENAME_EXCHANGE))
    return -EINVAL;
  Inode* from = find_dir(parent);
  Inode* to = find_dir(newparent);
  if (from == nullptr || to == nullptr) return -ENOENT;
  auto it = from->entries.find(name);
  if (it == from->entries.end()) return -ENOENT;
  Inode* n = find(it->second);
  if (n == nullptr) return -ENOENT;
  if (newname.size() > 255) return -ENAMETOOLONG;
  if ((flags & RENAME_EXCHANGE) != 0) {
    auto other = to->entries.find(newname);
    if (other == to->entries.end()) return -ENOENT;
    Inode* m = find(other->second);
    if (m == nullptr) return -ENOENT;
    // Directories swapped between two parents would need their parent links moved too; walseg
    // exchanges files within one directory only.
    if (from != to && (n->is_dir() || m->is_dir())) return -EINVAL;
    std::swap(it->second, other->second);
    touch(*from);
    touch(*to);
    return 0;
  }
  // A directory may not move below itself.
  if (n->is_dir())
    for (Inode* p = to; p != nullptr; p = p->ino == kRootIno ? nullptr : find_dir(p->parent))
      if (p == n) return -EINVAL;
  auto old = to->entries.find(newname);
  if (old != to->entries.end()) {
    if (old->second == n->ino) return 0;  // same inode: POSIX says do nothing
    if ((flags & RENAME_NOREPLACE) != 0) return -EEXIST;
    Inode* victim = find(old->second);
    if (victim != nullptr && victim->is_dir() != n->is_dir()) return n->is_dir() ? -ENOTDIR : -EISDIR;
    if (victim != nullptr && victim->is_dir() && !victim->entries.empty()) return -ENOTEMPTY;
    unlink_name(*to, newname);
  }
  std::uint64_t ino = n->ino;
  from->entries.erase(name);
  to->entries[newname] = ino;
  if (n->is_dir() && from != to) {
    --from->nlink;
    ++to->nlink;
    n->parent = to->ino;
  }
  touch(*from);
  touch(*to);
  return 0;
}

int MemFs::link(std::uint64_t ino, std::uint64_t newparent, const std::string& newname, struct stat* st) {
  std::lock_guard lk(mu_);
  Inode* n = find(ino);
  Inode* dir = find_dir(newparent);
  if (n == nullptr || dir == nullptr) return -ENOENT;
  if (n->is_dir()) return -EPERM;
  if (dir->entries.count(newname) != 0) return -EEXIST;
  dir->entries[newname] = ino;
  ++n->nlink;
  ++n->lookups;
  recharge(*n);
  touch(*dir);
  fill_stat(*n, st);
  return 0;
}

int MemFs::readdir(std::uint64_t ino, std::vector<DirEntry>* out) {
  std::lock_guard lk(mu_);
  Inode* dir = find_dir(ino);
  if (dir == nullptr) return -ENOTDIR;
  out->clear();
  DirEntry e;
  fill_stat(*dir, &e.st);
  out->push_back({".", e.st});
  Inode* up = find_dir(dir->parent);
  fill_stat(up != nullptr ? *up : *dir, &e.st);
  out->push_back({"..", e.st});
  for (const auto& [name, target] : dir->entries)
    if (Inode* n = find(target)) {
      fill_stat(*n, &e.st);
      out->push_back({name, e.st});
    }
  return 0;
}

void MemFs::statfs(struct statvfs* out) {
  std::lock_guard lk(mu_);
  *out = {};
  // Unlimited capacity reports 64 GiB, so that tools computing free space see something finite.
  std::uint64_t total = capacity_bytes_ != 0 ? capacity_bytes_ / kBlockBytes : (64ULL << 30) / kBlockBytes;
  out->f_bsize = kBlockBytes;
  out->f_frsize = kBlockBytes;
  out->f_blocks = total;
  out->f_bfree = total > used_blocks_ ? total - used_blocks_ : 0;
  out->f_bavail = out->f_bfree;
  out->f_files = 1 << 20;
  out->f_ffree = out->f_files - inodes_.size();
  out->f_favail = out->f_ffree;
  out->f_namemax = 255;
}

}  // namespace lazyfs
