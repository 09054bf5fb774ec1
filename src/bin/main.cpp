// walseg: the command-line tool. Subcommands live one per file (cmd_*.cpp).
#include <algorithm>
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "command.h"
#include "walseg/error.h"
#include "walseg/failpoint.h"

namespace walseg::tool {
std::vector<Command>& commands() {
  static std::vector<Command> list;
  return list;
}
int& exit_status() {
  static int status = 0;
  return status;
}
}  // namespace walseg::tool

int main(int argc, char** argv) {
  using namespace walseg::tool;
  // Line-buffered even into a file, so that log lines (stderr) fall between table rows, not
  // inside them, when both go to one file.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App app{"walseg: write-ahead-log segment manager and allocation-method benchmark"};
  app.require_subcommand(1);
  auto& list = commands();
  std::sort(list.begin(), list.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  for (auto& c : list) c.setup(app);
  try {
    walseg::failpoint::arm_from_environment();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "walseg: %s\n", e.what());
    return 1;
  }
  return exit_status();
}
