// walseg bench: device figures per row (bench_device.h).
#include "bench_device.h"

#include <thread>

#include <fmt/format.h>

#include "bench.h"

namespace walseg::tool {
namespace {

std::optional<double> per(std::optional<std::uint64_t> v, std::uint64_t n) {
  if (!v || n == 0) return std::nullopt;
  return static_cast<double>(*v) / static_cast<double>(n);
}

nlohmann::json or_null(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string cell_of(std::optional<double> v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : std::string("-");  // as the other tables: not measured (JSON: null)
}

std::string join_note(const std::string& a, const std::string& b) {
  return a.empty() ? b : b.empty() ? a : a + "; " + b;
}

}  // namespace

std::optional<double> DeviceFigures::bytes_per_commit() const {
  return measured ? per(during.bytes_written, commits) : std::nullopt;
}
std::optional<double> DeviceFigures::write_amplification() const {
  return measured ? per(during.bytes_written, asked_bytes) : std::nullopt;
}
std::optional<double> DeviceFigures::flushes_per_commit() const {
  return measured ? per(during.flushes, commits) : std::nullopt;
}
std::optional<double> DeviceFigures::journal_commits_per_commit() const {
  return measured ? per(during.journal_commits, commits) : std::nullopt;
}

DeviceMeter::DeviceMeter(const std::string& dir, std::size_t series) : during_(series), windows_(series) {
  BlockDevice dev = find_block_device(dir);
  if (dev.name.empty()) {
    why_not_ = dev.why_not;
    return;
  }
  try {
    counters_.emplace(dev);
  } catch (const std::exception& e) {
    why_not_ = e.what();
  }
  // DeviceDelta's optionals start empty; a first += must not leave them empty for good.
  for (auto& d : during_) d = DeviceDelta{.flushes = 0, .journal_commits = 0};
  gaps_ = DeviceDelta{.flushes = 0, .journal_commits = 0};
}

void DeviceMeter::begin(std::size_t series) {
  if (!counters_) return;
  open_ = counters_->sample();
  if (last_end_) gaps_ += *open_ - *last_end_;
  (void)series;
}

void DeviceMeter::end(std::size_t series) {
  if (!counters_ || !open_) return;
  last_end_ = counters_->sample();
  during_[series] += *last_end_ - *open_;
  ++windows_[series];
  open_.reset();
}

void DeviceMeter::quiet_check(std::chrono::milliseconds quiet) {
  if (!counters_) return;
  const DeviceSample a = counters_->sample();
  std::this_thread::sleep_for(quiet);
  gaps_ += counters_->sample() - a;
}

DeviceFigures DeviceMeter::figures(std::size_t series, std::uint64_t commits, std::uint64_t asked_bytes) const {
  DeviceFigures f;
  f.commits = commits;
  f.asked_bytes = asked_bytes;
  if (!counters_) {
    f.note = "device counters: " + why_not_;
    return f;
  }
  const BlockDevice& dev = counters_->device();
  f.measured = windows_[series] > 0;
  f.device = dev.name;
  f.during = during_[series];
  if (!f.measured) f.note = "device counters: no commit measured";
  if (f.measured && !f.during.flushes) f.note = join_note(f.note, "the kernel's stat file has no flush counts (before 5.5)");
  if (dev.jbd2_info_path.empty()) {
    f.during.journal_commits.reset();
    f.note = join_note(f.note, fmt::format("no jbd2 journal on {}", dev.name));
  }
  // Commits write and sync; they read nothing that is not cached after the first, and walseg
  // does nothing between them: reads during, or writes between, are another writer's.
  if (gaps_.bytes_written > 0 || f.during.bytes_read > 0) {
    f.other_io = true;
    f.note = join_note(f.note, fmt::format("other I/O on {} during the phase: {} bytes written between commits, "
                                           "{} bytes read during them",
                                           dev.name, gaps_.bytes_written, f.during.bytes_read));
  }
  return f;
}

void add_device_json(nlohmann::json& j, const DeviceFigures& d) {
  j["device_bytes_per_commit"] = or_null(d.bytes_per_commit());
  j["write_amplification"] = or_null(d.write_amplification());
  j["device_flushes_per_commit"] = or_null(d.flushes_per_commit());
  j["journal_commits_per_commit"] = or_null(d.journal_commits_per_commit());
  j["device"] = d.device;
  j["device_other_io"] = d.other_io;
  j["device_bytes_written"] = d.measured ? nlohmann::json(d.during.bytes_written) : nlohmann::json(nullptr);
  j["commit_bytes_asked"] = d.asked_bytes;
  j["note"] = join_note(j.value("note", std::string()), d.note);
}

void print_device_rows(const std::vector<Row>& rows, const std::string& phase) {
  bool any = false;
  for (const Row& r : rows) any = any || r.phase == phase;
  if (!any) return;
  fmt::print("\nDevice I/O of these commits (the block device's counters; amplification = device bytes / bytes committed):\n");
  fmt::print("  {:<20} {:<9} {:>13} {:>13} {:>15} {:>15} {:>6}  {}\n", "method", "io", "bytes/commit",
             "amplification", "flushes/commit", "journal/commit", "other", "note");
  for (const Row& r : rows) {
    if (r.phase != phase) continue;
    const DeviceFigures& d = r.device;
    fmt::print("  {:<20} {:<9} {:>13} {:>13} {:>15} {:>15} {:>6}  {}\n", r.method, r.io,
               cell_of(d.bytes_per_commit(), "{:.0f}"), cell_of(d.write_amplification(), "{:.2f}"),
               cell_of(d.flushes_per_commit(), "{:.2f}"), cell_of(d.journal_commits_per_commit(), "{:.2f}"),
               d.other_io ? "yes" : "no", d.note);
  }
}

}  // namespace walseg::tool
