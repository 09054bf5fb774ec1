// How the `walseg` commands refuse, run as a user would run them (tool_test_util.h): a value
// out of range is a usage error before anything is allocated or made; a refused command
// leaves the directory as it found it (its leftovers, and no lock file it had not); every
// file in the way is named in one run; the message names what is wrong and what to do.
// Each case failed before its fix (break-it findings, second round).
#define BOOST_TEST_MODULE tool_refusal
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "tool_test_util.h"

using namespace walseg_test;

namespace {

const std::string k1MB = " -c walseg.segment_size=1MB -c walseg.min_size=2MB";

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void put_file(const std::string& path, std::size_t size) {
  std::ofstream(path, std::ios::binary) << std::string(size, '\0');
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(tool_refusal, ToolTest, *boost::unit_test::precondition(tool_built))

BOOST_AUTO_TEST_CASE(RecordSizeOutOfRangeIsAUsageErrorBeforeAnythingIsMade) {
  // 1TB was allocated per client: std::bad_alloc, exit 134, after the directory was made.
  for (const char* v : {"1TB", "0", "0x10000000000", "010", "nan", "-1", "1e30"}) {
    const std::string wal = dir + "/wal";
    auto r = run("write --dir '" + wal + "' --records 1 --record-size " + std::string(v) + k1MB);
    BOOST_TEST(r.status == 2, v << ": " << r.err);
    BOOST_TEST(contains(r.err, "--record-size"), r.err);
    BOOST_TEST(!fs::exists(wal), v);
  }
  auto r = run("write --dir '" + dir + "/wal' --records 1 --record-size 512MB --clients 1024" + k1MB);
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(!fs::exists(dir + "/wal"));
}

BOOST_AUTO_TEST_CASE(CreatePastTheLastSegmentNumberIsAUsageError) {
  auto r = run("create --dir '" + dir + "/wal' --method zero_write --start 0xFFFFFFFFFFFFFF --segment-size 1MB");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(contains(r.err, "goes past the last segment"), r.err);
  BOOST_TEST(!fs::exists(dir + "/wal"));
}

BOOST_AUTO_TEST_SUITE_END()
