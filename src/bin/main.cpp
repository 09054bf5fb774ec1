// walseg: the command-line tool. Subcommands live one per file (cmd_*.cpp).
#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

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

namespace {
constexpr int kUsageError = 2;
}  // namespace

int main(int argc, char** argv) {
  using namespace walseg::tool;
  // Line-buffered even into a file, so that log lines (stderr) fall between table rows, not
  // inside them, when both go to one file.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  // As PostgreSQL's postmaster does: past a file-size limit (ulimit -f) a write then fails
  // with EFBIG, reported with its path like any failed write, rather than SIGXFSZ killing the
  // tool with a core dump and no word (break-it round 30).
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"walseg: write-ahead-log segment manager and allocation-method benchmark"};
  app.require_subcommand(1);
  app.footer("walseg help [COMMAND] is walseg [COMMAND] --help. README.md has every command's details.");
  app.set_version_flag("-V,--version", std::string("walseg ") + WALSEG_VERSION);  // -V as PostgreSQL's tools
  auto& list = commands();
  std::sort(list.begin(), list.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  // Wide enough for "--records UINT:1..1099511627776" and its description on one line.
  app.get_formatter()->column_width(38);
  for (auto& c : list) c.setup(app);
  for (CLI::App* sub : app.get_subcommands({}))
    sub->footer(
        "Integers are decimal, or hexadecimal after 0x; a leading zero is refused (C would read octal).\n"
        "Sizes take the units B, kB, MB, GB, TB (case-sensitive, x1024), as settings do: 16MB, 8kB.");
  // CLI11 takes the word after an option as its value even when it is another option:
  // `bench --json --keep` wrote a file named "--keep" and kept nothing. A value that looks
  // like an option (-x, --x; not "-" alone or a negative number) is a usage error instead.
  const CLI::Validator not_an_option(
      [](std::string& v) -> std::string {
        if (v.size() >= 2 && v[0] == '-' && (v[1] == '-' || std::isalpha(static_cast<unsigned char>(v[1]))))
          return "\"" + v + "\" is an option, not a value: give this option its value first";
        return {};
      },
      "");
  for (CLI::App* sub : app.get_subcommands({}))
    for (CLI::Option* o : sub->get_options()) {
      if (o->get_items_expected_max() > 0 && !o->get_positional()) o->check(not_an_option);
      // A single-valued option given twice: the last one counts, as with PostgreSQL's tools
      // (getopt), not CLI11's "At Most 1 required but received 2" (the new-user trial).
      // --config stays refused twice: which settings apply is not for the tool to guess.
      if (o->get_items_expected_max() == 1 && o->get_expected_max() == 1 && !o->get_positional() &&
          o->get_name() != "--config")
        o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    }
  // `walseg help [COMMAND]`, as git and pg_ctl users type it: the same as --help.
  std::vector<char*> args(argv, argv + argc);
  static char help_flag[] = "--help";
  if (argc > 1 && std::string_view(argv[1]) == "help") {
    args.erase(args.begin() + 1);
    args.insert(args.begin() + (args.size() > 1 ? 2 : 1), help_flag);
    argc = static_cast<int>(args.size());
    argv = args.data();
  }
  // CLI11 would take an unknown word for a missing subcommand ("A subcommand is required").
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(list.begin(), list.end(), [&](const Command& c) { return c.name == argv[1]; })) {
    std::string names;
    for (const auto& c : list) names += (names.empty() ? "" : ", ") + c.name;
    std::fprintf(stderr, "walseg: unknown command %s; commands are: %s (walseg --help for more)\n", argv[1],
                 names.c_str());
    return kUsageError;
  }
  try {
    walseg::failpoint::arm_from_environment();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (105 for a bad value, 106 for a missing option, 109 for an unknown
    // one, ...) mean nothing to a script: 0 for --help, 2 for every usage error, as getopt
    // tools and `walseg check-config` without a file do.
    return app.exit(e) == 0 ? 0 : kUsageError;
  } catch (const std::invalid_argument& e) {
    // The subcommands' own checks of their options (sizes, method names, LSNs, phases): also
    // usage errors. The library never throws this type (its errors are walseg::Error).
    std::fprintf(stderr, "walseg: %s\n", e.what());
    return kUsageError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "walseg: out of memory (is a memory limit set? ulimit -v)\n");
    return 1;
  } catch (const std::system_error& e) {
    // std::thread's EAGAIN: a bare "Resource temporarily unavailable" named nothing to change
    // (break-it round 30: under ulimit -u or -v).
    // walseg's own errors are system_errors too, and EWOULDBLOCK is EAGAIN: a busy directory's
    // flock is not a thread (break-it round 33 L2).
    if (e.code() == std::errc::resource_unavailable_try_again && dynamic_cast<const walseg::Error*>(&e) == nullptr)
      std::fprintf(stderr, "walseg: could not start a thread: %s (a limit on processes or memory: ulimit -u, ulimit -v)\n",
                   e.what());
    else
      std::fprintf(stderr, "walseg: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "walseg: %s\n", e.what());
    return 1;
  }
  return exit_status();
}
