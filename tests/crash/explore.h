// explore: walks the crash states of one recorded workload (crash_model.h) and hands each new
// one, materialised as real files, to a check.
//
// For every cut (after 0, 1, ..., N events) it takes the two extremes (everything unsynced
// lost, everything kept) and `random_per_cut` seeded random states; a state whose content
// equals one already checked (same choice signature, at this cut or an earlier one with the
// same expectation) is counted as a duplicate and not checked again, so `states` counts distinct states. A random
// state's generator is seeded by (seed, cut, index), so one state can be rebuilt alone from
// the three numbers printed with it (ExploreOptions::only_cut, only_state).
//
// Not for: judging a state (the check does that) or running the workload.
// Thread-safety: none. Lifetime: the events must outlive the call.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crash_model.h"

namespace walseg_crash {

struct ExploreOptions {
  std::size_t random_per_cut = 3;
  std::uint64_t seed = 1;
  std::string scratch;   ///< each state is materialised here (removed and recreated)
  std::string keep;      ///< if set: a state with a problem is also materialised under it
  std::size_t reproductions_per_kind = 2;  ///< full reproductions kept per kind of problem
  std::optional<std::size_t> only_cut;     ///< explore this cut only
  std::optional<std::size_t> only_state;   ///< and only this state of it (0 lost, 1 kept, 2.. random)
  /// If set: the directory as it was when recording stopped (read_tree); the all-kept state
  /// after the last event must equal it, which checks the record and the model themselves.
  std::optional<std::map<std::string, std::string>> final_tree;
  /// What the check expects at a cut (e.g. which records must survive), as a number: a state
  /// is a duplicate only of one checked with the same expectation.
  std::function<std::uint64_t(std::size_t cut)> expectation;
};

/// Judges one materialised state: "" when it is fine, else the problem, its first line naming
/// its kind (states are counted per kind). May change the directory (it is rebuilt next time).
using StateCheck = std::function<std::string(std::size_t cut, const CrashState& state, const std::string& dir)>;

struct ExploreResult {
  std::uint64_t cuts = 0;
  std::uint64_t states = 0;      ///< distinct states checked
  std::uint64_t duplicates = 0;  ///< states skipped as equal to one checked before
  std::map<std::string, std::uint64_t> problems;  ///< kind -> states with it
  std::vector<std::string> reproductions;
  double seconds = 0;
};

/// Explores the record `events` of a workload that ran in `root`. prepare (optional) is called
/// on the model before the first event (e.g. load_existing()).
ExploreResult explore(const std::vector<Event>& events, const std::string& root, const ExploreOptions& o,
                      const StateCheck& check, const std::function<void(CrashModel&)>& prepare = {});

/// Every regular file under dir, by path relative to it, with its bytes.
std::map<std::string, std::string> read_tree(const std::string& dir);

/// The last n events before the cut, one line each, for a reproduction.
std::string events_before(const std::vector<Event>& events, std::size_t cut, std::size_t n = 8);

}  // namespace walseg_crash
