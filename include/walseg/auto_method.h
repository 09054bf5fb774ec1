// walseg.init_method = auto: the init method for a directory chosen by measurement, not by a
// guess about the filesystem.
//
// On first use of a directory, and again when its filesystem changes (type or device), a short
// probe runs each candidate method on a few MiB in the probe directory: the durable creation
// (fill + fsync) and then first-pass commits (kProbeWriteBytes of 8 kB pwrite + fdatasync into
// the new file), the same measurements as `walseg bench`'s create and write phases, by the same
// loop (measure_loop.h) and the same percentiles (latency_summary.h). The rule, shared with
// the bench's verdict (apply_init_rule, which also returns its working), picks the method whose
// commits are fastest (10th percentile within kCommitTolerance of the best), and among those the
// cheapest to create, since the preallocator keeps creation off the commit path anyway. The decision
// and its numbers are cached in `walseg.auto` in the cache directory (AutoOptions; the tool's
// is the WAL directory itself) and logged with the reason. A walseg.auto that
// is not walseg's cache (not a plain file of one link, not JSON with walseg's fields) is
// someone's file: it is never replaced; the probe's decision is used without caching and a
// WARNING says to move the file away (as PostgreSQL leaves files in pgdata it did not make,
// the WAL keeps working: the cost is a probe at every start, not a refusal).
//
// What differs between hosts is in AutoOptions: where the probe runs, where (and whether) the
// decision is cached, and whether only full-size methods may be chosen. The walseg tool probes
// and caches in its WAL directory and may use any method. The PostgreSQL extension probes in a
// scratch directory inside pg_wal, chooses among full-size methods only (PostgreSQL cannot use
// a segment shorter than its size) and caches no file: pg_wal is PostgreSQL's directory, and
// although PostgreSQL ignores a walseg.auto there, pg_rewind copies such a file from the source
// server (whose filesystem identity, type and device number, can be the same as the target's
// on another machine) or removes it; the extension keeps the decision in shared memory instead
// (contrib/walseg/README.md).
//
// Not for: choosing anything else (sync method, recycling).
// Thread-safety: call while holding the cache directory's DirLock (the segment manager does),
// or with no cache directory; two calls writing one walseg.auto at once leave one of the two
// complete files (it is written under a temporary name and renamed into place).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "walseg/config.h"
#include "walseg/directory.h"

