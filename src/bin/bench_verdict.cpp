// walseg bench's verdict (bench_verdict.h): the auto rule's working on this run's rows.
#include "bench_verdict.h"

#include <algorithm>

#include <fmt/format.h>

namespace walseg::tool {
namespace {

// One method of --methods with both rows: what the rule sees (`probe`, whose method is the one
// that ran) and what the tables call it.
struct Candidate {
  std::string name;  ///< the rows' method
  std::string used;  ///< the rows' `used`: differs after a fallback
  ProbeResult probe;
  std::string label() const { return used == name ? name : fmt::format("{} as {}", name, used); }
};

// The rule is fed the method that ran (the `used` column), as auto's probe is: a method that
// fell back measured its fallback, and naming it would recommend what does not run here.
std::vector<Candidate> candidates(const BenchSettings& s, const std::vector<Row>& rows) {
  std::vector<Candidate> out;
  for (InitMethod m : s.methods) {
    const std::string name(to_string(m));
    const Row* c = find_row(rows, "create", name);
    const Row* w = find_row(rows, "write", name);
    if (!c || !w) continue;
    const std::string used = w->method_used.empty() ? name : w->method_used;
    const InitMethod ran = enum_from_name<InitMethod>(used, kInitMethodNames).value_or(m);
    out.push_back(Candidate{name, std::string(to_string(ran)),
                            ProbeResult{ran, c->lat.median, w->lat.p10, w->lat.median, w->lat.p99}});
  }
  return out;
}


// "a 157, b 170": each listed candidate with the figure the step compared.
std::string listing(const std::vector<Candidate>& cs, const std::vector<std::size_t>& idx, bool create) {
  std::vector<std::string> parts;
  for (std::size_t i : idx)
    parts.push_back(fmt::format("{} {}", cs[i].label(), rule_figure(create ? cs[i].probe.create_us : cs[i].probe.commit_p10_us)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<std::string> names(const std::vector<Candidate>& cs, const std::vector<std::size_t>& idx) {
  std::vector<std::string> out;
  for (std::size_t i : idx) out.push_back(cs[i].name);
  return out;
}

std::vector<std::string> order_names(bool copy_on_write) {
  std::vector<std::string> out;
  for (InitMethod m : candidate_order(copy_on_write)) out.emplace_back(to_string(m));
  return out;
}

// One line for every fallback: the reader sees why a row's method is not what is recommended.
void print_fallbacks(const std::vector<Candidate>& cs, nlohmann::json& v) {
  std::vector<std::string> parts;
  for (const Candidate& c : cs)
    if (c.used != c.name) {
      parts.push_back(fmt::format("{} ran as {}", c.name, c.used));
      v["fell_back"][c.name] = c.used;
    }
  if (!parts.empty())
    fmt::print("  fell back on this filesystem (the `used` column): {}; the rule counts each as the method "
               "that ran, and never recommends one that does not run here\n",
               fmt::join(parts, ", "));
}

// The three steps of apply_init_rule, each with the numbers it used.
void print_working(const std::vector<Candidate>& cs, const RuleWorking& w, bool copy_on_write, nlohmann::json& v) {
  const Candidate& best = cs[w.best];
  const Candidate& cheap = cs[w.cheapest];
  const double c = cheap.probe.create_us;
  // To 0.1 us always: whole microseconds made the product look wrong (new-user trial 5:
  // "threshold 1.2 x 170 = 203", from an unrounded 169.4).
  fmt::print("  commits: p10 within {:.0f}% of the best, {}'s {:.1f} us: threshold {:g} x {:.1f} = {:.1f} us; within it: "
             "{}\n",
             kCommitTolerance * 100, best.label(), best.probe.commit_p10_us, 1 + kCommitTolerance,
             best.probe.commit_p10_us, w.threshold_us, listing(cs, w.fast, false));
  if (std::any_of(cs.begin(), cs.end(), [](const Candidate& k) { return k.probe.commit_p10_us < 100; }))
    fmt::print("  (figures below 100 us to 0.1 us here; the tables round them to whole microseconds)\n");
  fmt::print("  creation: median within {:.0f} ms or {:g}x of the cheapest of those, {}'s {} us: bound "
             "max({} + {:.0f}, {:g} x {}) = {} us; within it: {}\n",
             kCreateSlackUs / 1000, kCreateSlackRatio, cheap.label(), cell(c), cell(c), kCreateSlackUs,
             kCreateSlackRatio, cell(c), cell(w.create_bound_us), listing(cs, w.both, true));
  if (w.tie_break)
    fmt::print("  tie-break: more than one method passed both; the first of them in the order {} ({}) is "
               "chosen: {}\n",
               fmt::join(order_names(copy_on_write), ", "),
               copy_on_write ? "copy-on-write: methods that reserve nothing first, since reserving pins space "
                               "and buys nothing lasting here"
                             : "methods that reserve space before those that do not",
               cs[w.chosen].label());
  v["best_p10_method"] = best.name;
  v["best_p10_us"] = best.probe.commit_p10_us;
  v["commit_tolerance"] = kCommitTolerance;
  v["threshold_us"] = w.threshold_us;
  v["passed_commits"] = names(cs, w.fast);
  v["cheapest_passed"] = cheap.name;
  v["cheapest_passed_create_us"] = c;
  v["creation_bound_us"] = w.create_bound_us;
  v["passed_both"] = names(cs, w.both);
  if (w.tie_break) v["tie_break_order"] = order_names(copy_on_write);
}

}  // namespace

const Row* find_row(const std::vector<Row>& rows, const std::string& phase, const std::string& method,
                    bool reference) {
  for (const Row& r : rows)
    if (r.phase == phase && r.method == method && r.reference == reference) return &r;
  return nullptr;
}

std::vector<ProbeResult> rule_inputs(const BenchSettings& s, const std::vector<Row>& rows) {
  std::vector<ProbeResult> out;
  for (const Candidate& c : candidates(s, rows)) out.push_back(c.probe);
  return out;
}

nlohmann::json verdict(const BenchSettings& s, const FsInfo& fs, const std::vector<Row>& rows) {
  fmt::print("\nVerdict for this filesystem (the rule walseg.init_method = auto uses, on the rows above)\n");
  const std::vector<Candidate> cs = candidates(s, rows);
  if (cs.empty()) {
    fmt::print("  (the verdict needs the create and write phases)\n");
    return nullptr;
  }
  std::vector<ProbeResult> results;
  for (const Candidate& c : cs) results.push_back(c.probe);
  const RuleWorking w = apply_init_rule(results, fs.copy_on_write);
  std::size_t cheapest = 0;
  for (std::size_t i = 0; i < cs.size(); ++i)
    if (cs[i].probe.create_us < cs[cheapest].probe.create_us) cheapest = i;
  nlohmann::json v;
  fmt::print("  cheapest creation: {} ({} us median per segment)\n", cs[cheapest].label(), cell(cs[cheapest].probe.create_us));
  const ProbeResult& f = cs[w.best].probe;
  fmt::print("  fastest commits:   {} ({} us p10, {} us median, {} us p99 per commit)\n", cs[w.best].label(),
             cell(f.commit_p10_us), cell(f.commit_median_us), cell(f.commit_p99_us));
  v["cheapest_creation"] = cs[cheapest].name;
  v["fastest_commits"] = cs[w.best].name;
  if (const Row* rec = find_row(rows, "write", kRecycle, true))
    fmt::print("  a recycled segment commits in {} us p10, {} us median (the reference for written-once files)\n",
               cell(rec->lat.p10), cell(rec->lat.median));
  print_fallbacks(cs, v);
  print_working(cs, w, fs.copy_on_write, v);
  const std::string both(to_string(results[w.chosen].method));
  // After a fallback the rows that won are another method's (the JSON's both_row): said, so
  // that the line can be found in the tables (ext2, the new-user trial).
  if (cs[w.chosen].name != both)
    fmt::print("  both: walseg.init_method = {}  (the rows of {}, which ran as {} here)\n", both, cs[w.chosen].name,
               both);
  else
    fmt::print("  both: walseg.init_method = {}\n", both);
  // One candidate passes every step by itself: the line names it, but compared it with nothing.
  if (cs.size() == 1) {
    fmt::print("  (only {} was measured (--methods): it is named because nothing else was; run with more "
               "methods, or without --methods, for a verdict that compares)\n",
               cs[0].label());
    v["single_candidate"] = true;
  }
  v["both"] = both;
  v["both_row"] = cs[w.chosen].name;
  // A choice another run could make differently is said to be one (new-user trial 17: two
  // runs named different methods, and the append table favoured a third, with no word of it).
  v["close_call"] = names(cs, w.close);
  if (!w.close.empty())
    fmt::print("  close call: {} would pass both steps too if its figures were {:.0f}% better, about how much runs "
               "differ on a shared disk; run bench again, and trust the method two runs agree on\n",
               fmt::join(names(cs, w.close), ", "), kRunNoise * 100);
  // Another writer on the disk moves commit latencies more than the methods differ (the
  // new-user trial: two default runs 9 minutes apart, both flagged, gave opposite advice).
  std::vector<std::string> disturbed;
  for (const Row& r : rows)
    if (r.device.other_io && std::find(disturbed.begin(), disturbed.end(), r.phase) == disturbed.end())
      disturbed.push_back(r.phase);
  v["other_io_during"] = disturbed;
  if (!disturbed.empty())
    fmt::print("  caution: something else used the disk while the {} phase{} measured (the Device I/O table's "
               "`other` column): its commits' figures, and this verdict, may not hold. Run bench again when the "
               "disk is quiet; advice two runs agree on is worth more than one run's\n",
               fmt::join(disturbed, " and "), disturbed.size() == 1 ? "" : "s");
  return v;
}

nlohmann::json auto_choice(Scratch& scratch, const BenchSettings& s, const nlohmann::json& v,
                           const std::optional<AutoDecision>& probed) {
  const AutoDecision a = probed ? *probed : [&] {
    Directory d = scratch.make_dir("auto");
    return choose_init_method(d, s.config);
  }();
  const bool agrees = v.contains("both") && v["both"] == std::string(to_string(a.method));
  // The new-user trial: with --methods leaving auto's choice out, the difference was put down
  // to the probe's sizes.
  const bool measured = std::find(s.methods.begin(), s.methods.end(), a.method) != s.methods.end();
  // No "within noise" here: neither the probe nor the bench repeats its measurement, so
  // neither knows its noise. What differs is said instead.
  fmt::print("  walseg.init_method = auto, probing this directory{}, chooses {}{}\n",
             probed ? " (the probe before the switch and commit phases)" : "", to_string(a.method),
             agrees      ? " (agrees with this run)"
             : !measured ? fmt::format(" (differs from this run: its probe tries every method, and {} is not among "
                                       "this run's --methods; its numbers are in its LOG line and the JSON's "
                                       "auto.reason)",
                                       to_string(a.method))
                         : fmt::format(" (differs from this run: its probe measures {} files and {} of commits, "
                                       "once; its numbers are in its LOG line and the JSON's auto.reason)",
                                       format_size(kProbeFileBytes), format_size(kProbeWriteBytes)));
  return {{"method", to_string(a.method)}, {"reason", a.reason}, {"agrees", agrees}};
}

}  // namespace walseg::tool
