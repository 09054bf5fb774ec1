// How a `walseg` subcommand plugs into the tool: each cmd_*.cpp defines a static
// RegisterCommand that adds its CLI11 subcommand; main() builds the app from the list.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace walseg::tool {

struct Command {
  std::string name;
  std::function<void(CLI::App& app)> setup;  ///< adds the subcommand and its callback
};

std::vector<Command>& commands();

struct RegisterCommand {
  RegisterCommand(std::string name, std::function<void(CLI::App&)> setup) {
    commands().push_back(Command{std::move(name), std::move(setup)});
  }
};

/// Exit status a subcommand callback asks for (set by the callback, read by main).
int& exit_status();

}  // namespace walseg::tool
