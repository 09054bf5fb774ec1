// walseg bench's "what to set" (bench_advice.h): the measured choice in each host's settings.
#include "bench_advice.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "bench_verdict.h"
#include "walseg/auto_method.h"

namespace walseg::tool {
namespace {

// A choice that reserves no space moves "disk full" from segment creation to a commit, where
// PostgreSQL's XLogWrite PANICs (the new-user trial: the advice said nothing of it).
constexpr const char* kNoSpaceReserved =
    "; it reserves no space, so a full disk fails a commit's WAL write (in PostgreSQL a PANIC) instead of a "
    "segment's creation: keep free space watched";

std::string space_caveat(InitMethod m) {
  return m == InitMethod::kSparse || m == InitMethod::kNone ? kNoSpaceReserved : "";
}

struct Setting {
  std::string value;  ///< "" when this run cannot say
  std::string why;
};

// PostgreSQL has two fills: zeros over the file (wal_init_zero = on; its creation is
// pg15_reference's, its commits a zero-filled file's) or one byte at the end (off: a file with
// a hole, as sparse). The same rule decides between them.
Setting wal_init_zero(const FsInfo& fs, const std::vector<Row>& rows) {
  const Row* zw = find_row(rows, "write", "zero_write");
  const Row* sw = find_row(rows, "write", "sparse");
  const Row* zc = find_row(rows, "create", kPg15Reference, true);
  const Row* sc = find_row(rows, "create", "sparse");
  if (!zw || !sw || !zc || !sc)
    return {"", "not measured: give --methods with zero_write and sparse, PostgreSQL's two fills"};
  const std::vector<ProbeResult> two = {
      ProbeResult{InitMethod::kZeroWrite, zc->lat.median, zw->lat.p10, zw->lat.median, zw->lat.p99},
      ProbeResult{InitMethod::kSparse, sc->lat.median, sw->lat.p10, sw->lat.median, sw->lat.p99}};
  const bool on = decide_init_method(two, fs.copy_on_write) == InitMethod::kZeroWrite;
  return {on ? "on" : "off",
          fmt::format("the rule over PostgreSQL's two fills: on (zeros; creation as pg15_reference, {} us; "
                      "commits as zero_write, {} us p10), off (a hole, as sparse: {} us; {} us p10){}",
                      cell(zc->lat.median), rule_figure(zw->lat.p10), cell(sc->lat.median), rule_figure(sw->lat.p10),
                      on ? "" : kNoSpaceReserved)};
}

// Recycling is a rename and leaves a written file, so it is worth it wherever rewriting a block
// costs what writing it did. On a copy-on-write filesystem every rewrite allocates anew, which
// is why PostgreSQL documents wal_recycle = off for them, and walseg's segment manager warns
// against recycling there (case C24): off, with what this run measured beside it, so that the
// advice never contradicts the warning the setting would then bring.
Setting recycle(const FsInfo& fs, const std::vector<Row>& rows, const nlohmann::json& v) {
  const Row* rw = find_row(rows, "write", kRecycle, true);
  const Row* rc = find_row(rows, "create", kRecycle, true);
  if (!fs.copy_on_write) {
    if (!rw) return {"", "not measured (the write phase's recycle row)"};
    const std::string rename = rc ? fmt::format("a rename, {} us median, ", cell(rc->lat.median)) : "";
    // A NOCOW directory on btrfs is not copy-on-write; btrfs itself is (the new-user trial).
    const std::string why = fs.nocow ? fmt::format("this directory is NOCOW (chattr +C) on {}, so its files are "
                                                   "rewritten in place", fs.type_name)
                                     : fmt::format("{} is not copy-on-write", fs.type_name);
    return {"on", fmt::format("{}then commits in a written file, {} us p10; {}", rename, rule_figure(rw->lat.p10), why)};
  }
  const double threshold = v.value("threshold_us", 0.0);
  const std::string measured =
      rw ? fmt::format("; here recycled segments commit in {} us p10, {} the new segments' threshold {} us",
                       rule_figure(rw->lat.p10), rw->lat.p10 > threshold ? "above" : "within", rule_figure(threshold))
         : "";
  return {"off", fmt::format("{} is copy-on-write: PostgreSQL advises wal_recycle = off there, and walseg warns "
                             "against recycling (rewrites of old blocks go to new space){}",
                             fs.type_name, measured)};
}

// The preallocator keeps walseg.prealloc_segments ready; the switch phase's pooled run says
// whether that kept the writer from waiting (its stalls).
Setting prealloc(const BenchSettings& s, const std::vector<Row>& rows) {
  const int now = s.config.prealloc_segments;
  for (const Row& r : rows)
    if (r.phase == "switch" && r.config == "pooled" && r.manager) {
      // Measured at the switch phase's segment size: a larger segment takes longer to fill
      // (the new-user trial read 1MB's answer as one for 16MB), so say when they differ.
      const std::string sized =
          s.switch_segment_size == s.segment_size
              ? std::string()
              : fmt::format("; for {} segments run bench with --switch-segment-size {}",
                            format_size(s.segment_size), format_size(s.segment_size));
      if (r.manager->stalls == 0)
        return {std::to_string(now), fmt::format("the switch phase's pooled run never waited for a segment with {} "
                                                 "({} segments of {}{})", now, r.writer_switches,
                                                 format_size(s.switch_segment_size), sized)};
      const int more = std::max(now + 1, 2 * now);
      return {std::to_string(more), fmt::format("the switch phase's pooled run waited {} times for a segment with {} "
                                                "({} segments{})",
                                                r.manager->stalls, now, format_size(s.switch_segment_size), sized)};
    }
  return {std::to_string(now), "the current value; the switch phase measures whether the pool keeps up"};
}

// The extension needs full-size segments: when the rule's choice is not one, the same rule over
// those that are, as auto does there (auto_method.h's full_size_only).
// Always the rule over those alone, as auto's full_size_only (new-user trial 18: the verdict's
// choice among all was kept when it was full-size, though the short-file methods had set its
// threshold and bound).
Setting extension_method(const BenchSettings& s, const FsInfo& fs, const std::vector<Row>& rows, InitMethod both) {
  std::vector<ProbeResult> full;
  for (const ProbeResult& p : rule_inputs(s, rows))
    if (makes_full_size_segments(p.method)) full.push_back(p);
  if (full.empty()) return {"", "no full-size method measured (the extension refuses none and fallocate_keep_size)"};
  const InitMethod chosen = decide_init_method(full, fs.copy_on_write);
  if (chosen == both) return {std::string(to_string(both)), "the verdict's" + space_caveat(both)};
  return {std::string(to_string(chosen)),
          fmt::format("the rule over the full-size methods alone{}{}",
                      makes_full_size_segments(both)
                          ? fmt::format(" ({} is first over all methods)", to_string(both))
                          : fmt::format(": {} makes short files, which PostgreSQL cannot use", to_string(both)),
                      space_caveat(chosen))};
}

// One setting's line; a reason already printed (in `said`: recycling, for three hosts) is not
// repeated.
void line(const std::string& host, const std::string& name, const Setting& st, nlohmann::json& out,
          std::set<std::string>& said) {
  const bool again = !said.insert(st.why).second;
  fmt::print("  {:<34} {} = {}  ({})\n", host, name, st.value.empty() ? "?" : st.value, again ? "as above" : st.why);
  out[name] = st.value.empty() ? nlohmann::json(nullptr) : nlohmann::json(st.value);
  out["why"][name] = st.why;
}

}  // namespace

nlohmann::json what_to_set(const BenchSettings& s, const FsInfo& fs, const std::vector<Row>& rows,
                           const nlohmann::json& v) {
  if (v.is_null() || !v.contains("both")) return nullptr;
  const InitMethod both = enum_from_name<InitMethod>(v["both"].get<std::string>(), kInitMethodNames).value();
  const Setting rec = recycle(fs, rows, v);
  nlohmann::json out;
  std::set<std::string> said;
  fmt::print("\nWhat to set on this filesystem (from the rows above{}):\n",
             fs.type == FsType::kTmpfs ? "; on tmpfs, for a WAL kept in memory only: see the note at the top" : "");
  line("PostgreSQL without the extension:", "wal_init_zero", wal_init_zero(fs, rows), out["postgresql"], said);
  line("", "wal_recycle", rec, out["postgresql"], said);
  line("PostgreSQL with the extension:", "walseg.init_method", extension_method(s, fs, rows, both),
       out["postgresql_with_extension"], said);
  line("", "walseg.prealloc_segments", prealloc(s, rows), out["postgresql_with_extension"], said);
  line("", "wal_recycle", rec, out["postgresql_with_extension"], said);
  line("the walseg tool:", "walseg.init_method", {std::string(to_string(both)), "the verdict's" + space_caveat(both)},
       out["walseg"], said);
  line("", "walseg.recycle", rec, out["walseg"], said);
  return out;
}

nlohmann::json pool_to_set(const BenchSettings& s, const std::vector<Row>& rows) {
  const bool switched = std::any_of(rows.begin(), rows.end(), [](const Row& r) {
    return r.phase == "switch" && r.config == "pooled" && r.manager;
  });
  if (!switched) return nullptr;
  nlohmann::json out;
  std::set<std::string> said;
  fmt::print("\nWhat to set on this filesystem (from the switch phase; the init method needs the create and write "
             "phases):\n");
  line("PostgreSQL with the extension:", "walseg.prealloc_segments", prealloc(s, rows),
       out["postgresql_with_extension"], said);
  return out;
}

}  // namespace walseg::tool
