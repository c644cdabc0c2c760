#include "cli_common.hpp"

namespace pqot::app {

void add_bench_commands(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "bench tools");
  cmd->require_subcommand(1);
}

}  // namespace pqot::app
