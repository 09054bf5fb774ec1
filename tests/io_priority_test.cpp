// Tests for include/walseg/io_priority.h: the calling thread's I/O class set and read back
// through the kernel (ioprio_set/ioprio_get), on its own thread so that no other test's thread
// is left in the idle class. Not covered: the effect on the block layer's scheduling (that is a
// benchmark: bench/pg_walswitch).
#define BOOST_TEST_MODULE io_priority
#include <boost/test/unit_test.hpp>

#include <thread>

#include "walseg/error.h"
#include "walseg/io_priority.h"

using namespace walseg;

BOOST_AUTO_TEST_CASE(Idle_ThenBestEffort_TheKernelReportsEach) {
  std::thread t([] {
    BOOST_TEST((thread_io_class() == FillIoClass::kBestEffort));  // a new thread: the default
    set_thread_io_class(FillIoClass::kIdle);
    BOOST_TEST((thread_io_class() == FillIoClass::kIdle));
    set_thread_io_class(FillIoClass::kBestEffort);
    BOOST_TEST((thread_io_class() == FillIoClass::kBestEffort));
  });
  t.join();
}

BOOST_AUTO_TEST_CASE(Idle_OnOneThread_LeavesTheOthersAlone) {
  std::thread t([] { set_thread_io_class(FillIoClass::kIdle); });
  t.join();
  BOOST_TEST((thread_io_class() == FillIoClass::kBestEffort));
}
