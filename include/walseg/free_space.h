// Free space before a measurement: refusing one that would leave its filesystem too full.
//
// The PostgreSQL extension's walseg_bench() writes test segments into pg_wal, next to
// PostgreSQL's own WAL; a filesystem that fills up makes PostgreSQL PANIC at its next WAL
// write. So a measurement first asks that what it holds on disk at most at once, plus a
// margin its host chooses (the extension: max_wal_size), is free, and otherwise refuses,
// saying what it needs and what is free.
//
// Not for: reserving space (another writer may take it meanwhile: that is what the margin is
// for). Thread-safety: free functions; the check reads statvfs once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace walseg {

/// Bytes the create and write phases of a bench hold at once: the create phase one segment
/// (each is removed before the next), the write phase one segment per method.
std::uint64_t bench_peak_bytes(std::size_t methods, std::uint64_t segment_size_bytes);

/// Throws Error(ENOSPC) unless `free_bytes` covers `peak_bytes` + `margin_bytes`, worded
/// `not enough free space in "DIR": WHAT needs N MB (P MB for its files at once and M MB left
/// for WHY), but only F MB are free`, then `: ADVICE` when advice is given (what the host's
/// user can change: the tool's options). Sizes in MB are rounded up, free space down. The one
/// check for walseg_bench() and `walseg bench`.
void require_free_space(std::string_view what, const std::string& dir, std::uint64_t free_bytes,
                        std::uint64_t peak_bytes, std::uint64_t margin_bytes, std::string_view margin_why,
                        std::string_view advice = {});

}  // namespace walseg
