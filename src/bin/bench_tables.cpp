// walseg bench's tables (bench_tables.h).
#include "bench_tables.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace walseg::tool {
namespace {

constexpr const char* kMethodRowFormat = "  {:<20} {:<20} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>12}  {}\n";
constexpr const char* kSwitchRowFormat = "  {:<9} {:<9} {:<16} {:>7} {:>9} {:>9} {:>9} {:>9}\n";
constexpr const char* kWalRowFormat = "  {:<20} {:<9} {:>7} {:>8} {:>9} {:>9} {:>9} {:>10}  {}\n";

void clear_progress(const BenchSettings& s) {
  if (s.progress) fmt::print(stderr, "\r\033[K");
}

bool round_robin(const std::string& phase) { return phase == "create" || phase == "write"; }

}  // namespace

void print_header(const BenchSettings& s, const std::vector<std::string>& phases, const std::string& root,
                  const FsInfo& fs) {
  // Only what the phases run use (the new-user trial: `--phases commit` printed the create and
  // write phases' counts).
  auto runs = [&](std::initializer_list<const char*> names) {
    return std::any_of(phases.begin(), phases.end(), [&](const std::string& p) {
      return std::any_of(names.begin(), names.end(), [&](const char* n) { return p == n; });
    });
  };
  std::string sizes;
  if (runs({"create", "write", "append", "commit"})) {
    sizes = format_size(s.segment_size) + " segments";
    if (runs({"create", "write", "append"})) sizes += fmt::format(", {} per method", s.segments);
    if (runs({"write", "append", "commit"})) sizes += fmt::format("; writes of {}", format_size(s.write_size));
    if (runs({"write"}))
      sizes += s.write_bytes > s.segment_size
                   ? fmt::format(", {} per segment (the whole segment: the {} of --write-bytes, given or its default, is more than one)",
                                 format_size(s.segment_size), format_size(s.write_bytes))
                   : fmt::format(", {} per segment", format_size(s.write_bytes));
    sizes += "; ";
  }
  if (runs({"switch"}))
    sizes += fmt::format("switch: {} segments, {} boundaries; ", format_size(s.switch_segment_size), s.switch_boundaries);
  fmt::print("walseg bench: {}sync {}{}\n", sizes, to_string(s.config.sync_method),
             s.config.direct_io ? ", WAL writes with O_DIRECT (walseg.direct_io)" : "");
  fmt::print("directory {} is on {} (device {}, mounted at {}, options {}), block size {}{}\n",
             root, fs.type_name, fs.device, fs.mount_point, fs.mount_options, fs.block_size,
             fs.copy_on_write ? ", copy-on-write" : "");
  if (fs.copy_on_write)
    fmt::print("note: on copy-on-write filesystems preallocation reserves nothing lasting and "
               "recycling rewrites blocks: the verdict's tie-break puts the methods that reserve "
               "nothing first, and \"What to set\" turns recycling off, with the recycle rows beside\n");
  if (fs.type == FsType::kTmpfs)
    fmt::print("note: tmpfs keeps its files in memory: fsync and fdatasync return without writing anything "
               "to a disk, so these figures do not stand for any disk; run bench on the filesystem that "
               "will hold the WAL\n");
  std::fflush(stdout);
}

void print_phase_head(const BenchSettings& s, const std::string& phase) {
  clear_progress(s);
  if (phase == "create")
    fmt::print("\nSegment creation (temp file, fill, fsync, rename, directory fsync), microseconds per segment:\n");
  else if (phase == "write")
    fmt::print("\nCommits into a new segment ({} pwrite + {}), microseconds per commit:\n", format_size(s.write_size),
               to_string(s.config.sync_method));
  else if (phase == "switch")
    fmt::print("\nAppends across {} segment boundaries ({} segments, {} pwrite + fdatasync), microseconds per append:\n",
               s.switch_boundaries, format_size(s.switch_segment_size), format_size(s.write_size));
  else if (phase == "append")
    fmt::print("\nWAL appends, one writer, each {} record flushed (microseconds per commit):\n", format_size(s.write_size));
  else
    fmt::print("\nGroup commit, K clients each flushing its {} record (microseconds per commit):\n",
               format_size(s.write_size));
  if (round_robin(phase)) {
    // Their rows end together: say so, so that a long wait (1 GB segments) is not a surprise.
    fmt::print("  ({} segment{} of {} per row, measured round-robin; the rows follow the last round)\n", s.segments,
               s.segments == 1 ? "" : "s", format_size(s.segment_size));
    // p10 beside the median: the verdict's rule compares commits by their p10 (auto_method.h).
    fmt::print(kMethodRowFormat, "method", "used", "n", "p10", "median", "p90", "p99", "max", "ops/s*",
               "allocated*", "note");
  } else if (phase == "switch") {
    fmt::print(kSwitchRowFormat, "config", "appends", "method", "n", "p50", "p99", "p99.9", "max");
  } else {
    fmt::print(kWalRowFormat, "method", "io", "clients", "n", "median", "p99", "max", "commits/s", "used");
  }
  std::fflush(stdout);
}

void print_row(const BenchSettings& s, const Row& r) {
  clear_progress(s);
  if (round_robin(r.phase))
    fmt::print(kMethodRowFormat, r.method, r.method_used, r.lat.n, cell(r.lat.p10), cell(r.lat.median),
               cell(r.lat.p90), cell(r.lat.p99), cell(r.lat.max), fmt::format("{:.1f}", r.ops_per_s),
               r.allocated_bytes, r.note);
  else if (r.phase == "switch")
    fmt::print(kSwitchRowFormat, r.config, r.kind, r.method, r.lat.n, cell(r.lat.median), cell(r.lat.p99),
               cell(r.lat.p999), cell(r.lat.max));
  else
    fmt::print(kWalRowFormat, r.method, r.io, r.clients > 0 ? r.clients : 1, r.lat.n, cell(r.lat.median),
               cell(r.lat.p99), cell(r.lat.max), fmt::format("{:.0f}", r.ops_per_s), r.method_used);
  std::fflush(stdout);
}

void print_phase_foot(const BenchSettings& s, const FsInfo& fs, const std::vector<Row>& rows,
                      const std::string& phase) {
  if (!round_robin(phase)) return;
  fmt::print("  * ops/s: 1 / median. allocated: st_blocks x 512 of each segment right after its creation{}; "
             "for recycle the segment size, not measured\n",
             phase == "write" ? ", before the commits (what the method reserved, not what the writes left)" : "");
  std::vector<std::string> over;
  for (const Row& r : rows)
    if (r.phase == phase && r.allocated_bytes > s.segment_size) over.push_back(r.method);
  if (!over.empty())
    fmt::print("  note: {} allocated more than the segment size: {}\n", fmt::join(over, ", "),
               fs.type == FsType::kXfs
                   ? "xfs's speculative preallocation reserves blocks past the end of a file being written, "
                     "and gives them back later (at close or in the background); it is not the method's"
                   : "the filesystem allocated blocks beyond the file's data (its metadata, such as ext2's "
                     "indirect blocks, or a preallocation of its own); it is not the method's");
  std::fflush(stdout);
}

}  // namespace walseg::tool
