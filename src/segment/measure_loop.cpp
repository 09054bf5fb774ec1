// The create-then-commit measurement (include/walseg/measure_loop.h).
#include "walseg/measure_loop.h"

#include <chrono>
#include <exception>

namespace walseg {
namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

void release_all(const std::vector<MeasureSeries>& series, std::vector<File>& files, int round,
                 bool unwinding) {
  for (std::size_t k = 0; k < files.size(); ++k) {
    try {
      if (series[k].release) series[k].release(round, files[k]);
      else if (files[k].is_open()) files[k].close();
    } catch (...) {
      if (!unwinding) throw;  // on the error path the first error is the one reported
    }
  }
}

// One round: every series' file, then their commits in turn.
void run_round(const std::vector<MeasureSeries>& series, const MeasurePlan& plan, int round,
               std::vector<File>& files, std::vector<MeasureSamples>& out) {
  for (std::size_t k = 0; k < series.size(); ++k) {
    if (plan.check) plan.check();
    double own = -1;
    const auto t0 = Clock::now();
    files.push_back(series[k].create(round, &own));
    out[k].create_us.push_back(own >= 0 ? own : us_since(t0));
  }
  const std::vector<char> record(plan.record_bytes, static_cast<char>(kMeasureRecordByte));
  for (std::uint64_t off = 0; plan.commit_bytes > 0 && off + record.size() <= plan.commit_bytes;
       off += record.size()) {
    if (plan.check) plan.check();  // a round's commits take seconds on a slow disk
    for (std::size_t k = 0; k < files.size(); ++k) {
      if (plan.around_commit) plan.around_commit(k, false);
      const auto t0 = Clock::now();
      commit_once(files[k], record.data(), record.size(), off, plan.sync);
      out[k].commit_us.push_back(us_since(t0));
      if (plan.around_commit) plan.around_commit(k, true);
    }
  }
}

}  // namespace

void commit_once(File& f, const void* data, std::size_t len, std::uint64_t offset, SyncMethod sync) {
  f.pwrite_all(data, len, offset);
  if (sync == SyncMethod::kFdatasync) f.fdatasync();
  else if (sync == SyncMethod::kFsync) f.fsync();
}

std::vector<MeasureSamples> measure_create_commit(const std::vector<MeasureSeries>& series,
                                                  const MeasurePlan& plan) {
  std::vector<MeasureSamples> out(series.size());
  for (int round = 0; round < plan.rounds; ++round) {
    std::vector<File> files;
    try {
      run_round(series, plan, round, files, out);
    } catch (...) {
      release_all(series, files, round, true);
      throw;
    }
    release_all(series, files, round, false);
  }
  return out;
}

}  // namespace walseg
