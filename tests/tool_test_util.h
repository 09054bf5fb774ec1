// Runs the `walseg` tool as a user would, for the tool's tests (guc_tool_test, tool_create_test,
// tool_bench_test): the tool is found next to the test executable (both build into bin/), each
// fixture gets its own scratch directory (fs_test_util.h's TempDir), and tool_built is the
// precondition that skips a suite when the tool has not been built.
//
// Not for: production code. Header-only so that each <unit>_test.cpp stays one executable.
#pragma once

#include <boost/test/unit_test.hpp>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fs_test_util.h"

namespace walseg_test {

namespace fs = std::filesystem;

inline fs::path tool_path() {
  return fs::read_symlink("/proc/self/exe").parent_path() / "walseg";
}

struct ToolTest {
  TempDir tmp;
  const std::string dir = tmp.path();
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  }
  struct Result {
    int status;
    std::string out, err;
  };
  // Runs `walseg <args>` (args are shell words, quoted by the caller where needed).
  Result run(const std::string& args) const {
    std::string cmd = "'" + tool_path().string() + "' " + args + " >'" + dir + "/out' 2>'" + dir + "/err'";
    int raw = std::system(cmd.c_str());
    auto slurp = [](const std::string& p) {
      std::ostringstream s;
      s << std::ifstream(p).rdbuf();
      return s.str();
    };
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(dir + "/out"), slurp(dir + "/err")};
  }
};

inline boost::test_tools::assertion_result tool_built(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result ok(fs::exists(tool_path()));
  ok.message() << "walseg tool not built next to the test (" << tool_path() << ")";
  return ok;
}

/// The first PID in `wal`'s walseg.lock: the holder, or a last writer that did not close the
/// directory cleanly (a clean close takes its PID out: DirLock::mark_clean_close). "" without
/// a lock file or a PID line.
inline std::string last_writer_pid(const std::string& wal) {
  std::string magic, pid;
  std::ifstream(wal + "/walseg.lock") >> magic >> pid;  // "walseg.lock", then the PID lines, then "end"
  return pid == "end" ? std::string() : pid;
}

/// A file written as walseg makes its own (mode 0600, this user), so that only what a test
/// varies (its name, its bytes) tells it from a leftover of walseg's.
inline void put_as_walseg_would(const std::string& path, const std::string& content) {
  {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  }
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
}


inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

/// The names in `dir`, sorted (none when it does not exist): what a command left there.
inline std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace walseg_test
