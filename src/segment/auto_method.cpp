// walseg.init_method = auto (include/walseg/auto_method.h).
#include "walseg/auto_method.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "walseg/allocator.h"
#include "walseg/error.h"
#include "walseg/fs_info.h"
#include "walseg/latency_summary.h"
#include "walseg/log.h"
#include "walseg/own_files.h"
#include "walseg/measure_loop.h"
#include "walseg/segment_install.h"
#include "walseg/dir_lock.h"
#include "walseg/segment_name.h"

namespace walseg {
namespace {

// The probe: every candidate's file is created (fill + fsync, timed), then the first-pass
// commits go round-robin (measure_loop.h), one commit per file in turn. The probe files have
// temporary names, so a crash mid-probe leaves only what the start-up scan removes; they are
// removed after the commits, or when the probe fails.
std::vector<ProbeResult> probe_all(Directory& dir, const Config& cfg) {
  std::vector<MeasureSeries> series;
  std::vector<std::string> names(std::size(kCandidateOrder));
  std::vector<InitMethod> used(std::size(kCandidateOrder));
  std::vector<struct stat> ids(std::size(kCandidateOrder));
  for (std::size_t k = 0; k < std::size(kCandidateOrder); ++k)
    series.push_back(MeasureSeries{
        .create =
            [&, k](int, double* own_us) {
              File f = create_temp_file(dir, &names[k]);
              ids[k] = f.stat();
              try {
                const auto t0 = std::chrono::steady_clock::now();  // the fill and fsync only
                AllocReport a = allocate_file(
                    f, kProbeFileBytes, AllocOptions{.method = kCandidateOrder[k], .fallback = cfg.fallocate_fallback});
                f.fsync();
                *own_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                used[k] = a.used;
              } catch (...) {
                // A file whose fill failed is not handed to the loop, which releases only what
                // it was given (break-it round 20 L1: a full disk left it in a new directory
                // without walseg.lock, where no later writer takes it for a leftover).
                f = File();
                try {
                  if (dir.names_file(names[k], ids[k])) dir.unlink(names[k], true);
                  DirLock::gone(dir, names[k]);
                } catch (const Error&) {
                  // the start-up scan removes it; the fill's error is the one to report
                }
                names[k].clear();
                throw;
              }
              return f;
            },
        .release =
            [&, k](int, File& f) {
              if (f.is_open()) f.close();
              // Only while the name is still the probe's file: one moved onto it during the
              // probe, which takes a second, is someone's (break-it round 8 F1).
              if (names[k].empty()) return;
              if (dir.names_file(names[k], ids[k])) dir.unlink(names[k], true);
              DirLock::gone(dir, names[k]);
            }});
  auto samples = measure_create_commit(
      series, MeasurePlan{.commit_bytes = kProbeWriteBytes, .record_bytes = kProbeCommitBytes});
  std::vector<ProbeResult> out;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    out.push_back(probe_result(used[k], samples[k].create_us.front(), samples[k].commit_us));
    if (used[k] != kCandidateOrder[k]) out.back().asked = kCandidateOrder[k];
  }
  return out;
}

std::string fs_identity(const Directory& dir) {
  struct stat st{};
  if (::fstat(dir.fd(), &st) != 0) throw dir_error(errno, "stat", dir.path());
  return fmt::format("{}:{}", fs_info(dir.path()).type_name, static_cast<unsigned long long>(st.st_dev));
}

// What is under walseg.auto: nothing, walseg's cache (an object with the three strings
// write_cache writes; `decision` set when it is for this filesystem and names a method, with
// the probes' numbers when they parse), or someone else's file, which walseg never replaces.
struct CacheFile {
  bool exists = false;
  bool ours = false;
  std::optional<AutoDecision> decision;
};

// The probes' numbers in a cache file, or none if any entry does not parse: then a caller that
// needs them (full_size_only) probes again. Never throws.
std::vector<ProbeResult> read_probes(const nlohmann::json& j) {
  std::vector<ProbeResult> out;
  try {
    for (const auto& p : j.at("probes")) {
      auto m = enum_from_name<InitMethod>(p.at("method").get<std::string>(), kInitMethodNames);
      if (!m || *m == InitMethod::kAuto) return {};
      out.push_back(ProbeResult{.method = *m, .create_us = p.at("create_us").get<double>(),
                                .commit_p10_us = p.at("commit_p10_us").get<double>(),
                                .commit_median_us = p.at("commit_median_us").get<double>(),
                                .commit_p99_us = p.at("commit_p99_us").get<double>()});
    }
  } catch (const std::exception&) {
    return {};
  }
  return out;
}

CacheFile read_cache(const Directory& dir, const std::string& identity, const char* name = kAutoCacheFileName) {
  CacheFile out;
  if (!dir.exists(name)) return out;
  out.exists = true;
  try {
    struct stat found{};
    File f = File::open_at_if_regular(dir, name, O_RDONLY, found);  // a device is never opened
    if (!f.is_open() || !S_ISREG(f.stat().st_mode) || f.stat().st_nlink != 1) return out;
    // Made as walseg makes its files, whatever it holds: a user's 0644 file in walseg's layout
    // (or root's, for a writer of another user) was replaced and removed (break-it round 25 H1).
    if (not_made_as_walseg_makes_files(f.stat())) return out;
    // Whole, and exactly as write_cache writes it: a longer file was read only in part, and
    // a parse lets the last of duplicate keys win (break-it round 35 H4: user text past 64 kB,
    // or under a repeated key, was replaced).
    constexpr std::size_t kMaxCacheBytes = 64 * 1024;
    if (static_cast<std::uint64_t>(f.stat().st_size) > kMaxCacheBytes) return out;
    std::string text(kMaxCacheBytes + 1, '\0');
    text.resize(f.pread(text.data(), text.size(), 0));
    auto j = nlohmann::json::parse(text);
    if (text != j.dump(2) + "\n") return out;
    // Only what write_cache writes: any other key is someone's data in walseg's layout, which
    // a stale cache's replacement would destroy (break-it round 34 H2: a 0600 walseg.auto with a
    // "runbook" key was replaced by the probe's cache).
    static const std::set<std::string> kKeys = {"filesystem", "method", "reason", "probes"};
    static const std::set<std::string> kProbeKeys = {"method", "create_us", "commit_p10_us", "commit_median_us",
                                                     "commit_p99_us"};
    if (!j.is_object()) return out;
    for (const auto& [k, v] : j.items())
      if (!kKeys.contains(k)) return out;
    if (j.contains("probes")) {
      if (!j["probes"].is_array()) return out;
      for (const auto& p : j["probes"]) {
        if (!p.is_object()) return out;
        for (const auto& [k, v] : p.items())
          if (!kProbeKeys.contains(k)) return out;
      }
    }
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
    d.probes = read_probes(j);
    out.decision = d;
  } catch (const std::exception&) {
    // unreadable, not JSON, or not walseg's layout: someone's file, probe without caching
  }
  return out;
}

// replace: the name held walseg's cache when it was read; otherwise it held nothing and the
// cache goes in only if it still does (a file put there during the probe, which takes a
// second, is someone's: break-it round 5 F3). Returns false when it did not go in.
bool write_cache(Directory& dir, const std::string& identity, const AutoDecision& d, bool replace) {
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
  struct stat mine{};  // st_ino 0 until known: then the name is the one just made exclusively
  // Only walseg's own temporary file is removed: one moved onto its name meanwhile is someone's.
  auto drop_tmp = [&] {
    if (mine.st_ino == 0 || dir.names_file(tmp, mine)) dir.unlink(tmp, true);
    DirLock::gone(dir, tmp);
  };
  try {
    mine = f.stat();
    f.pwrite_all(text.data(), text.size(), 0);
    f.fsync();
    f.close();
    if (replace) {
      // Replaced only while it is still walseg's cache (it was when read, a second ago).
      const Directory::ReplaceResult r = dir.replace_checked(tmp, mine, kAutoCacheFileName, [&](const std::string& name) {
        return read_cache(dir, identity, name.c_str()).ours ? std::nullopt
                                                            : std::optional<std::string>("not walseg's cache");
      });
      if (!r.replaced) {
        drop_tmp();
        return false;
      }
      if (r.left_at_from)
        log(LogLevel::kWarning,
            fmt::format("cached the auto decision in \"{}\", but a file moved onto it or onto \"{}\" meanwhile is "
                        "not walseg's and is now under \"{}\"; walseg left it there: move it out of the directory",
                        dir.path_of(kAutoCacheFileName), dir.path_of(tmp), dir.path_of(tmp)));
    } else {
      try {
        dir.rename_noreplace(tmp, kAutoCacheFileName);
      } catch (const Error& e) {
        if (e.errnum() != EEXIST) throw;
        drop_tmp();
        return false;
      }
    }
  } catch (...) {
    // Like the probe files, the cache's temporary file never outlives a failure.
    try {
      drop_tmp();
    } catch (const Error&) {
    }
    throw;
  }
  dir.fsync();
  DirLock::gone(dir, tmp);  // renamed (what replace_checked left there is someone's)
  return true;
}

// full_size_only (append_only): when the rule's choice is of the other kind, the same rule
// over the numbers of the methods of the kind wanted, and a reason that says what would have
// been first.
void keep_kind_only(AutoDecision& d, const Directory& dir, bool copy_on_write, bool full_size) {
  // The rule over the allowed kind alone, always: the methods of the other kind set no
  // threshold or bound here (new-user trial 18: over all six, fallocate_keep_size's figures made
  // the bound, and the choice could differ from the rule over the full-size methods).
  std::vector<ProbeResult> usable;
  for (const auto& p : d.probes)
    if (makes_full_size_segments(p.method) == full_size) usable.push_back(p);
  const char* kind = full_size ? "full-size" : "append-mode";
  if (usable.empty()) throw make_error(0, "probe", dir.path(), fmt::format("no method that makes {} files was probed", kind));
  const InitMethod first = d.method;
  d.method = decide_init_method(usable, copy_on_write);
  const std::string other =
      makes_full_size_segments(first) == full_size
          ? fmt::format("{} would be first over all methods", to_string(first))
          : fmt::format("{} would be first over all methods but {}", to_string(first),
                        full_size ? "makes files shorter than their size" : "makes full-size files");
  d.reason = fmt::format("the rule over the {} methods alone, the only ones that may be chosen here{}; over all "
                         "methods: {}",
                         kind, first == d.method ? "" : " (" + other + ")", d.reason);
}

AutoDecision probe_and_decide(Directory& dir, const Config& cfg, const std::string& identity, bool copy_on_write) {
  AutoDecision d;
  d.probes = probe_all(dir, cfg);
  const RuleWorking w = apply_init_rule(d.probes, copy_on_write);
  d.method = d.probes[w.chosen].method;
  std::string numbers;
  for (const auto& p : d.probes)
    // A method that fell back under the name it was asked by (the new-user trial: ext2's LOG
    // line listed "zero_write" and "none" twice each).
    numbers += fmt::format("{}{}: create {:.0f} us, commit p10 {:.0f} us median {:.0f} us p99 {:.0f} us",
                           numbers.empty() ? "" : "; ",
                           p.asked ? fmt::format("{} as {}", to_string(*p.asked), to_string(p.method))
                                   : std::string(to_string(p.method)),
                           p.create_us,
                           p.commit_p10_us, p.commit_median_us, p.commit_p99_us);
  // The rule's own numbers, as `walseg bench`'s verdict prints them, so the two read alike.
  const ProbeResult& best = d.probes[w.best];
  const ProbeResult& cheap = d.probes[w.cheapest];
  d.reason = fmt::format("fastest commits (10th percentile within {:.0f}% of the best, {}'s {:.0f} us: at most "
                         "{:.0f} us), then cheapest creation (at most {:.0f} us, from the cheapest of those, {}'s "
                         "{:.0f} us){}, on {}: {}",
                         kCommitTolerance * 100, to_string(best.method), best.commit_p10_us, w.threshold_us,
                         w.create_bound_us, to_string(cheap.method), cheap.create_us,
                         w.tie_break ? (copy_on_write ? ", then the candidate order for copy-on-write filesystems "
                                                        "(methods that reserve nothing first)"
                                                      : ", then the candidate order")
                                     : "",
                         identity, numbers);
  return d;
}

}  // namespace

