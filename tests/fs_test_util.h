// Helpers shared by the io, allocator and segment-install tests: a fresh temporary directory per
// test on a real disk filesystem, independent stat/list helpers (plain syscalls, not the code
// under test), a log capture, and an error matcher that checks errno AND message text.
//
// Not for: production code. Header-only so that each <unit>_test.cpp stays one executable.
// Thread-safety: fixtures are per test; LogCapture replaces the process-wide log sink.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "walseg/dir_lock.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"
#include "walseg/log.h"
#include "walseg/segment_name.h"
#include "walseg/wal_control.h"

namespace walseg_test {

/// mkdtemp under `base` (default /var/tmp: ext4 on a disk here, unlike a possible tmpfs /tmp);
/// removed with everything in it on destruction.
class TempDir {
 public:
  explicit TempDir(const std::string& base = "/var/tmp") {
    std::string tmpl = base + "/walseg_test.XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
      BOOST_FAIL("mkdtemp under " << base << " failed: " << std::strerror(errno));
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Base fixture: every failpoint disarmed before and after each test, and a fresh directory.
struct FreshDirFixture {
  FreshDirFixture() { walseg::failpoint::disarm_all(); }
  ~FreshDirFixture() { walseg::failpoint::disarm_all(); }
  TempDir dir;
};

/// stat(2) of a path; fails the test if it does not exist.
inline struct stat stat_path(const std::string& path) {
  struct stat st{};
  BOOST_REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0,
                        "stat " << path << ": " << std::strerror(errno));
  return st;
}

inline bool path_exists(const std::string& path) {
  struct stat st{};
  return ::lstat(path.c_str(), &st) == 0;
}

/// Allocated bytes as the filesystem reports them (st_blocks is in 512-byte units).
inline std::uint64_t allocated_bytes(const struct stat& st) {
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

/// Entry names of a directory (readdir, sorted, without . and ..).
inline std::vector<std::string> list_names(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  BOOST_REQUIRE_MESSAGE(d != nullptr, "opendir " << dir << ": " << std::strerror(errno));
  while (struct dirent* de = ::readdir(d)) {
    std::string n = de->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

/// 24 upper-case hex digits, written out here rather than taken from segment_name.h.
inline bool looks_like_segment_name(const std::string& n) {
  if (n.size() != 24) return false;
  for (char c : n)
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

/// Writes `n` bytes of `byte` at offset with plain pwrite(2) (test setup, not code under test).
inline void write_bytes(const std::string& path, std::uint64_t offset, std::size_t n, char byte) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  BOOST_REQUIRE(fd >= 0);
  std::vector<char> buf(n, byte);
  BOOST_REQUIRE(::pwrite(fd, buf.data(), n, static_cast<off_t>(offset)) ==
                static_cast<ssize_t>(n));
  ::close(fd);
}

/// Reads the whole file with plain read(2).
/// Writes `content` to `path` as walseg makes its own files (mode 0600, this user: own_files.h),
/// replacing what is there, so that only what a test varies (a name, the bytes) tells it from
/// a file of walseg's.
inline void put_as_walseg_makes_it(const std::string& path, const std::string& content) {
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  BOOST_REQUIRE_MESSAGE(fd >= 0, path << ": " << std::strerror(errno));
  BOOST_REQUIRE(::fchmod(fd, 0600) == 0);
  BOOST_REQUIRE(::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
  ::close(fd);
}

/// Makes `wal`'s walseg.lock say its last writer crashed, as a kill -9 leaves it: still naming
/// that writer (only a clean close takes its PID out: DirLock::mark_clean_close), whose
/// temporary files (xlogtemp.<pid>[.N], walseg.control.tmp) are the only leftovers a writer's
/// opening removes. Rewritten in place (the same file, born when it was), as walseg does.
/// Lists, as the writer lists each before it makes the file (DirLock::will_create), every
/// temporary name there now and the ones a test plants afterwards: walseg.control.tmp,
/// xlogtemp.<pid> and xlogtemp.<pid>.0 to .15.
/// Returns the PID, the test's own, which no writer the test runs can have; a test that fakes
/// a crashed writer's leftovers names them for it.
inline std::string as_if_the_last_writer_crashed(const std::string& wal) {
  const auto pid = static_cast<std::uint32_t>(::getpid());
  // A writer lists each temporary name before it creates the file: the crash's leftovers are
  // the listed ones, so every file under such a name now is listed.
  std::vector<std::string> temps{walseg::kControlTempFileName, "xlogtemp." + std::to_string(pid)};
  for (int n = 0; n < 16; ++n) temps.push_back("xlogtemp." + std::to_string(pid) + "." + std::to_string(n));
  for (const auto& e : std::filesystem::directory_iterator(wal)) {
    const std::string n = e.path().filename().string();
    if ((n == walseg::kControlTempFileName || walseg::parse_temp_file_name(n)) &&
        std::find(temps.begin(), temps.end(), n) == temps.end())
      temps.push_back(n);
  }
  const std::string text = walseg::lock_file_text({pid}, temps);
  const std::string path = wal + "/walseg.lock";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  BOOST_REQUIRE_MESSAGE(fd >= 0, path << ": " << std::strerror(errno));
  BOOST_REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  ::close(fd);
  return std::to_string(pid);
}

inline std::vector<char> read_all(const std::string& path) {
  std::vector<char> out;
  int fd = ::open(path.c_str(), O_RDONLY);
  BOOST_REQUIRE(fd >= 0);
  char buf[65536];
  for (ssize_t r; (r = ::read(fd, buf, sizeof buf)) > 0;) out.insert(out.end(), buf, buf + r);
  ::close(fd);
  return out;
}

/// Captures log messages while alive; restores a stderr printer afterwards.
class LogCapture {
 public:
  LogCapture() {
    walseg::set_log_sink([this](walseg::LogLevel l, const std::string& m) {
      std::lock_guard lk(mu_);
      lines_.emplace_back(l, m);
    });
  }
  ~LogCapture() {
    walseg::set_log_sink([](walseg::LogLevel l, const std::string& m) {
      if (l != walseg::LogLevel::kDebug2)
        std::fprintf(stderr, "%s:  %s\n", walseg::log_level_name(l), m.c_str());
    });
  }
  /// Number of messages at `level` containing `needle`.
  std::size_t count(walseg::LogLevel level, const std::string& needle) {
    std::lock_guard lk(mu_);
    std::size_t n = 0;
    for (const auto& [l, m] : lines_)
      if (l == level && m.find(needle) != std::string::npos) ++n;
    return n;
  }
  std::vector<std::pair<walseg::LogLevel, std::string>> lines() {
    std::lock_guard lk(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<walseg::LogLevel, std::string>> lines_;
};

/// Predicate for BOOST_CHECK_EXCEPTION: the Error carries `errnum` and its message contains
/// every one of `needles`. Prints the message so a failure shows what was said instead.
inline auto error_is(int errnum, std::vector<std::string> needles) {
  return [errnum, needles = std::move(needles)](const walseg::Error& e) {
    bool ok = e.errnum() == errnum && e.code().value() == errnum;
    std::string what = e.what();
    for (const auto& n : needles)
      if (what.find(n) == std::string::npos) {
        ok = false;
        BOOST_TEST_MESSAGE("missing \"" << n << "\"");
      }
    if (!ok)
      BOOST_TEST_MESSAGE("errno " << e.errnum() << " (wanted " << errnum << "): " << what);
    return ok;
  };
}

}  // namespace walseg_test
