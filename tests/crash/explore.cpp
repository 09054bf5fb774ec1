// explore (tests/crash/explore.h).
#include "explore.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace walseg_crash {

namespace fs = std::filesystem;

namespace {

std::uint64_t state_seed(std::uint64_t seed, std::size_t cut, std::size_t k) {
  std::uint64_t x = seed ^ (static_cast<std::uint64_t>(cut) * 0x9E3779B97F4A7C15ull) ^ (k * 0xC2B2AE3D27D4EB4Full);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 31);
}

Mode mode_of(std::size_t k) { return k == 0 ? Mode::kAllLost : k == 1 ? Mode::kAllKept : Mode::kRandom; }

std::map<std::string, std::string> tree_of(const CrashState& s) {
  std::map<std::string, std::string> t;
  for (const StateFile& f : s.files) {
    const auto& b = s.images.at(f.inode).bytes;
    t[f.path] = std::string(reinterpret_cast<const char*>(b.data()), b.size());
  }
  return t;
}

std::string first_difference(const std::map<std::string, std::string>& want,
                             const std::map<std::string, std::string>& got) {
  for (const auto& [path, bytes] : want) {
    auto it = got.find(path);
    if (it == got.end()) return "\"" + path + "\" is on disk but not in the model's all-kept state";
    if (it->second != bytes)
      return "\"" + path + "\" differs: " + std::to_string(bytes.size()) + " bytes on disk, " +
             std::to_string(it->second.size()) + " in the model";
  }
  for (const auto& [path, bytes] : got)
    if (!want.count(path)) return "\"" + path + "\" is in the model's all-kept state but not on disk";
  return "";
}

struct Explorer {
  const std::vector<Event>& events;
  const ExploreOptions& o;
  const StateCheck& check;
  CrashModel model;
  std::set<std::uint64_t> seen;
  ExploreResult r;

  void report(std::size_t cut, std::size_t k, const CrashState& st, const std::string& problem) {
    // States the kernel's in-order writeback could not leave are counted apart: a problem
    // found only there is a different finding from one found in ordered states too.
    std::string kind = problem.substr(0, problem.find('\n'));
    if (st.torn) kind += " [states with a write torn out of order]";
    if (st.odd_size) kind += " [states with a size inside a write]";
    if (st.names_reordered) kind += " [states with directory operations kept out of order]";
    if (r.problems[kind]++ >= o.reproductions_per_kind) return;
    std::ostringstream out;
    out << kind << problem.substr(std::min(problem.size(), problem.find('\n'))) << "\n  reproduce: cut " << cut << " of " << events.size() << ", state " << k << " ("
        << to_string(mode_of(k)) << "), seed " << o.seed << "\n  last events before the cut:\n"
        << events_before(events, cut) << "  state:\n" << describe(st);
    if (!o.keep.empty()) {
      const std::string dir = o.keep + "/cut" + std::to_string(cut) + "-state" + std::to_string(k);
      materialise(st, dir);
      out << "  kept as " << dir << "\n";
    }
    r.reproductions.push_back(out.str());
  }

  void one_state(std::size_t cut, std::size_t k) {
    std::mt19937_64 rng(state_seed(o.seed, cut, k));
    Choice c = model.choose(mode_of(k), rng);
    const std::uint64_t expect = o.expectation ? o.expectation(cut) : 0;
    if (!seen.insert(state_seed(c.signature, expect, 0)).second) {
      ++r.duplicates;
      return;
    }
    CrashState st = model.build(c);
    if (o.final_tree && cut == events.size() && k == 1) {
      std::string diff = first_difference(*o.final_tree, tree_of(st));
      if (!diff.empty()) report(cut, k, st, "model differs from the disk after the last event\n  " + diff);
    }
    materialise(st, o.scratch);
    ++r.states;
    std::string problem = check(cut, st, o.scratch);
    if (!problem.empty()) report(cut, k, st, problem);
  }
};

}  // namespace

ExploreResult explore(const std::vector<Event>& events, const std::string& root, const ExploreOptions& o,
                      const StateCheck& check, const std::function<void(CrashModel&)>& prepare) {
  const auto t0 = std::chrono::steady_clock::now();
  Explorer x{events, o, check, CrashModel(events, root), {}, {}};
  if (prepare) prepare(x.model);
  for (std::size_t cut = 0; cut <= events.size(); ++cut) {
    if (o.only_cut && cut != *o.only_cut) continue;
    x.model.advance(cut);
    ++x.r.cuts;
    for (std::size_t k = 0; k < 2 + o.random_per_cut; ++k)
      if (!o.only_state || k == *o.only_state) x.one_state(cut, k);
  }
  for (const std::string& what : x.model.inconsistencies())
    if (x.r.problems["the model could not follow the record"]++ < o.reproductions_per_kind)
      x.r.reproductions.push_back("the model could not follow the record\n  " + what);
  x.r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return x.r;
}

std::map<std::string, std::string> read_tree(const std::string& dir) {
  std::map<std::string, std::string> t;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    t[fs::relative(e.path(), dir).string()] = s.str();
  }
  return t;
}

std::string events_before(const std::vector<Event>& events, std::size_t cut, std::size_t n) {
  std::ostringstream out;
  for (std::size_t i = cut > n ? cut - n : 0; i < cut; ++i) {
    const Event& e = events[i];
    out << "    #" << i << " " << walseg::io_record::to_string(e.op) << (e.uring ? " (io_uring)" : "") << " "
        << fs::path(e.path).filename().string();
    if (!e.path2.empty()) out << " -> " << fs::path(e.path2).filename().string();
    if (e.op == Op::kWrite || e.op == Op::kFallocate) out << " [" << e.offset << ", +" << e.length << ")";
    if (e.op == Op::kTruncate) out << " to " << e.offset;
    if (e.result_errno != 0) out << " failed: errno " << e.result_errno;
    out << "\n";
  }
  return out.str();
}

}  // namespace walseg_crash
