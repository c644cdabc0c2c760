// srup-device: the SRUP-PQ device agent (docs/srup-device.md, docs/srup-mqtt.md).
//
//   srup-device --config FILE [--check-config] [--log-level LEVEL]
//   srup-device --config FILE --resign | --deregister [--wait SECONDS]
//
// Exit codes: 0 stopped cleanly (SIGTERM/SIGINT), a valid configuration, or (--resign,
// --deregister) the C2 confirmed; 2 a bad command line or configuration, or a device that has not
// joined (nothing to leave); 1 a failure at start (identity, the C2's identity, state, update
// directory; the state in use by a running agent), or the C2 refused or did not answer in time.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "agent.hpp"
#include "config.hpp"

int main(int argc, char** argv) {
  using namespace pqot::srup_device;
  CLI::App app{"srup-device: SRUP-PQ device agent over MQTT (docs/srup-device.md)"};
  app.name("srup-device");
  std::string config_file, log_level;
  bool check_only = false, resign = false, deregister = false;
  unsigned wait_s = 60;
  app.add_option("--config", config_file, "Configuration file (TOML, docs/srup-device.md)")->required();
  app.add_flag("--check-config", check_only, "Validate the configuration and exit (0 valid, 2 not)");
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error (overrides [device] log_level)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  auto* resign_flag = app.add_flag("--resign", resign,
                                   "Once: ask the C2 to let this device resign (Resign Request), then exit; "
                                   "stop the running agent first");
  app.add_flag("--deregister", deregister, "Once: ask the C2 to deregister this device (Deregister Request), then exit")
      ->excludes(resign_flag);
  app.add_option("--wait", wait_s, "With --resign/--deregister: seconds to wait for the C2's answer (default 60)")
      ->check(CLI::Range(1, 600));
  app.set_version_flag("--version", std::string(PQOT_VERSION_STRING));
  app.footer("SIGTERM or SIGINT stop it cleanly; commands it was running are answered INTERRUPTED on their retry.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "srup-device: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  DeviceConfig config;
  try {
    config = load_device_config(config_file);
  } catch (const std::exception& e) {
    std::cerr << "srup-device: error: " << e.what() << "\n";
    return 2;
  }
  if (check_only) {
    std::cout << config_file << ": OK: state in " << config.device.state_dir << ", broker " << config.broker.host
              << ":" << config.broker.port << ", " << config.actions.size() << " actions\n";
    return 0;
  }
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(log_level.empty() ? config.device.log_level : log_level));
  try {
    Agent agent(std::move(config));
    if (resign || deregister) {
      return agent.leave(resign ? pqot::srup::MessageType::resign_request : pqot::srup::MessageType::deregister_request,
                         std::chrono::seconds(wait_s));
    }
    agent.run();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
