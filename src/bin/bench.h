// walseg bench: shared types of the benchmark's phases (one file per phase, bench_*.cpp).
//
// A phase turns the bench's settings into rows; cmd_bench.cpp prints the rows as a table in the
// manner of pg_test_fsync and writes them as JSON; bench_verdict.h derives the closing verdict.
// Phases work in directories of the scratch (bench_scratch.h), remove what they made as they
// go, and stop by BenchInterrupted when a stop signal arrives (bench_stop.h).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench_device.h"
#include "bench_scratch.h"
#include "bench_stop.h"
#include "walseg/config.h"
#include "walseg/directory.h"
#include "walseg/fs_info.h"
#include "walseg/segment_manager.h"
#include "tool_util.h"

namespace walseg::tool {

/// Reference methods implemented by the bench only (not init methods of the library).
inline constexpr const char* kPg13Reference = "pg13_reference";
inline constexpr const char* kPg15Reference = "pg15_reference";
/// Rename of an already-written segment: the create row, and the write row of commits into one.
inline constexpr const char* kRecycle = "recycle";

struct Row;

struct BenchSettings {
  Config config;                      ///< segment_size, fallback, sync_method from settings
  /// Every walseg.* setting as SHOW prints it (name, value, source), for the JSON's settings
  /// block: a result is compared across runs only with what it ran with.
  std::vector<std::array<std::string, 3>> shown_settings;
  std::uint64_t segment_size = 0;     ///< bytes
  int segments = 10;                  ///< per method and phase
  std::uint64_t write_size = 8192;    ///< bytes per write in the write phase
  std::uint64_t write_bytes = 4 * kMiB; ///< bytes written per segment in the write phase
  std::vector<InitMethod> methods;    ///< concrete init methods to measure
  bool progress = false;              ///< print progress on stderr (a terminal)
  std::vector<int> clients = {1, 8};  ///< phase commit: client counts
  double commit_seconds = 3;          ///< phase commit: seconds per row
  /// phase switch: segment size and boundaries crossed per configuration. Small segments give
  /// many boundaries, so boundary percentiles are percentiles and not just the maximum.
  std::uint64_t switch_segment_size = 1 * kMiB;
  int switch_boundaries = 64;
  /// Called with each row as soon as it is measured (the tables print it then); may be empty.
  std::function<void(const Row&)> row_done;
  void done(const Row& r) const {
    if (row_done) row_done(r);
  }
  /// Whose block device the write and append phases read counters of ("": the scratch's):
  /// e.g. the backing directory of a FUSE pass-through mount, which has no device of its own.
  std::string device_dir;
};

/// One result line. Fields a phase does not measure stay 0 (and are printed as "-").
struct Row {
  std::string phase;        ///< "create", "write"
  std::string method;       ///< init method name, or a reference / "recycle" / "recycled"
  std::string method_used;  ///< after fallbacks; equals method when none happened
  std::string note;         ///< e.g. the fallback's reason
  std::string io = "pwrite";
  Summary lat;              ///< per-operation latency, microseconds
  double ops_per_s = 0;
  double mb_per_s = 0;
  std::uint64_t allocated_bytes = 0;  ///< per segment, st_blocks * 512, after creation
  /// Per segment creation, where counted (create rows made by create_segment); JSON null else.
  std::optional<std::uint64_t> syscalls;
  /// A reference row, not a walseg method: PostgreSQL's fills and recycling (never a candidate).
  bool reference = false;
  std::string config;                 ///< phase switch: "unpooled", "pooled", "recycled"
  std::string kind;                   ///< phase switch: "boundary" or "ordinary" appends
  int clients = 0;                    ///< phase commit: concurrent clients
  /// Phase switch: the segment manager's counters over the configuration's run (both of its
  /// rows carry them), and how often the writer switched segments while timed.
  std::optional<ManagerStats> manager;
  std::uint64_t writer_switches = 0;
  /// Phase append: segments the preallocator made while the writer was measured (0: every
  /// segment was made before, as the phase intends).
  std::uint64_t created_while_measuring = 0;
  DeviceFigures device;  ///< phases write and append: what the commits cost the device
};

/// A table cell of microseconds, to the microsecond as every table and the verdict print them;
/// "-" for a figure not measured (0).
inline std::string cell(double us) { return us > 0 ? fmt::format("{:.0f}", us) : "-"; }

/// A figure the verdict's rule compared: to 0.1 us below 100 us, where the tables' whole
/// microseconds cannot show why 1.4 is outside a threshold of 1.2 (tmpfs, the new-user trials),
/// else as cell().
inline std::string rule_figure(double us) { return us > 0 && us < 100 ? fmt::format("{:.1f}", us) : cell(us); }

/// A row of per-operation latencies: lat from `us` (sorted in place), ops_per_s and mb_per_s
/// over `wall_seconds`, or, when it is 0 (operations one at a time), as 1 / the median.
Row latency_row(std::string phase, std::string method, std::vector<double>& us,
                std::uint64_t bytes_per_op, double wall_seconds = 0);

/// A phase's working directory: <phase>/<method> in the scratch, made fresh (what bench made
/// there before is removed first).
Directory phase_dir(Scratch& scratch, const std::string& phase, const std::string& method);

/// Phase `create`: each method's durable creation, plus pg13/pg15 references and recycle.
std::vector<Row> bench_create(const BenchSettings& s, Scratch& scratch);
/// Phase `write`: write_size pwrite + sync into fresh segments of each method, a recycled
/// segment, and plain append.
std::vector<Row> bench_write(const BenchSettings& s, Scratch& scratch);

/// Phase `switch`: one writer appending across segment boundaries with the segment manager
/// unpooled, pooled and refilled only by recycling; boundary vs ordinary append latency.
std::vector<Row> bench_switch(const BenchSettings& s, Scratch& scratch);

/// Phase `append`: one writer, write_size records each flushed, through WalWriter into
/// segments made by each method, for each io_method.
std::vector<Row> bench_append(const BenchSettings& s, Scratch& scratch);
/// Phase `commit`: K clients appending and flushing (group commit), per io_method.
std::vector<Row> bench_commit(const BenchSettings& s, Scratch& scratch);

/// SegmentManager::wait_ready in 100 ms steps, so that a stop signal is not kept waiting for
/// a whole pool: returns what wait_ready returned, or throws BenchInterrupted.
std::size_t wait_ready_or_stop(SegmentManager& m, std::size_t n, std::chrono::seconds timeout);

/// Progress line on stderr (only when s.progress); first throws BenchInterrupted if a stop
/// signal has arrived, since every phase calls it at each step.
void progress(const BenchSettings& s, const std::string& phase, const std::string& method,
              int done, int total);

}  // namespace walseg::tool
