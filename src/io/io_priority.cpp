// ioprio_set(2) and ioprio_get(2) for the calling thread (include/walseg/io_priority.h). glibc
// has no wrappers, and Debian 12's headers no <linux/ioprio.h> values we can rely on, so the
// ABI constants are spelled out here.
#include "walseg/io_priority.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "walseg/error.h"

namespace walseg {
namespace {

constexpr int kWhoProcess = 1;  // IOPRIO_WHO_PROCESS: with who = 0, the calling thread
constexpr int kClassShift = 13;
constexpr int kClassBestEffort = 2;
constexpr int kClassIdle = 3;
constexpr int kDefaultLevel = 4;

}  // namespace

void set_thread_io_class(FillIoClass c) {
  const int value = c == FillIoClass::kIdle ? kClassIdle << kClassShift
                                            : (kClassBestEffort << kClassShift) | kDefaultLevel;
  if (::syscall(SYS_ioprio_set, kWhoProcess, 0, value) != 0) {
    const int e = errno;
    throw make_error(e, "ioprio_set", "",
                     fmt::format("could not set the I/O class of the fill thread to {} (walseg.fill_io_class): {}",
                                 to_string(c), errno_text(e)));
  }
}

FillIoClass thread_io_class() {
  long v = ::syscall(SYS_ioprio_get, kWhoProcess, 0);
  if (v < 0) {
    const int e = errno;
    throw make_error(e, "ioprio_get", "", fmt::format("could not read the I/O class: {}", errno_text(e)));
  }
  // Class 0 (never set) means best effort at the level the nice value gives.
  return (static_cast<int>(v) >> kClassShift) == kClassIdle ? FillIoClass::kIdle : FillIoClass::kBestEffort;
}

}  // namespace walseg
