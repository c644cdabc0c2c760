// srup-c2: the SRUP-PQ command-and-control daemon (docs/srup-c2.md, docs/srup-mqtt.md).
//
//   srup-c2 --config FILE [--check-config] [--log-level LEVEL]
//
// Exit codes: 0 stopped cleanly (SIGTERM/SIGINT) or a valid configuration; 2 a bad command line or
// configuration; 1 a failure at start (identity, state files, control socket, metrics port).
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "config.hpp"
#include "daemon.hpp"

int main(int argc, char** argv) {
  using namespace pqot::srup_c2;
  CLI::App app{"srup-c2: SRUP-PQ command and control over MQTT (docs/srup-c2.md)"};
  app.name("srup-c2");
  std::string config_file, log_level;
  bool check_only = false;
  app.add_option("--config", config_file, "Configuration file (TOML, docs/srup-c2.md)")->required();
  app.add_flag("--check-config", check_only, "Validate the configuration and exit (0 valid, 2 not)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error (overrides [c2] log_level)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  app.set_version_flag("--version", std::string(PQOT_VERSION_STRING));
  app.footer("Operate it with `srup c2 ...` (docs/srup-tool.md). SIGTERM or SIGINT stop it cleanly: the "
             "broker keeps its session, the registry keeps the outbox.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "srup-c2: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  C2Config config;
  try {
    config = load_c2_config(config_file);
  } catch (const std::exception& e) {
    std::cerr << "srup-c2: error: " << e.what() << "\n";
    return 2;
  }
  if (check_only) {
    std::cout << config_file << ": OK: state in " << config.c2.state_dir.string() << ", broker "
              << config.broker.host << ":" << config.broker.port << ", control socket "
              << config.control.socket.string() << "\n";
    return 0;
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(log_level.empty() ? to_string(config.c2.log_level) : log_level));
  try {
    Daemon daemon(std::move(config));
    daemon.run();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
