#include "cli_common.hpp"

namespace pqot::app {

void add_kem_commands(CLI::App& app) {
  auto* cmd = app.add_subcommand("kem", "kem tools");
  cmd->require_subcommand(1);
}

}  // namespace pqot::app
