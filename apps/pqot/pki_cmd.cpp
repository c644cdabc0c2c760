#include "cli_common.hpp"

namespace pqot::app {

void add_pki_commands(CLI::App& app) {
  auto* cmd = app.add_subcommand("pki", "pki tools");
  cmd->require_subcommand(1);
}

}  // namespace pqot::app