namespace walseg {

inline constexpr const char* kAutoCacheFileName = "walseg.auto";
inline constexpr std::uint64_t kProbeFileBytes = 4 * kMiB;
inline constexpr std::uint64_t kProbeWriteBytes = 1 * kMiB;
inline constexpr std::uint64_t kProbeCommitBytes = 8192;
/// Commit speeds (10th percentiles) within this share of the best count as equally fast:
/// methods that leave the file written (zero_write, glibc_emulation, a recycled file) commit
/// alike, and the 128 first-pass commits of a probe on a shared machine differ by 10-20% from
/// noise alone. The 10th percentile rather than the median: other work on the machine adds
/// latency to every method alike, which pushed the medians of ext4's written (90 us) and
/// unwritten-extent (145 us) files within 20% of each other in loaded runs, while their
/// fastest commits kept the gap.
inline constexpr double kCommitTolerance = 0.20;
/// Creations within this many microseconds of the cheapest, or within kCreateSlackRatio times
/// it, count as equally cheap: creation runs in the background, and the differences between
/// the metadata-only methods are noise (sub-millisecond on ext4 and xfs; on btrfs 1.4-2 ms for
/// a 16 MiB segment, 0.6-0.9 ms for the probe's 4 MiB, so an absolute slack alone made the
/// bench and the probe disagree). Ties go to the first method in kCandidateOrder.
inline constexpr double kCreateSlackUs = 1000;
inline constexpr double kCreateSlackRatio = 2.0;

/// One candidate's measurements, microseconds.
struct ProbeResult {
  InitMethod method = InitMethod::kZeroWrite;
  double create_us = 0;      ///< fill + fsync of the probe file
  double commit_p10_us = 0;  ///< what the rule compares
  double commit_median_us = 0;
  double commit_p99_us = 0;
  /// The method the probe asked for, when it fell back to `method` (posix_fallocate on ext2
  /// runs as zero_write): the reason then names both, as bench's verdict does.
  std::optional<InitMethod> asked;
};

struct AutoDecision {
  InitMethod method = InitMethod::kZeroWrite;
  std::string reason;               ///< one line with the numbers behind the choice
  bool from_cache = false;
  std::vector<ProbeResult> probes;
};

/// A probe's result from its samples: the commit percentiles are summarize_latencies'
/// (latency_summary.h), the definition `walseg bench` and walseg_bench() print. Never throws.
ProbeResult probe_result(InitMethod method, double create_us, std::vector<double> commit_us);

/// The order that breaks a tie between methods equally fast and equally cheap: methods that
/// reserve space come before those that do not, and the order never depends on noise.
inline constexpr InitMethod kCandidateOrder[] = {InitMethod::kZeroWrite, InitMethod::kPosixFallocate,
                                                 InitMethod::kGlibcEmulation, InitMethod::kSparse,
                                                 InitMethod::kFallocateKeepSize, InitMethod::kNone};
/// The same on a copy-on-write filesystem (FsInfo::copy_on_write), where reserving buys
/// nothing lasting and pins space (case C24: the segment manager warns against every method
/// but these two): sparse, then none, first; the others after, in kCandidateOrder's order.
inline constexpr InitMethod kCandidateOrderCopyOnWrite[] = {InitMethod::kSparse, InitMethod::kNone,
                                                            InitMethod::kZeroWrite, InitMethod::kPosixFallocate,
                                                            InitMethod::kGlibcEmulation,
                                                            InitMethod::kFallocateKeepSize};
/// kCandidateOrderCopyOnWrite or kCandidateOrder.
std::span<const InitMethod> candidate_order(bool copy_on_write);

/// The rule's working, step by step, so that a reader can check the choice against the numbers
/// (`walseg bench` prints it). Indices are into the `results` given to apply_init_rule.
struct RuleWorking {
  std::size_t best = 0;           ///< the lowest commit_p10_us (the first such)
  double threshold_us = 0;        ///< results[best].commit_p10_us * (1 + kCommitTolerance)
  std::vector<std::size_t> fast;  ///< commit_p10_us <= threshold_us, in results order
  std::size_t cheapest = 0;       ///< among `fast`, the lowest create_us (the first such)
  /// max(cheapest + kCreateSlackUs, cheapest * kCreateSlackRatio), of results[cheapest]
  double create_bound_us = 0;
  std::vector<std::size_t> both;  ///< in `fast` and create_us <= create_bound_us
  std::size_t chosen = 0;         ///< the one of `both` first in candidate_order(copy_on_write)
  bool tie_break = false;         ///< `both` held more than one method: the order decided
  /// The others that would pass both steps with every figure kRunNoise worse for the chosen
  /// one's side (commit_p10_us <= threshold_us x (1 + kRunNoise), create_us <=
  /// create_bound_us x (1 + kRunNoise)), in results order: a run that measured them that much
  /// differently could choose one of them. Empty: the choice is clear of run-to-run noise.
  std::vector<std::size_t> close;
};

/// How much one measurement of the same method differs from run to run on a shared virtual
/// disk (about 15% in this project's runs: bench/append_vs_fio.sh, bench/pgbench/run.sh), for
/// RuleWorking::close.
inline constexpr double kRunNoise = 0.15;

/// The rule: fastest commits (10th percentile) within kCommitTolerance, then cheapest creation
/// (among those) within kCreateSlackUs or kCreateSlackRatio, then candidate_order(copy_on_write)
/// (the filesystem's FsInfo::copy_on_write). `results` must not be empty. The one
/// implementation, used by auto and by `walseg bench`'s verdict so that the two always agree.
/// Never throws but std::bad_alloc.
RuleWorking apply_init_rule(const std::vector<ProbeResult>& results, bool copy_on_write = false);

/// apply_init_rule's choice: results[chosen].method.
InitMethod decide_init_method(const std::vector<ProbeResult>& results, bool copy_on_write = false);

/// Where auto probes and keeps its decision. The directories must stay open for the call.
struct AutoOptions {
  /// Where the probe files (xlogtemp.*) are made; the decision is for its filesystem. Required.
  Directory* probe_dir = nullptr;
  /// The directory holding walseg.auto, or nullptr: nothing is read or written and every call
  /// probes (the host keeps the decision itself). May differ from probe_dir, which may then be
  /// removed after the call without losing the decision.
  Directory* cache_dir = nullptr;
  /// Choose among the methods that make full-size files only (makes_full_size_segments). The
  /// cache holds every method's numbers, so one walseg.auto serves both kinds of caller.
  bool full_size_only = false;
  /// Choose among the append-mode methods only (none, fallocate_keep_size): an existing
  /// append-mode WAL's. With full_size_only, the method must be in the mode of the WAL it
  /// writes (break-it round 23 M3: auto picked fallocate_keep_size for a full-size WAL, and the
  /// writer then added short segments to it).
  bool append_only = false;
  /// Log the decision (LOG, with its reason) when a probe made it. A host that logs it itself,
  /// once per decision, or that only reports it (the extension's walseg_fs_info()), says no.
  bool log_decision = true;
};

/// Returns the cached decision if it was made on probe_dir's filesystem, else probes, caches
/// (unless there is no cache_dir or walseg.auto is someone else's file, see above) and logs
/// (unless log_decision is false).
/// With full_size_only, the rule is applied to the full-size methods' numbers and the reason
/// says which method would have been first otherwise. cfg supplies the fallback rule for
/// posix_fallocate. Throws walseg::Error from the probe's file operations (the probe files are
/// removed either way), and Error("probe") if full_size_only (append_only) and no method of
/// that kind was probed. append_only works as full_size_only does, for the other kind.
AutoDecision choose_init_method(const AutoOptions& opts, const Config& cfg);

/// Whether the entry `name` of `dir` holds a walseg.auto cache as walseg writes one (a plain
/// file of one link, JSON with walseg's fields): what a crash between the cache's write under a
/// temporary name (xlogtemp.<pid>.<n>) and its rename leaves there, which the next writer
/// removes as that crash's leftover (break-it round 24 M1: it was "holding bytes walseg never
/// writes to one", left for good). Never throws.
bool holds_auto_cache(const Directory& dir, const std::string& name);

/// The tool's form: probe and cache in `dir`; any method for a new WAL (`wal_append_mode`
/// nullopt), else only methods of the WAL's mode (true: append mode).
AutoDecision choose_init_method(Directory& dir, const Config& cfg, std::optional<bool> wal_append_mode = std::nullopt);

}  // namespace walseg
