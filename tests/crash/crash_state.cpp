// CrashModel: choosing, building and materialising crash states (tests/crash/crash_model.h).
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <stdexcept>

#include "crash_model.h"

namespace walseg_crash {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Signature {
  std::uint64_t h = 0;
  void add(std::uint64_t v) { h = mix(h ^ v); }
  void add(const std::string& s) {
    for (char ch : s) add(static_cast<unsigned char>(ch));
    add(s.size());
  }
};

bool coin(std::mt19937_64& rng) { return (rng() & 1) != 0; }
std::uint64_t pick(std::mt19937_64& rng, std::uint64_t lo, std::uint64_t hi) {  // [lo, hi]
  return lo + rng() % (hi - lo + 1);
}

}  // namespace

std::string_view to_string(Mode m) {
  switch (m) {
    case Mode::kAllLost: return "all-lost";
    case Mode::kAllKept: return "all-kept";
    case Mode::kRandom: return "random";
  }
  return "?";
}

// In a random state a directory keeps a prefix of its pending operations (a journal that
// committed in order) or any subset of them (no order promised without an fsync).
std::map<std::string, CrashModel::Node> CrashModel::choose_names(const Dir& d, Mode mode, std::mt19937_64& rng,
                                                                 bool* reordered) const {
  if (mode == Mode::kAllLost || d.pending.empty()) return d.base;
  if (mode == Mode::kAllKept) return d.current;
  std::map<std::string, Node> names = d.base;
  const bool prefix = coin(rng);
  const std::size_t n = prefix ? pick(rng, 0, d.pending.size()) : d.pending.size();
  bool dropped = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (prefix || coin(rng)) {
      apply_ns(d.pending[i], names);
      *reordered = *reordered || dropped;
    } else {
      dropped = true;
    }
  }
  return names;
}

std::vector<std::uint64_t> CrashModel::size_history(const Inode& f) const {
  std::vector<std::uint64_t> sizes{f.base.size()};
  for (const Pending& p : f.pending) {
    const Event& e = events_[p.event];
    std::uint64_t s = sizes.back();
    if (e.op == Op::kWrite) s = std::max(s, e.offset + e.length);
    else if (e.op == Op::kTruncate) s = e.offset;
    else if (e.op == Op::kOpen) s = 0;
    else if (e.op == Op::kFallocate && !(e.mode & FALLOC_FL_KEEP_SIZE)) s = std::max(s, e.offset + e.length);
    sizes.push_back(s);
  }
  return sizes;
}

