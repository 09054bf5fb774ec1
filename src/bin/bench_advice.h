// walseg bench: the verdict's last part, what to set, for each host of the measured choice.
//
// The verdict (bench_verdict.h) names the init method the rule picks. A DBA then needs the
// settings of the host the WAL lives in: PostgreSQL alone has two (wal_init_zero: zero-fill
// or a file with a hole; wal_recycle), PostgreSQL with the extension adds the preallocator's
// (walseg.init_method, walseg.prealloc_segments), and the walseg tool has its own
// walseg.init_method and walseg.recycle. Each value printed comes from this run's rows by a
// stated rule: wal_init_zero by the same rule over the two fills PostgreSQL has (zero_write
// with pg15_reference's creation, sparse); recycling by the recycle rows where the filesystem
// is copy-on-write (PostgreSQL's advice there is wal_recycle = off), on otherwise;
// prealloc_segments by the switch phase's pooled stalls when it ran.
//
// Thread-safety: none needed (called once, on the bench's thread).
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "bench.h"

namespace walseg::tool {

/// Prints "What to set on this filesystem" on stdout and returns it as the verdict's
/// `what_to_set` object: {"postgresql": {...}, "postgresql_with_extension": {...}, "walseg":
/// {...}}, each setting's value a string, plus "why" lines. `v` is the verdict (its `both`, the
/// init method picked, and `threshold_us`); `fs` the scratch directory's filesystem. Returns
/// null (printing nothing) when `v` is null. Never throws but std::bad_alloc.
nlohmann::json what_to_set(const BenchSettings& s, const FsInfo& fs, const std::vector<Row>& rows,
                           const nlohmann::json& v);

/// For a run without a verdict (no create or write phase) whose switch phase ran pooled: prints
/// the walseg.prealloc_segments line alone and returns it as what_to_set does (new-user trial
/// 17: the verdict's "run bench with --switch-segment-size 16MB", run with --phases switch,
/// gave no advice at all). Null, printing nothing, without that phase. Never throws but
/// std::bad_alloc.
nlohmann::json pool_to_set(const BenchSettings& s, const std::vector<Row>& rows);

}  // namespace walseg::tool
