// walseg bench: what the commits of a row cost the block device (device_stats.h), for the
// `write` and `append` phases: device bytes, write amplification, flush requests and jbd2
// commits per commit, and whether anything else used the device meanwhile.
//
// The counters are per device, so they count every writer of the device. Two checks catch the
// other writers: writes between two commits (where walseg itself does nothing) and reads
// during a commit (commits only write); either marks the row, with the amounts in its note.
// A filesystem's own deferred writeback (XFS pushing its log tail, ext4's lazy inode-table
// init) cannot be told from another process's I/O and marks the row too.
//
// Not for: the create phase (creation's bytes are the method's size, shown as `allocated`).
// Thread-safety: none; one DeviceMeter per phase, used on the bench's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "walseg/device_stats.h"

namespace walseg::tool {

/// A row's device figures. Per-commit values are derived by the accessors; null (nullopt)
/// where the counter was not available, with the reason in note.
struct DeviceFigures {
  bool measured = false;          ///< a device's counters were read for this row
  std::string device;             ///< sysfs name, e.g. "loop3"
  std::uint64_t commits = 0;
  std::uint64_t asked_bytes = 0;  ///< bytes the commits asked to write (records, no headers)
  DeviceDelta during;             ///< summed over the row's commits
  bool other_io = false;          ///< something else used the device during the row
  std::string note;

  std::optional<double> bytes_per_commit() const;
  std::optional<double> write_amplification() const;  ///< device bytes / asked_bytes
  std::optional<double> flushes_per_commit() const;
  std::optional<double> journal_commits_per_commit() const;
};

/// Samples the device under a directory around commits, per series (a method's row).
class DeviceMeter {
 public:
  /// Finds the device under `dir`; never throws (without a device every row says why).
  DeviceMeter(const std::string& dir, std::size_t series);
  bool available() const { return counters_.has_value(); }

  /// Around one commit of `series` (the write phase calls these from MeasurePlan's
  /// around_commit). The time from one end() to the next begin() is a gap: walseg does nothing
  /// there, so what the device writes then is someone else's.
  void begin(std::size_t series);
  void end(std::size_t series);
  /// walseg's own work follows (making or removing segments): no gap until the next begin.
  void leave() { last_end_.reset(); }
  /// Counts what the device writes while walseg waits `quiet` doing nothing, as a gap.
  void quiet_check(std::chrono::milliseconds quiet);

  /// The figures of `series` for `commits` commits that asked to write asked_bytes in all.
  DeviceFigures figures(std::size_t series, std::uint64_t commits, std::uint64_t asked_bytes) const;

 private:
  std::optional<DeviceCounters> counters_;
  std::string why_not_;
  std::vector<DeviceDelta> during_;
  std::vector<std::uint64_t> windows_;  ///< begin/end pairs per series
  DeviceDelta gaps_;
  std::optional<DeviceSample> open_, last_end_;
};

/// Adds device_bytes_per_commit, write_amplification, device_flushes_per_commit,
/// journal_commits_per_commit (null where not measurable), device, device_other_io and the
/// raw byte counts to a row's JSON, and the device's note to its `note`.
void add_device_json(nlohmann::json& j, const DeviceFigures& d);

struct Row;
/// The device table of a phase ("write" or "append"), after its latency table.
void print_device_rows(const std::vector<Row>& rows, const std::string& phase);

}  // namespace walseg::tool
