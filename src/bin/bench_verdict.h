// walseg bench: the closing verdict, derived from the create and write rows.
//
// The verdict applies the library's own rule (apply_init_rule, include/walseg/auto_method.h),
// the one walseg.init_method = auto uses, to the rows just printed, and prints its working with
// the numbers it used, so that a reader can check every step against the tables: the commit
// threshold (the best p10 times 1 + kCommitTolerance, and whose p10 it is), the methods within
// it, the creation bound from the cheapest of those, and the tie-break order when it decided.
// A method that fell back on this filesystem (its rows' `used` differs) counts as what ran,
// so the verdict never recommends a method that would not run here.
//
// Not for: judging noise. Every phase measures once; the verdict claims no noise figure.
// Thread-safety: none needed (called once, on the bench's thread).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench.h"
#include "bench_scratch.h"
#include "walseg/auto_method.h"

namespace walseg::tool {

/// Prints the verdict on stdout and returns it as the JSON verdict object (README's `--json`).
/// Empty (null) when the run lacks the create or write rows of its methods.
nlohmann::json verdict(const BenchSettings& s, const FsInfo& fs, const std::vector<Row>& rows);

/// The rule's inputs from the create and write rows of --methods, in --methods order: each
/// method with both rows as the method that ran (its `used`), with its creation median and
/// commit percentiles. Empty when the run lacks those rows.
std::vector<ProbeResult> rule_inputs(const BenchSettings& s, const std::vector<Row>& rows);

/// The row of `phase` whose method is `method`, or nullptr; reference rows only if `reference`.
const Row* find_row(const std::vector<Row>& rows, const std::string& phase, const std::string& method,
                    bool reference = false);

/// What walseg.init_method = auto's own probe chooses, printed beside the verdict `v` and
/// returned as the verdict's `auto` object: `probed` when this run already probed (for the
/// switch and commit phases: the same probe, so said once), else a probe in a new directory of
/// the scratch. Throws walseg::Error from the probe's file operations.
nlohmann::json auto_choice(Scratch& scratch, const BenchSettings& s, const nlohmann::json& v,
                           const std::optional<AutoDecision>& probed);

}  // namespace walseg::tool
