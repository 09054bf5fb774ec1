// walseg bench's tables, printed as pg_test_fsync prints its own: a phase's title and column
// header before it measures anything (so a long phase is never silent), each row as soon as it
// is measured, and notes under a table that say how to read it (when `allocated` was taken,
// what ops/s is, a filesystem whose figures need a word: tmpfs, xfs's preallocation).
//
// create and write measure their methods round-robin, so their rows are complete together, at
// the last round; the line before them says so. switch, append and commit finish a row at a time.
// Every print flushes stdout, so a pipe or file sees each row when it is measured.
//
// Not for: JSON (cmd_bench.cpp), the verdict (bench_verdict.h).
// Thread-safety: none needed (the bench's thread).
#pragma once

#include <string>
#include <vector>

#include "bench.h"

namespace walseg::tool {

/// The first lines: sizes and sync method, the filesystem, and its notes (copy-on-write; tmpfs,
/// where fsync and fdatasync write nothing to a disk).
void print_header(const BenchSettings& s, const std::vector<std::string>& phases, const std::string& root,
                  const FsInfo& fs);

/// A phase's title and column header, before it measures (clears a progress line first).
void print_phase_head(const BenchSettings& s, const std::string& phase);

/// One row of its phase's table, then a flush of stdout.
void print_row(const BenchSettings& s, const Row& r);

/// The notes under a phase's table once all its rows are printed (create, write: `allocated`
/// and ops/s; xfs's speculative preallocation when a row's allocation exceeds the segment).
void print_phase_foot(const BenchSettings& s, const FsInfo& fs, const std::vector<Row>& rows,
                      const std::string& phase);

}  // namespace walseg::tool
