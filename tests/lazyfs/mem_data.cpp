// MemFs (mem_fs.h): file data in 4 kB blocks, handles, and what fsync, fdatasync, O_DSYNC and
// a directory fsync make durable.
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/falloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mem_fs.h"

namespace lazyfs {
namespace {

// fallocate'd blocks: allocated, read as zeros, copied before the first write.
const BlockRef& unwritten() {
  static const BlockRef block = std::make_shared<Block>();
  return block;
}

std::uint64_t blocks_for(std::uint64_t bytes) { return (bytes + kBlockBytes - 1) / kBlockBytes; }

bool is_hole(const FileData& d, std::uint64_t b) { return b >= d.blocks.size() || !d.blocks[b]; }

}  // namespace

std::uint64_t MemFs::free_blocks() const {
  if (capacity_bytes_ == 0) return UINT64_MAX;
  std::uint64_t total = capacity_bytes_ / kBlockBytes;
  return total > used_blocks_ ? total - used_blocks_ : 0;
}

Inode* MemFs::handle_inode(std::uint64_t fh, int* flags) {
  auto it = handles_.find(fh);
  if (it == handles_.end()) {
    ++counters_.stale_ops;  // a handle from before a drop, or never issued
    return nullptr;
  }
  if (flags != nullptr) *flags = it->second.flags;
  return find(it->second.ino);
}

int MemFs::open(std::uint64_t ino, int flags, std::uint64_t* fh) {
  std::lock_guard lk(mu_);
  Inode* n = find(ino);
  if (n == nullptr) return -ENOENT;
  if (n->is_dir()) return -EISDIR;
  if ((flags & O_TRUNC) != 0 && (flags & O_ACCMODE) != O_RDONLY) resize(*n, 0);
  ++n->opens;
  recharge(*n);
  *fh = next_fh_++;
  handles_[*fh] = Handle{ino, flags};
  return 0;
}

void MemFs::release(std::uint64_t fh) {
  std::lock_guard lk(mu_);
  auto it = handles_.find(fh);
  if (it == handles_.end()) return;  // stale since a drop: its inode's counts were rebuilt
  Inode* n = find(it->second.ino);
  handles_.erase(it);
  if (n == nullptr) return;
  --n->opens;
  maybe_free(*n);
}

int MemFs::read(std::uint64_t fh, std::uint64_t off, std::size_t size, std::vector<std::byte>* out) {
  std::lock_guard lk(mu_);
  Inode* n = handle_inode(fh, nullptr);
  if (n == nullptr) return -EIO;
  out->clear();
  if (off >= n->data.size) return 0;
  std::uint64_t end = std::min<std::uint64_t>(n->data.size, off + size);
  out->resize(end - off);
  for (std::uint64_t pos = off; pos < end;) {
    std::uint64_t b = pos / kBlockBytes, in = pos % kBlockBytes;
    std::uint64_t len = std::min(kBlockBytes - in, end - pos);
    if (is_hole(n->data, b)) std::memset(out->data() + (pos - off), 0, len);
    else std::memcpy(out->data() + (pos - off), n->data.blocks[b]->data() + in, len);
    pos += len;
  }
  return 0;
}

// Copies into the visible blocks, allocating holes while the capacity allows: returns the bytes
// written, short at the first block that does not fit, -ENOSPC if none fits.
long MemFs::write_blocks(Inode& n, std::uint64_t off, const std::byte* src, std::size_t size) {
  std::uint64_t end = off + size;
  std::uint64_t room = free_blocks();
  for (std::uint64_t b = off / kBlockBytes; b < blocks_for(end); ++b)
    if (is_hole(n.data, b)) {
      if (room == 0) {
        end = std::max(off, b * kBlockBytes);
        break;
      }
      --room;
    }
  if (end == off) {
    ++counters_.enospc;
    return -ENOSPC;
  }
  std::uint64_t nblocks = blocks_for(end);
  if (n.data.blocks.size() < nblocks) n.data.blocks.resize(nblocks);
  if (n.dirty.size() < nblocks) n.dirty.resize(nblocks);
  for (std::uint64_t pos = off; pos < end;) {
    std::uint64_t b = pos / kBlockBytes, in = pos % kBlockBytes;
    std::uint64_t len = std::min(kBlockBytes - in, end - pos);
    BlockRef& r = n.data.blocks[b];
    if (!r) {
      r = std::make_shared<Block>();
      add_allocated(n, 1);
    } else if (r == unwritten() || r.use_count() > 1) {
      r = std::make_shared<Block>(*r);  // the durable copy (or the shared zeros) keeps the old bytes
    }
    std::memcpy(r->data() + in, src + (pos - off), len);
    n.dirty[b] = true;
    pos += len;
  }
  n.data.size = std::max(n.data.size, end);
  touch(n);
  return static_cast<long>(end - off);
}

long MemFs::write(std::uint64_t fh, std::uint64_t off, const void* buf, std::size_t size) {
  std::lock_guard lk(mu_);
  int flags = 0;
  Inode* n = handle_inode(fh, &flags);
  if (n == nullptr) return -EIO;
  if (size == 0) return 0;
  long r = write_blocks(*n, off, static_cast<const std::byte*>(buf), size);
  if (r < 0) return r;
  ++counters_.writes;
  counters_.bytes_written += static_cast<std::uint64_t>(r);
  // O_SYNC includes O_DSYNC's bit: either makes this write durable before it returns.
  if ((flags & O_DSYNC) != 0) {
    std::uint64_t end = off + static_cast<std::uint64_t>(r);
    persist_blocks(*n, off / kBlockBytes, blocks_for(end), std::max(n->durable.size, end));
  }
  return r;
}

// Truncation frees whole blocks past the new end and zeroes the rest of the last block, so a
// later extension reads zeros; every block whose content changed is marked dirty, including
// those past both ends, so that the next sync also removes them from the durable copy.
int MemFs::resize(Inode& n, std::uint64_t size) {
  std::uint64_t keep = blocks_for(size);
  std::uint64_t span = std::max({n.data.blocks.size(), n.durable.blocks.size(), n.dirty.size()});
  if (n.dirty.size() < span) n.dirty.resize(span);
  for (std::uint64_t b = keep; b < n.data.blocks.size(); ++b)
    if (n.data.blocks[b]) add_allocated(n, -1);
  if (n.data.blocks.size() > keep) n.data.blocks.resize(keep);
  for (std::uint64_t b = keep; b < span; ++b) n.dirty[b] = true;
  std::uint64_t tail = size % kBlockBytes;
  if (size < n.data.size && tail != 0 && !is_hole(n.data, keep - 1)) {
    BlockRef& r = n.data.blocks[keep - 1];
    if (r != unwritten()) {
      r = std::make_shared<Block>(*r);
      std::memset(r->data() + tail, 0, kBlockBytes - tail);
      n.dirty[keep - 1] = true;
    }
  }
  n.data.size = size;
  touch(n);
  return 0;
}

int MemFs::fallocate(std::uint64_t fh, int mode, std::uint64_t off, std::uint64_t len) {
  std::lock_guard lk(mu_);
  Inode* n = handle_inode(fh, nullptr);
  if (n == nullptr) return -EIO;
  if (no_fallocate_ || (mode & ~FALLOC_FL_KEEP_SIZE) != 0) return -EOPNOTSUPP;
  std::uint64_t end = off + len;
  std::uint64_t holes = 0;
  for (std::uint64_t b = off / kBlockBytes; b < blocks_for(end); ++b) holes += is_hole(n->data, b) ? 1 : 0;
  if (holes > free_blocks()) {
    ++counters_.enospc;
    return -ENOSPC;  // nothing allocated: callers see all or nothing
  }
  if (n->data.blocks.size() < blocks_for(end)) n->data.blocks.resize(blocks_for(end));
  if (n->dirty.size() < blocks_for(end)) n->dirty.resize(blocks_for(end));
  for (std::uint64_t b = off / kBlockBytes; b < blocks_for(end); ++b)
    if (!n->data.blocks[b]) {
      n->data.blocks[b] = unwritten();
      add_allocated(*n, 1);
      n->dirty[b] = true;
    }
  if ((mode & FALLOC_FL_KEEP_SIZE) == 0 && end > n->data.size) n->data.size = end;
  touch(*n);
  return 0;
}

// Copies the dirty blocks in [first, end) to the durable copy and sets its size.
void MemFs::persist_blocks(Inode& n, std::uint64_t first, std::uint64_t end, std::uint64_t durable_size) {
  end = std::min<std::uint64_t>(end, n.dirty.size());
  if (n.durable.blocks.size() < end) n.durable.blocks.resize(end);
  for (std::uint64_t b = first; b < end; ++b)
    if (n.dirty[b]) {
      n.durable.blocks[b] = b < n.data.blocks.size() ? n.data.blocks[b] : nullptr;
      n.dirty[b] = false;
    }
  n.durable.size = durable_size;
}

void MemFs::sync_file(Inode& n) {
  persist_blocks(n, 0, n.dirty.size(), n.data.size);
  n.durable.blocks.resize(n.data.blocks.size());
  n.dirty.assign(n.data.blocks.size(), false);
}

// A file's name is looked up at the call (inodes do not keep theirs): a linear walk over the
// directories, which is cheap at the sizes tests use and only done while a failure is armed.
bool MemFs::has_name_matching(std::uint64_t ino, const std::string& glob) const {
  for (const auto& [dino, d] : inodes_)
    if (d->is_dir())
      for (const auto& [name, target] : d->entries)
        if (target == ino && fnmatch(glob.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

bool MemFs::fsync_should_fail(const Inode& n, bool datasync) {
  if (fail_countdown_ == 0) return false;
  if (fail_kind_ == SyncKind::kFsync && datasync) return false;
  if (fail_kind_ == SyncKind::kFdatasync && !datasync) return false;
  if (!fail_glob_.empty() && !has_name_matching(n.ino, fail_glob_)) return false;
  return --fail_countdown_ == 0;
}

int MemFs::fsync(std::uint64_t fh, bool datasync) {
  std::lock_guard lk(mu_);
  Inode* n = handle_inode(fh, nullptr);
  if (n == nullptr) return -EIO;
  ++(datasync ? counters_.fdatasyncs : counters_.fsyncs);
  if (lie_fsync_) {
    ++counters_.lied_fsyncs;
    return 0;
  }
  if (fsync_should_fail(*n, datasync)) {
    // Linux after a writeback error: the pages are clean but were never written.
    ++counters_.failed_fsyncs;
    n->dirty.assign(n->dirty.size(), false);
    return -EIO;
  }
  sync_file(*n);
  return 0;
}

void MemFs::sync_dir(Inode& dir) {
  std::vector<std::uint64_t> dropped;
  for (const auto& [name, ino] : dir.durable_entries) {
    auto it = dir.entries.find(name);
    if (it == dir.entries.end() || it->second != ino) dropped.push_back(ino);
  }
  dir.durable_entries = dir.entries;
  for (std::uint64_t ino : dropped)
    if (Inode* n = find(ino)) maybe_free(*n);
}

int MemFs::fsyncdir(std::uint64_t ino) {
  std::lock_guard lk(mu_);
  Inode* dir = find_dir(ino);
  if (dir == nullptr) return -EIO;
  ++counters_.dir_fsyncs;
  sync_dir(*dir);
  return 0;
}

}  // namespace lazyfs
