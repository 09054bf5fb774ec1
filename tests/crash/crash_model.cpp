// CrashModel: following the recorded events (tests/crash/crash_model.h). Choosing and
// building crash states is in crash_state.cpp.
#include "crash_model.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace walseg_crash {

namespace fs = std::filesystem;

namespace {

std::string normal(const std::string& p) {
  std::string s = fs::path(p).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool is_sync(Op op) { return op == Op::kFsync || op == Op::kFdatasync; }

}  // namespace

void apply_to_image(const Event& e, std::vector<std::byte>& image, std::uint64_t lo,
                    std::uint64_t hi, bool keep_size) {
  auto zero_range = [&](std::uint64_t from, std::uint64_t to) {
    from = std::max(from, lo);
    to = std::min({to, hi, static_cast<std::uint64_t>(image.size())});
    if (from < to) std::fill(image.begin() + from, image.begin() + to, std::byte{0});
  };
  const std::uint64_t end = e.offset + e.length;
  switch (e.op) {
    case Op::kWrite: {
      if (!keep_size && image.size() < end) image.resize(end);
      const std::uint64_t from = std::max(e.offset, lo);
      const std::uint64_t to = std::min(end, hi);
      if (from >= to) return;
      if (image.size() < to) image.resize(to);
      if (e.zeros)
        std::fill(image.begin() + from, image.begin() + to, std::byte{0});
      else
        std::copy(e.data.begin() + (from - e.offset), e.data.begin() + (to - e.offset), image.begin() + from);
      return;
    }
    case Op::kTruncate:
    case Op::kOpen: {  // an open with O_TRUNC
      const std::uint64_t size = e.op == Op::kOpen ? 0 : e.offset;
      if (keep_size) zero_range(size, ~std::uint64_t{0});
      else image.resize(size);
      return;
    }
    case Op::kFallocate:
      // Reserving blocks changes no content; zeroing and punching do (not used by walseg).
      if (e.mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) zero_range(e.offset, end);
      if (!keep_size && !(e.mode & FALLOC_FL_KEEP_SIZE) && image.size() < end) image.resize(end);
      return;
    default:
      return;
  }
}

CrashModel::CrashModel(const std::vector<Event>& events, std::string root)
    : events_(events), root_(normal(root)) {
  dirs_.push_back(Dir{""});
  dir_by_rel_[""] = 0;
}

void CrashModel::load_existing() {
  for (auto it = fs::recursive_directory_iterator(root_); it != fs::recursive_directory_iterator(); ++it) {
    std::string rel = fs::relative(it->path(), root_).string();
    std::size_t dir = 0;
    std::string name;
    if (!split(normal(it->path().string()), &dir, &name)) continue;
    if (it->is_directory()) {
      Node node{true, dirs_.size()};
      dirs_.push_back(Dir{rel});
      dir_by_rel_[rel] = node.id;
      dirs_[dir].base[name] = dirs_[dir].current[name] = node;
    } else if (it->is_regular_file()) {
      std::ifstream in(it->path(), std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      Inode f;
      f.base.resize(bytes.size());
      std::memcpy(f.base.data(), bytes.data(), bytes.size());
      f.current = f.base;
      f.renamed_when_durable = true;  // made before recording: its history is not ours to judge
      struct stat st{};
      if (::stat(it->path().c_str(), &st) == 0) inode_by_identity_[{st.st_dev, st.st_ino}] = inodes_.size();
      Node node{false, inodes_.size()};
      inodes_.push_back(std::move(f));
      dirs_[dir].base[name] = dirs_[dir].current[name] = node;
    }
  }
}

void CrashModel::advance(std::size_t n) {
  if (n > events_.size()) throw std::out_of_range("CrashModel::advance beyond the record");
  for (; applied_ < n; ++applied_) apply_event(applied_);
}

void CrashModel::inconsistent(std::size_t i, const std::string& what) {
  const Event& e = events_[i];
  inconsistencies_.push_back("event " + std::to_string(i) + " (" + std::string(walseg::io_record::to_string(e.op)) +
                             " " + e.path + (e.path2.empty() ? "" : " -> " + e.path2) + "): " + what);
}

// Splits an absolute path under the root into its directory's index and its entry name;
// false for a path outside the root (or the root itself) or in a directory not followed.
bool CrashModel::split(const std::string& path, std::size_t* dir, std::string* name) {
  const std::string p = normal(path);
  if (p.size() <= root_.size() || p.compare(0, root_.size(), root_) != 0 || p[root_.size()] != '/') return false;
  const std::string rel = p.substr(root_.size() + 1);
  const auto slash = rel.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : rel.substr(0, slash);
  auto it = dir_by_rel_.find(parent);
  if (it == dir_by_rel_.end()) return false;
  *dir = it->second;
  *name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  return true;
}

std::size_t* CrashModel::inode_of(const Event& e) {
  auto it = inode_by_identity_.find({e.dev, e.ino});
  return it == inode_by_identity_.end() ? nullptr : &it->second;
}

void CrashModel::apply_event(std::size_t i) {
  const Event& e = events_[i];
  if (e.result_errno != 0 && !is_sync(e.op)) return;  // changed nothing (a failed sync matters)
  switch (e.op) {
    case Op::kOpen: on_open(i, e); break;
    case Op::kWrite:
    case Op::kTruncate:
    case Op::kFallocate: on_data(i, e); break;
    case Op::kFsync:
    case Op::kFdatasync: on_sync(e); break;
    case Op::kRename:
    case Op::kLink:
    case Op::kUnlink:
    case Op::kExchange:
    case Op::kMkdir: on_names(i, e); break;
    case Op::kDirFsync: on_dir_fsync(e); break;
    case Op::kClose: break;  // closing makes nothing durable
  }
}

void CrashModel::on_open(std::size_t i, const Event& e) {
  std::size_t d = 0;
  std::string name;
  if (!split(e.path, &d, &name)) return;
  Dir& dir = dirs_[d];
  auto it = dir.current.find(name);
  if (it != dir.current.end()) {
    if (it->second.is_dir) return;
    inode_by_identity_[{e.dev, e.ino}] = it->second.id;
    Inode& f = inodes_[it->second.id];
    if (e.flags & O_TRUNC) {
      apply_to_image(e, f.current);
      f.pending.push_back(Pending{static_cast<std::uint32_t>(i), false, false});
    }
    return;
  }
  if (!(e.flags & O_CREAT)) {
    inconsistent(i, "opened a file the model does not know");
    return;
  }
  // A new file: a new inode even if the kernel reused the number of one a durable name may
  // still refer to after a crash.
  Node node{false, inodes_.size()};
  inodes_.emplace_back();
  inode_by_identity_[{e.dev, e.ino}] = node.id;
  dir.current[name] = node;
  dir.pending.push_back(NsOp{static_cast<std::uint32_t>(i), NsKind::kCreate, name, "", node});
}

void CrashModel::on_data(std::size_t i, const Event& e) {
  std::size_t* id = inode_of(e);
  if (id == nullptr) {
    std::size_t d = 0;
    std::string name;
    if (split(e.path, &d, &name)) inconsistent(i, "changed a file the model does not know");
    return;
  }
  Inode& f = inodes_[*id];
  apply_to_image(e, f.current);
  const bool forced = e.op == Op::kWrite && (e.flags & O_DSYNC) != 0;  // O_SYNC includes O_DSYNC
  f.pending.push_back(Pending{static_cast<std::uint32_t>(i), forced, false});
}

// A successful sync makes durable what completed before it began, except what an earlier
// failed sync should have covered; a failed one marks that as never to become durable.
// XXX: a poisoned write that shares a block with a write folded later is dropped (its bytes
// are then lost there): keeping both would let a state show the older bytes over the newer.
void CrashModel::on_sync(const Event& e) {
  std::size_t* id = inode_of(e);
  if (id == nullptr) return;
  Inode& f = inodes_[*id];
  if (e.result_errno != 0) {
    for (Pending& p : f.pending)
      if (p.event < e.covers_before && !p.forced) p.poisoned = true;
    return;
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> folded;  // byte ranges now durable
  std::vector<Pending> rest;
  for (const Pending& p : f.pending) {
    const Event& pe = events_[p.event];
    if (p.event < e.covers_before && !p.poisoned) {
      apply_to_image(pe, f.base);
      folded.emplace_back(pe.offset / kTearBlockBytes, (pe.offset + pe.length) / kTearBlockBytes);
    } else {
      rest.push_back(p);
    }
  }
  if (folded.empty()) return;
  std::erase_if(rest, [&](const Pending& p) {
    if (!p.poisoned) return false;
    const Event& pe = events_[p.event];
    const std::uint64_t lo = pe.offset / kTearBlockBytes, hi = (pe.offset + pe.length) / kTearBlockBytes;
    return std::any_of(folded.begin(), folded.end(), [&](const auto& r) { return lo <= r.second && r.first <= hi; });
  });
  f.pending = std::move(rest);
  ++f.version;
}

void CrashModel::on_names(std::size_t i, const Event& e) {
  std::size_t d = 0, d2 = 0;
  std::string a, b;
  if (!split(e.path, &d, &a)) return;
  Dir& dir = dirs_[d];
  const auto ev = static_cast<std::uint32_t>(i);
  if (e.op == Op::kMkdir) {
    Node node{true, dirs_.size()};
    const std::string rel = dir.rel.empty() ? a : dir.rel + "/" + a;
    dirs_.push_back(Dir{rel});  // invalidates `dir`
    dir_by_rel_[rel] = node.id;
    dirs_[d].current[a] = node;
    dirs_[d].pending.push_back(NsOp{ev, NsKind::kCreate, a, "", node});
    return;
  }
  auto it = dir.current.find(a);
  if (it == dir.current.end()) return inconsistent(i, "no such name in the model");
  const Node node = it->second;
  if (!node.is_dir) {
    std::size_t* id = inode_of(e);
    if (id != nullptr && *id != node.id) return inconsistent(i, "the name refers to another file in the model");
  }
  if (e.op == Op::kUnlink) {
    dir.current.erase(it);
    dir.pending.push_back(NsOp{ev, NsKind::kUnlink, a, "", node});
    return;
  }
  if (!split(e.path2, &d2, &b) || d2 != d) return inconsistent(i, "rename or link across directories");
  if (e.op == Op::kExchange) {
    auto other = dir.current.find(b);
    if (other == dir.current.end()) return inconsistent(i, "exchange with a name not in the model");
    const Node node2 = other->second;
    dir.current[a] = node2;
    dir.current[b] = node;
    dir.pending.push_back(NsOp{ev, NsKind::kExchange, a, b, node, node2});
    if (!node.is_dir) inodes_[node.id].renamed_when_durable = inodes_[node.id].pending.empty();
    return;
  }
  if (e.op == Op::kRename) dir.current.erase(it);
  dir.current[b] = node;
  dir.pending.push_back(NsOp{ev, e.op == Op::kRename ? NsKind::kRename : NsKind::kLink, a, b, node});
  if (!node.is_dir) inodes_[node.id].renamed_when_durable = inodes_[node.id].pending.empty();
}

void CrashModel::on_dir_fsync(const Event& e) {
  const std::string p = normal(e.path);
  std::string rel;
  if (p != root_) {
    std::size_t d = 0;
    std::string name;
    if (!split(p, &d, &name)) return;
    rel = dirs_[d].rel.empty() ? name : dirs_[d].rel + "/" + name;
  }
  auto it = dir_by_rel_.find(rel);
  if (it == dir_by_rel_.end() || e.result_errno != 0) return;
  Dir& dir = dirs_[it->second];
  std::vector<NsOp> rest;
  for (NsOp& op : dir.pending) {
    if (op.event < e.covers_before) apply_ns(op, dir.base);
    else rest.push_back(std::move(op));
  }
  dir.pending = std::move(rest);
  ++dir.version;
}

void CrashModel::apply_ns(const NsOp& op, std::map<std::string, Node>& names) {
  auto at = names.find(op.name);
  switch (op.kind) {
    case NsKind::kCreate: names[op.name] = op.node; return;
    case NsKind::kUnlink:
      if (at != names.end() && at->second == op.node) names.erase(at);
      return;
    case NsKind::kRename:
      // Atomic: the file leaves the old name exactly when it gets the new one.
      if (at != names.end() && at->second == op.node) names.erase(at);
      names[op.name2] = op.node;
      return;
    case NsKind::kLink: names[op.name2] = op.node; return;
    case NsKind::kExchange:
      // Atomic, like a rename: both names change at once. Each names what the other did.
      names[op.name] = op.node2;
      names[op.name2] = op.node;
      return;
  }
}

}  // namespace walseg_crash
