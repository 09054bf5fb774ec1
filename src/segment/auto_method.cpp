// walseg.init_method = auto (include/walseg/auto_method.h).
#include "walseg/auto_method.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <chrono>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "walseg/allocator.h"
#include "walseg/error.h"
#include "walseg/fs_info.h"
#include "walseg/log.h"
#include "walseg/segment_install.h"
#include "walseg/segment_name.h"

namespace walseg {
namespace {

using Clock = std::chrono::steady_clock;

constexpr InitMethod kCandidates[] = {InitMethod::kZeroWrite, InitMethod::kPosixFallocate,
                                      InitMethod::kGlibcEmulation, InitMethod::kSparse,
                                      InitMethod::kFallocateKeepSize, InitMethod::kNone};

double since_us(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The probe: every candidate's file is created (fill + fsync, timed), then the first-pass
// commits go round-robin, one commit per file in turn, so that a burst of noise from the rest
// of the machine lands on every method alike instead of deciding the outcome. The probe files
// have temporary names, so a crash mid-probe leaves only what the start-up scan removes.
struct ProbeFile {
  std::string name;
  File file;
  ProbeResult result;
  std::vector<double> commit_us;
};

std::vector<ProbeResult> probe_all(Directory& dir, const Config& cfg) {
  std::vector<ProbeFile> files;
  auto remove_all = [&] {
    for (auto& p : files) dir.unlink(p.name, true);
  };
  try {
    for (InitMethod m : kCandidates) {
      ProbeFile p;
      p.file = create_temp_file(dir, &p.name);
      files.push_back(std::move(p));
      auto t0 = Clock::now();
      AllocReport a = allocate_file(files.back().file, kProbeFileBytes,
                                    AllocOptions{.method = m, .fallback = cfg.fallocate_fallback});
      files.back().file.fsync();
      files.back().result.create_us = since_us(t0);
      files.back().result.method = a.used;
    }
    std::vector<char> rec(kProbeCommitBytes, '\x5a');
    for (std::uint64_t off = 0; off + rec.size() <= kProbeWriteBytes; off += rec.size())
      for (auto& p : files) {
        auto t = Clock::now();
        p.file.pwrite_all(rec.data(), rec.size(), off);
        p.file.fdatasync();
        p.commit_us.push_back(since_us(t));
      }
  } catch (...) {
    remove_all();
    throw;
  }
  std::vector<ProbeResult> out;
  for (auto& p : files) {
    p.file.close();
    std::sort(p.commit_us.begin(), p.commit_us.end());
    p.result.commit_p10_us = p.commit_us[p.commit_us.size() / 10];
    p.result.commit_median_us = p.commit_us[p.commit_us.size() / 2];
    p.result.commit_p99_us = p.commit_us[std::min(p.commit_us.size() - 1, p.commit_us.size() * 99 / 100)];
    out.push_back(p.result);
  }
  remove_all();
  return out;
}

std::string fs_identity(const Directory& dir) {
  struct stat st{};
  if (::fstat(dir.fd(), &st) != 0) throw dir_error(errno, "stat", dir.path());
  return fmt::format("{}:{}", fs_info(dir.path()).type_name, static_cast<unsigned long long>(st.st_dev));
}

// What is under walseg.auto: nothing, walseg's cache (an object with the three strings
// write_cache writes; `decision` set when it is for this filesystem and names a method), or
// someone else's file, which walseg never replaces.
struct CacheFile {
  bool exists = false;
  bool ours = false;
  std::optional<AutoDecision> decision;
};

CacheFile read_cache(const Directory& dir, const std::string& identity) {
  CacheFile out;
  if (!dir.exists(kAutoCacheFileName)) return out;
  out.exists = true;
  try {
    File f = File::open_at(dir, kAutoCacheFileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!S_ISREG(f.stat().st_mode) || f.stat().st_nlink != 1) return out;
    std::string text(64 * 1024, '\0');
    text.resize(f.pread(text.data(), text.size(), 0));
    auto j = nlohmann::json::parse(text);
    const std::string fs = j.at("filesystem").get<std::string>();
    const std::string method = j.at("method").get<std::string>();
    const std::string reason = j.at("reason").get<std::string>();
    out.ours = true;  // walseg's layout, of this version or another: replaced when stale
    if (fs != identity) return out;
    auto m = enum_from_name<InitMethod>(method, kInitMethodNames);
    // "auto" is not a decision (allocate_file refuses it): a cache naming it is corrupt.
    if (!m || *m == InitMethod::kAuto) return out;
    AutoDecision d;
    d.method = *m;
    d.reason = reason;
    d.from_cache = true;
    out.decision = d;
  } catch (const std::exception&) {
    // unreadable, not JSON, or not walseg's layout: someone's file, probe without caching
  }
  return out;
}

void write_cache(Directory& dir, const std::string& identity, const AutoDecision& d) {
  nlohmann::json j;
  j["filesystem"] = identity;
  j["method"] = to_string(d.method);
  j["reason"] = d.reason;
  for (const auto& p : d.probes)
    j["probes"].push_back({{"method", to_string(p.method)}, {"create_us", p.create_us},
                           {"commit_p10_us", p.commit_p10_us}, {"commit_median_us", p.commit_median_us},
                           {"commit_p99_us", p.commit_p99_us}});
  std::string text = j.dump(2) + "\n";
  std::string tmp;
  File f = create_temp_file(dir, &tmp);
  try {
    f.pwrite_all(text.data(), text.size(), 0);
    f.fsync();
    f.close();
    dir.rename_over(tmp, kAutoCacheFileName);
  } catch (...) {
    // Like the probe files, the cache's temporary file never outlives a failure.
    try {
      dir.unlink(tmp, true);
    } catch (const Error&) {
    }
    throw;
  }
  dir.fsync();
}

}  // namespace

InitMethod decide_init_method(const std::vector<ProbeResult>& results) {
  double best = results.front().commit_p10_us;
  for (const auto& r : results) best = std::min(best, r.commit_p10_us);
  auto fast = [&](const ProbeResult& r) { return r.commit_p10_us <= best * (1 + kCommitTolerance); };
  double cheapest = std::numeric_limits<double>::infinity();
  for (const auto& r : results)
    if (fast(r)) cheapest = std::min(cheapest, r.create_us);
  const double cheap_enough = std::max(cheapest + kCreateSlackUs, cheapest * kCreateSlackRatio);
  // Among the equally fast and equally cheap, the first in kCandidates order: methods that
  // reserve space come before those that do not, and the order never depends on noise.
  for (InitMethod m : kCandidates)
    for (const auto& r : results)
      if (r.method == m && fast(r) && r.create_us <= cheap_enough) return m;
  return results.front().method;  // unreachable: the fastest result always qualifies
}

AutoDecision choose_init_method(Directory& dir, const Config& cfg) {
  std::string identity = fs_identity(dir);
  const CacheFile cache = read_cache(dir, identity);
  if (cache.decision) return *cache.decision;
  AutoDecision d;
  d.probes = probe_all(dir, cfg);
  d.method = decide_init_method(d.probes);
  std::string numbers;
  for (const auto& p : d.probes)
    numbers += fmt::format("{}{}: create {:.0f} us, commit p10 {:.0f} us median {:.0f} us p99 {:.0f} us",
                           numbers.empty() ? "" : "; ", to_string(p.method), p.create_us,
                           p.commit_p10_us, p.commit_median_us, p.commit_p99_us);
  d.reason = fmt::format("fastest commits (10th percentile within {:.0f}% of the best), then cheapest creation, on {}: {}",
                         kCommitTolerance * 100,
                         identity, numbers);
  // walseg.auto is walseg's name, but a file there that is not walseg's cache (a symbolic
  // link, another program's file) is someone's: the decision is used, not cached.
  if (cache.exists && !cache.ours)
    log(LogLevel::kWarning, fmt::format("not caching the auto decision: \"{}\" is not walseg's cache file and "
                                        "walseg does not replace it; move it away so the probe need not run at "
                                        "every start",
                                        dir.path_of(kAutoCacheFileName)));
  else
    write_cache(dir, identity, d);
  log(LogLevel::kLog, fmt::format("walseg.init_method = auto chose {} for directory \"{}\": {}",
                                  to_string(d.method), dir.path(), d.reason));
  return d;
}

}  // namespace walseg