// For each 4 kB block an unsynced operation changed, the positions (in f.pending) of those
// operations, in order.
std::map<std::uint64_t, std::vector<std::uint32_t>> CrashModel::touched_blocks(const Inode& f) const {
  std::map<std::uint64_t, std::vector<std::uint32_t>> t;
  auto sizes = size_history(f);
  const std::uint64_t most = std::max(*std::max_element(sizes.begin(), sizes.end()),
                                      static_cast<std::uint64_t>(f.base.size()));
  auto touch = [&](std::uint64_t from, std::uint64_t to, std::uint32_t pos) {
    for (std::uint64_t b = from / kTearBlockBytes; from < to && b <= (to - 1) / kTearBlockBytes; ++b) t[b].push_back(pos);
  };
  for (std::uint32_t pos = 0; pos < f.pending.size(); ++pos) {
    const Event& e = events_[f.pending[pos].event];
    if (e.op == Op::kWrite) touch(e.offset, e.offset + e.length, pos);
    else if (e.op == Op::kTruncate || e.op == Op::kOpen) touch(e.op == Op::kOpen ? 0 : e.offset, most, pos);
    else if (e.op == Op::kFallocate && (e.mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
      touch(e.offset, e.offset + e.length, pos);
  }
  return t;
}

// A random file state is either ordered (the first k unsynced operations reached the disk,
// as writeback in order would leave it) or torn (each block independently at any prefix of
// the operations that touched it, the size at any point of its history).
Choice::Inode CrashModel::choose_inode(std::size_t id, Mode mode, std::mt19937_64& rng) const {
  const Inode& f = inodes_[id];
  Choice::Inode c{id, f.base.size(), {}};
  if (f.pending.empty()) return c;
  const auto sizes = size_history(f);
  const std::size_t n = f.pending.size();
  std::size_t min_k = 0;  // operations durable on return must be there
  for (std::size_t i = 0; i < n; ++i)
    if (f.pending[i].forced) min_k = i + 1;
  std::size_t k = mode == Mode::kAllKept ? n : mode == Mode::kAllLost ? min_k : pick(rng, min_k, n);
  c.size = sizes[k];
  const bool torn = mode == Mode::kRandom && coin(rng);
  if (torn && k < n && sizes[k + 1] > sizes[k] + 1 && coin(rng)) {
    c.size = pick(rng, sizes[k] + 1, sizes[k + 1] - 1);  // size updated part of the way
    c.odd_size = true;
  }
  const auto touched = touched_blocks(f);
  for (const auto& [block, list] : touched) {
    std::size_t min_b = 0, upto = 0;
    for (std::size_t j = 0; j < list.size(); ++j) {
      if (f.pending[list[j]].forced) min_b = j + 1;
      if (list[j] < k) upto = j + 1;
    }
    std::size_t kb = mode == Mode::kAllKept ? list.size() : mode == Mode::kAllLost ? min_b : upto;
    if (torn) kb = pick(rng, min_b, list.size());
    if (kb > 0) c.blocks.emplace_back(block, static_cast<std::uint32_t>(kb));
  }
  c.torn = torn && !in_order(f, touched, c.blocks);
  return c;
}

// Whether the block choices are what the first k' operations alone leave, for some k'.
bool CrashModel::in_order(const Inode& f, const std::map<std::uint64_t, std::vector<std::uint32_t>>& touched,
                          const std::vector<std::pair<std::uint64_t, std::uint32_t>>& blocks) const {
  std::map<std::uint64_t, std::uint32_t> chosen(blocks.begin(), blocks.end());
  for (std::size_t k = 0; k <= f.pending.size(); ++k) {
    bool all = true;
    for (const auto& [block, list] : touched) {
      std::uint32_t upto = 0;
      while (upto < list.size() && list[upto] < k) ++upto;
      auto it = chosen.find(block);
      if ((it == chosen.end() ? 0 : it->second) != upto) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

Choice CrashModel::choose(Mode mode, std::mt19937_64& rng) const {
  Choice c;
  std::set<std::size_t> ids;
  std::vector<std::pair<std::size_t, std::string>> todo{{0, ""}};
  while (!todo.empty()) {
    auto [d, rel] = todo.back();
    todo.pop_back();
    if (d != 0) c.dirs.push_back(rel);
    for (const auto& [name, node] : choose_names(dirs_[d], mode, rng, &c.names_reordered)) {
      std::string path = rel.empty() ? name : rel + "/" + name;
      if (node.is_dir) {
        todo.emplace_back(node.id, path);
        continue;
      }
      c.files.push_back(StateFile{path, node.id, inodes_[node.id].renamed_when_durable});
      ids.insert(node.id);
    }
  }
  Signature sig;
  for (const std::string& d : c.dirs) sig.add(d);
  for (const StateFile& f : c.files) {
    sig.add(f.path);
    sig.add(f.inode);
  }
  for (std::size_t id : ids) {
    c.inodes.push_back(choose_inode(id, mode, rng));
    const Choice::Inode& ci = c.inodes.back();
    sig.add(ci.id);
    sig.add(inodes_[id].version);
    sig.add(ci.size);
    for (const auto& [b, k] : ci.blocks) {
      sig.add(b);
      sig.add(k);
    }
  }
  c.signature = sig.h;
  return c;
}

CrashState CrashModel::build(const Choice& c) const {
  CrashState s;
  s.dirs = c.dirs;
  s.files = c.files;
  s.names_reordered = c.names_reordered;
  for (const Choice::Inode& ci : c.inodes) {
    s.torn = s.torn || ci.torn;
    s.odd_size = s.odd_size || ci.odd_size;
    const Inode& f = inodes_[ci.id];
    std::vector<std::byte> img = f.base;
    if (!ci.blocks.empty()) {
      const auto touched = touched_blocks(f);
      for (const auto& [b, k] : ci.blocks) {
        const auto& list = touched.at(b);
        for (std::uint32_t j = 0; j < k; ++j)
          apply_to_image(events_[f.pending[list[j]].event], img, b * kTearBlockBytes, (b + 1) * kTearBlockBytes, true);
      }
    }
    img.resize(ci.size);
    s.images[ci.id].bytes = std::move(img);
  }
  return s;
}

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error("materialise: " + what + " \"" + path + "\": " + std::strerror(errno));
}

// Only blocks holding a non-zero byte are written; the rest are holes, which read as zeros.
void write_image(const std::string& path, const std::vector<std::byte>& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) fail("could not create", path);
  static const std::byte kZero[kTearBlockBytes] = {};
  const std::size_t size = bytes.size();
  for (std::size_t off = 0; off < size;) {
    std::size_t len = std::min<std::size_t>(kTearBlockBytes, size - off);
    if (std::memcmp(bytes.data() + off, kZero, len) == 0) {
      off += len;
      continue;
    }
    std::size_t end = off + len;  // extend over the following non-zero blocks: one write
    while (end < size) {
      std::size_t l = std::min<std::size_t>(kTearBlockBytes, size - end);
      if (std::memcmp(bytes.data() + end, kZero, l) == 0) break;
      end += l;
    }
    for (std::size_t done = off; done < end;) {
      ssize_t r = ::pwrite(fd, bytes.data() + done, end - done, static_cast<off_t>(done));
      if (r <= 0) fail("could not write", path);
      done += static_cast<std::size_t>(r);
    }
    off = end;
  }
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) fail("could not size", path);
  if (::close(fd) != 0) fail("could not close", path);
}

}  // namespace

void materialise(const CrashState& s, const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir);
  for (const std::string& d : s.dirs)
    if (::mkdir((dir + "/" + d).c_str(), 0700) != 0) fail("could not create directory", dir + "/" + d);
  // Files are made in the order the run made them (inode ids count up as files are created),
  // so that their birth times keep that order: walseg tells its leftovers from copies by it.
  std::vector<const StateFile*> by_birth;
  for (const StateFile& f : s.files) by_birth.push_back(&f);
  std::stable_sort(by_birth.begin(), by_birth.end(),
                   [](const StateFile* a, const StateFile* b) { return a->inode < b->inode; });
  std::map<std::size_t, std::string> first_name;
  for (const StateFile* f : by_birth) {
    const std::string path = dir + "/" + f->path;
    auto [it, fresh] = first_name.emplace(f->inode, path);
    if (!fresh) {
      if (::link(it->second.c_str(), path.c_str()) != 0) fail("could not link", path);
      continue;
    }
    write_image(path, s.images.at(f->inode).bytes);
  }
}

std::string describe(const CrashState& s) {
  std::ostringstream out;
  for (const StateFile& f : s.files)
    out << "  " << f.path << ": " << s.images.at(f.inode).bytes.size() << " bytes (file " << f.inode
        << (f.renamed_when_durable ? "" : ", not renamed when durable") << ")\n";
  return out.str();
}

}  // namespace walseg_crash
