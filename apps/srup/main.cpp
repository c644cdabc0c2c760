// srup: SRUP-PQ identities and envelopes, offline, the C2's operator CLI, the telemetry monitor and
// the broker's configuration (docs/srup-tool.md). The MQTT applications that send and receive the
// envelopes are srup-c2 and srup-device.
#include <iostream>
#include <system_error>

#include "cli.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/srup/legacy.hpp"
#include "pqot/srup/refusal.hpp"

int main(int argc, char** argv) {
  using namespace pqot::srup_tool;
  CLI::App app{
      "srup: SRUP-PQ identities and envelopes (docs/srup-pq.md): make keys, seal and open "
      "messages with persistent replay state, inspect envelopes, verify original SRUP ones"};
  app.name("srup");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(PQOT_VERSION_STRING));
  add_keygen_command(app);
  add_seal_command(app);
  add_open_command(app);
  add_inspect_command(app);
  add_legacy_verify_command(app);
  add_bench_command(app);
  add_bench_mqtt_command(app);
  add_bench_telemetry_command(app);
  add_bench_payload_command(app);
  add_c2_command(app);
  add_monitor_command(app);
  add_broker_config_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "srup: error: " << e.what() << " (see --help)\n";
    return kExitUsage;
  } catch (const pqot::srup::Refused& e) {
    std::cerr << "srup: refused: " << e.what() << "\n";
    return kExitRefused;
  } catch (const pqot::srup::legacy::LegacyError& e) {
    std::cerr << "srup: refused: " << e.what() << "\n";
    return kExitRefused;
  } catch (const ExitError& e) {
    std::cerr << "srup: error: " << e.what() << "\n";
    return e.code();
  } catch (const UsageError& e) {
    std::cerr << "srup: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "srup: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return 0;
}