ProbeResult probe_result(InitMethod method, double create_us, std::vector<double> commit_us) {
  const SampleSummary c = summarize_latencies(commit_us);
  return ProbeResult{.method = method, .create_us = create_us, .commit_p10_us = c.p10,
                     .commit_median_us = c.median, .commit_p99_us = c.p99};
}

std::span<const InitMethod> candidate_order(bool copy_on_write) {
  if (copy_on_write) return kCandidateOrderCopyOnWrite;
  return kCandidateOrder;
}

RuleWorking apply_init_rule(const std::vector<ProbeResult>& results, bool copy_on_write) {
  RuleWorking w;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].commit_p10_us < results[w.best].commit_p10_us) w.best = i;
  w.threshold_us = results[w.best].commit_p10_us * (1 + kCommitTolerance);
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].commit_p10_us <= w.threshold_us) w.fast.push_back(i);
  w.cheapest = w.fast.front();  // best itself is always fast
  for (std::size_t i : w.fast)
    if (results[i].create_us < results[w.cheapest].create_us) w.cheapest = i;
  const double c = results[w.cheapest].create_us;
  w.create_bound_us = std::max(c + kCreateSlackUs, c * kCreateSlackRatio);
  for (std::size_t i : w.fast)
    if (results[i].create_us <= w.create_bound_us) w.both.push_back(i);
  // Among the equally fast and equally cheap, the first in the candidate order (its comment
  // says why).
  bool found = false;
  for (InitMethod m : candidate_order(copy_on_write))
    for (std::size_t i : w.both)
      if (!found && results[i].method == m) w.chosen = i, found = true;
  for (std::size_t i : w.both)
    if (results[i].method != results[w.chosen].method) w.tie_break = true;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (results[i].method != results[w.chosen].method &&
        results[i].commit_p10_us <= w.threshold_us * (1 + kRunNoise) &&
        results[i].create_us <= w.create_bound_us * (1 + kRunNoise))
      w.close.push_back(i);
  return w;
}

