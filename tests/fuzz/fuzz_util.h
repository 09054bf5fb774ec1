// Helpers shared by the walseg libFuzzer targets: a cursor that reads the fuzzer's input as a
// stream of little-endian values, a scratch directory reused by every run of one process, and
// the property check that aborts (so that libFuzzer reports the input) with a reason.
//
// Not for: anything but the fuzz targets (header-only, so each target stays one executable).
// Thread-safety: none; libFuzzer calls a target from one thread.
// Build and run: tests/fuzz/run_fuzz.sh SECONDS (builds every target in build-fuzz/bin/).
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace walfuzz {

/// Aborts with `what` on stderr when `ok` is false: a property failed, and the abort makes
/// libFuzzer save the input as a crash.
inline void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "walseg fuzz property failed: %s\n", what);
  std::abort();
}

/// Reads the input front to back. Past its end every value is 0, so that any input, however
/// short, is a complete description and a prefix of an input means a prefix of its effects.
class Cursor {
 public:
  Cursor(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>(le(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(le(4)); }
  std::uint64_t u64() { return le(8); }

 private:
  std::uint64_t le(int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t{u8()} << (8 * i);
    return v;
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

/// A directory made once per process (on tmpfs when /dev/shm exists, so runs never wait for a
/// disk) and emptied before each run. Removed at exit; a crashed run leaves it for inspection.
class ScratchDir {
 public:
  static ScratchDir& get() {
    static ScratchDir dir;
    return dir;
  }
  const std::string& path() const { return path_; }

  /// Removes every entry (files, links, FIFOs, the empty directories a run made).
  void clear() const {
    DIR* d = ::opendir(path_.c_str());
    check(d != nullptr, "cannot open the scratch directory");
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      const std::string p = path_ + "/" + e->d_name;
      if (::unlink(p.c_str()) != 0) check(::rmdir(p.c_str()) == 0, "cannot empty scratch dir");
    }
    ::closedir(d);
  }

 private:
  ScratchDir() {
    struct stat st{};
    const char* tmp = std::getenv("TMPDIR");
    std::string base = ::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm"
                       : tmp != nullptr                                   ? tmp
                                                                          : "/tmp";
    std::string templ = base + "/walseg-fuzz.XXXXXX";
    check(::mkdtemp(templ.data()) != nullptr, "cannot make the scratch directory");
    path_ = templ;
  }
  ~ScratchDir() {
    clear();
    ::rmdir(path_.c_str());
  }

  std::string path_;
};

}  // namespace walfuzz
