// MemFs (mem_fs.h): the control commands: the power cut (drop), making everything durable
// (persist), arming a failing fsync, the capacity, and counters.
#include <algorithm>
#include <deque>
#include <random>
#include <set>

#include <fmt/format.h>

#include "mem_fs.h"

namespace lazyfs {
namespace {

std::uint64_t blocks_for(std::uint64_t bytes) { return (bytes + kBlockBytes - 1) / kBlockBytes; }

const char* kind_name(SyncKind k) {
  switch (k) {
    case SyncKind::kFsync: return "fsync";
    case SyncKind::kFdatasync: return "fdatasync";
    case SyncKind::kAny: break;
  }
  return "any";
}

}  // namespace

// Rebuilds link counts from the names now in place, walking from the root, and removes every
// inode no name reaches (its handles are gone already). Returns how many were removed.
std::uint64_t MemFs::relink_durable() {
  for (auto& [ino, n] : inodes_) n->nlink = 0;
  Inode& root = *find(kRootIno);
  root.nlink = 2;
  std::set<std::uint64_t> seen{kRootIno};
  std::deque<Inode*> todo{&root};
  while (!todo.empty()) {
    Inode* dir = todo.front();
    todo.pop_front();
    for (auto it = dir->entries.begin(); it != dir->entries.end();) {
      Inode* child = find(it->second);
      bool revisit = child != nullptr && child->is_dir() && seen.count(child->ino) != 0;
      if (child == nullptr || revisit) {  // a directory named twice keeps its first name
        it = dir->entries.erase(it);
        continue;
      }
      if (child->is_dir()) {
        child->nlink = 2;
        child->parent = dir->ino;
        ++dir->nlink;
        seen.insert(child->ino);
        todo.push_back(child);
      } else {
        ++child->nlink;
      }
      ++it;
    }
  }
  std::uint64_t lost = 0;
  for (auto it = inodes_.begin(); it != inodes_.end();) {
    Inode& n = *it->second;
    if (n.ino != kRootIno && n.nlink == 0) {
      it = inodes_.erase(it);
      ++lost;
      continue;
    }
    n.opens = 0;
    n.charged = false;
    ++it;
  }
  used_blocks_ = 0;
  for (auto& [ino, n] : inodes_) recharge(*n);
  return lost;
}

std::string MemFs::drop(std::uint64_t seed, unsigned keep_percent) {
  std::lock_guard lk(mu_);
  std::mt19937_64 rng(seed);
  std::uint64_t dropped = 0, kept = 0, undone = 0;
  for (auto& [ino, p] : inodes_) {
    Inode& n = *p;
    if (n.is_dir()) {
      for (const auto& [name, target] : n.entries) {
        auto it = n.durable_entries.find(name);
        undone += it == n.durable_entries.end() || it->second != target ? 1 : 0;
      }
      for (const auto& [name, target] : n.durable_entries) undone += n.entries.count(name) == 0 ? 1 : 0;
      n.entries = n.durable_entries;
      continue;
    }
    std::uint64_t inside = blocks_for(n.durable.size);
    for (std::uint64_t b = 0; b < n.dirty.size(); ++b) {
      if (!n.dirty[b]) continue;
      if (keep_percent > 0 && b < inside && rng() % 100 < keep_percent) {
        if (n.durable.blocks.size() <= b) n.durable.blocks.resize(b + 1);
        n.durable.blocks[b] = b < n.data.blocks.size() ? n.data.blocks[b] : nullptr;
        ++kept;
      } else {
        ++dropped;
      }
    }
    n.data = n.durable;
    n.dirty.assign(n.data.blocks.size(), false);
    n.allocated = static_cast<std::uint64_t>(
        std::count_if(n.data.blocks.begin(), n.data.blocks.end(), [](const BlockRef& r) { return r != nullptr; }));
  }
  handles_.clear();  // every handle is stale now: fh numbers are never reused
  std::uint64_t lost = relink_durable();
  ++counters_.drops;
  return fmt::format("ok drop: seed {} keep {}%: {} dirty blocks dropped, {} kept, {} names undone, "
                     "{} inodes lost",
                     seed, keep_percent, dropped, kept, undone, lost);
}

std::string MemFs::persist_all() {
  std::lock_guard lk(mu_);
  for (auto& [ino, n] : inodes_) {
    if (n->is_dir()) n->durable_entries = n->entries;
    else sync_file(*n);
  }
  return "ok persist: everything visible is durable";
}

std::string MemFs::fail_fsync(std::uint64_t nth, SyncKind kind, const std::string& name_glob) {
  std::lock_guard lk(mu_);
  fail_countdown_ = nth;
  fail_kind_ = kind;
  fail_glob_ = nth == 0 ? std::string() : name_glob;
  if (nth == 0) return "ok fail-fsync: disarmed";
  return fmt::format("ok fail-fsync: call {} of kind {}{} from now on fails with EIO", nth, kind_name(kind),
                     fail_glob_.empty() ? std::string() : " on a file named like \"" + fail_glob_ + "\"");
}

std::string MemFs::set_capacity(std::uint64_t bytes) {
  std::lock_guard lk(mu_);
  capacity_bytes_ = bytes;
  return fmt::format("ok capacity: {} bytes ({} used)", bytes, used_blocks_ * kBlockBytes);
}

std::string MemFs::lie_fsync(bool on) {
  std::lock_guard lk(mu_);
  lie_fsync_ = on;
  return on ? "ok lie-fsync: fsync and fdatasync now persist nothing" : "ok lie-fsync: off";
}

std::string MemFs::stats() {
  std::lock_guard lk(mu_);
  std::uint64_t dirty = 0;
  for (const auto& [ino, n] : inodes_) dirty += static_cast<std::uint64_t>(std::count(n->dirty.begin(), n->dirty.end(), true));
  const MemFsCounters& c = counters_;
  return fmt::format("ok used_bytes={} capacity_bytes={} inodes={} handles={} dirty_blocks={} writes={} "
                     "bytes_written={} fsyncs={} fdatasyncs={} dir_fsyncs={} failed_fsyncs={} lied_fsyncs={} "
                     "enospc={} drops={} stale_ops={} fail_armed={}",
                     used_blocks_ * kBlockBytes, capacity_bytes_, inodes_.size(), handles_.size(), dirty, c.writes,
                     c.bytes_written, c.fsyncs, c.fdatasyncs, c.dir_fsyncs, c.failed_fsyncs, c.lied_fsyncs, c.enospc, c.drops,
                     c.stale_ops, fail_countdown_);
}

}  // namespace lazyfs
