// Helpers shared by the C++ half of the boundary (bridge_*.cpp); never included from C.
//
// Contents: copying text into C buffers, turning a caught exception into a WalsegErr, the
// Canceled exception raised when a WalsegCancel flag is set, ScratchDir, the private
// directory in which probes and benchmarks make their files, and a bench row's statistics.
// Thread-safety: no shared state. Lifetimes: a ScratchDir removes its directory and
// everything in it when destroyed, so it must not outlive the Directory it was made in.
#pragma once

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "bridge.h"
#include "walseg/directory.h"
#include "walseg/file.h"
#include "walseg/latency_summary.h"

namespace walseg::bridge {

/// Copies text into out[len] NUL-terminated, truncating. Never throws.
inline void copy_text(char* out, std::size_t len, std::string_view text) noexcept {
  if (len == 0) return;
  std::size_t n = std::min(len - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

/// Thrown inside the bridge when a cancel flag is seen; caught at the entry point.
struct Canceled : std::runtime_error {
  Canceled() : std::runtime_error("canceled") {}
};

/// Throws Canceled if either flag is set.
inline void check_cancel(const WalsegCancel& c) {
  if ((c.flag1 && *c.flag1) || (c.flag2 && *c.flag2) || (c.flag3 && *c.flag3)) throw Canceled();
}

/// Runs f (returning bool) and turns any exception into `false` with its text in why[len]:
/// the one place where the text-returning entry points stop C++ exceptions. Never throws.
template <typename F>
bool guarded(char* why, std::size_t len, F&& f) noexcept {
  try {
    return f();
  } catch (const std::exception& e) {
    copy_text(why, len, e.what());
  } catch (...) {
    copy_text(why, len, "unknown error");
  }
  return false;
}

/// Fills *err from the exception being handled (call only inside a catch block). Never throws.
void set_error(WalsegErr* err) noexcept;

/// `<parent>/walseg_scratch.<pid>.<tag>.XXXXXX`, made empty by mkdtemp (mode 0700), so never a
/// directory that was there. The destructor removes the files walseg made in it (names
/// is_walseg_file_name knows, regular files only) and then the directory if that emptied it:
/// nothing else, never through a link. The pid lets walseg_remove_stale_scratch find
/// leftovers of a process that died. Throws walseg::Error if it cannot be made.
class ScratchDir {
 public:
  ScratchDir(const std::string& parent, std::string_view tag);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  Directory& dir() { return dir_; }

 private:
  Directory parent_;
  std::string name_;
  Directory dir_;
  File owner_;  ///< the owner file, kept open as the journal of what is made in dir_
};

/// A walseg_bench() row's n, median, p90, p99 and max from samples (microseconds), by the
/// library's one percentile (latency_summary.h), so walseg_bench() and `walseg bench` print
/// the same figures for the same samples. Never throws.
inline void set_bench_stats(WalsegBenchRow* row, std::vector<double> us) noexcept {
  const SampleSummary s = summarize_latencies(us);
  row->n = static_cast<int>(s.n);
  row->p10_us = s.p10;
  row->median_us = s.median;
  row->p90_us = s.p90;
  row->p99_us = s.p99;
  row->max_us = s.max;
}

inline constexpr std::string_view kScratchPrefix = "walseg_scratch.";
/// Inside each scratch directory: names the directory's (st_dev, st_ino). Only a directory
/// whose owner file names the directory itself is walseg's to empty and remove.
inline constexpr std::string_view kScratchOwnerFileName = "walseg_scratch.owner";

/// Removes walseg's own files from the real directory `name` in `parent` (never following a
/// link), then the directory if that emptied it. Returns whether it was removed; errors are
/// swallowed (false). only_made: only files this process made (made_files), for its own
/// scratch directory; in a dead process's, only files born after its owner file that hold
/// nothing but what walseg_bench() writes (zeros, 0x5a).
bool remove_own_dir_quietly(const Directory& parent, const std::string& name, bool only_made = false) noexcept;

}  // namespace walseg::bridge