InitMethod decide_init_method(const std::vector<ProbeResult>& results, bool copy_on_write) {
  return results[apply_init_rule(results, copy_on_write).chosen].method;
}

AutoDecision choose_init_method(const AutoOptions& opts, const Config& cfg) {
  if (opts.probe_dir == nullptr) throw make_error(EINVAL, "probe", "", "auto: no directory to probe in");
  Directory& dir = *opts.probe_dir;
  const std::string identity = fs_identity(dir);
  const bool cow = fs_info(dir.path()).copy_on_write;
  CacheFile cache;
  if (opts.cache_dir) cache = read_cache(*opts.cache_dir, identity);
  // A cache without the probes' numbers cannot be narrowed to the full-size methods: probe.
  const bool narrowed = opts.full_size_only || opts.append_only;
  auto narrow = [&](AutoDecision& d) {
    if (narrowed) keep_kind_only(d, dir, cow, opts.full_size_only);
  };
  if (cache.decision && (!narrowed || !cache.decision->probes.empty())) {
    AutoDecision d = *cache.decision;
    narrow(d);
    return d;
  }
  AutoDecision d = probe_and_decide(dir, cfg, identity, cow);
  // The cache holds the rule's choice among all methods, so that every caller can use it.
  if (opts.cache_dir) {
    // walseg.auto is walseg's name, but a file there that is not walseg's cache (a symbolic
    // link, another program's file) is someone's: the decision is used, not cached.
    if (cache.exists && !cache.ours)
      log(LogLevel::kWarning, fmt::format("not caching the auto decision: \"{}\" is not walseg's cache file and "
                                          "walseg does not replace it; move it away so the probe need not run at "
                                          "every start",
                                          opts.cache_dir->path_of(kAutoCacheFileName)));
    else if (!write_cache(*opts.cache_dir, identity, d, cache.exists))
      log(LogLevel::kWarning, fmt::format("not caching the auto decision: \"{}\" appeared or was replaced while the "
                                          "probe ran, and walseg does not replace a file it did not make",
                                          opts.cache_dir->path_of(kAutoCacheFileName)));
  }
  narrow(d);
  if (opts.log_decision)
    log(LogLevel::kLog, fmt::format("walseg.init_method = auto chose {} for directory \"{}\": {}",
                                    to_string(d.method), dir.path(), d.reason));
  return d;
}

bool holds_auto_cache(const Directory& dir, const std::string& name) {
  try {
    return read_cache(dir, "", name.c_str()).ours;
  } catch (const std::exception&) {
    return false;
  }
}

AutoDecision choose_init_method(Directory& dir, const Config& cfg, std::optional<bool> wal_append_mode) {
  return choose_init_method(AutoOptions{.probe_dir = &dir,
                                        .cache_dir = &dir,
                                        .full_size_only = wal_append_mode == false,
                                        .append_only = wal_append_mode == true},
                            cfg);
}

}  // namespace walseg
