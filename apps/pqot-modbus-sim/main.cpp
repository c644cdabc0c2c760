// pqot-modbus-sim: a Modbus TCP device simulator on libmodbus (docs/modbus-sim.md). It plays a
// legacy PLC with an energy meter for the demo, the tests and the benchmarks of the SRMCP->Modbus
// gateway, and can misbehave on purpose (--fault, toggled by SIGUSR1).
#include <modbus.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <iostream>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "fault.hpp"
#include "pqot/common/host_port.hpp"
#include "log.hpp"
#include "net.hpp"
#include "server.hpp"

using namespace pqot::modbus_sim;

namespace {

constexpr const char* kFooter =
    R"(Register map (0-based addresses; float32/float64 IEEE-754, high word first):
  HR 0      oven temperature set-point, int16, 0.1 degC (initial 1800)      writable
  HR 1      conveyor speed set-point, uint16 mm/s (initial 250)             writable
  HR 2      mode: 0 stop, 1 manual, 2 auto (initial 2)                      writable
  HR 10-11  batch counter, uint32, +1 per second                            read-only
  HR 20-27  device name "PQOT-SIM-PLC", 16 bytes NUL-padded                 read-only
  HR 100-199 scratch (initial 0)                                            writable
  Writes touching HR 3..99 are answered with exception 2 (ILLEGAL DATA ADDRESS).
  IR 0-1 oven temperature float32 degC | IR 2 ramp 0..999 (60 s) | IR 3 sine int16 +-1000 (10 s)
  IR 4 pressure int16 0.01 bar | IR 100/102/104 voltage L1..L3 V | IR 106/108/110 current A
  IR 112/114/116 active power W | IR 118 total power W | IR 120 frequency Hz | IR 122-125 energy kWh
  coil 0 conveyor run | coil 1 alarm reset (write 1) | coils 2-63 scratch
  DI 0 conveyor running | DI 1 blinks at 1 Hz | DI 2 over-temperature alarm (latched)

Faults: exception (every request gets --fault-exception), drop (close without answer), slow (answer
after --fault-delay-ms; the whole device waits), wrong-tid (MBAP transaction id + 1), refuse
(listener closed, clients closed). SIGUSR1 toggles the fault on and off.

Exit codes: 0 after SIGTERM or SIGINT, 1 cannot listen, 2 bad command line.
Documentation: docs/modbus-sim.md)";

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "HOST:PORT" -> host, port (0..65535; 0: any free port).
std::pair<std::string, std::uint16_t> split_host_port(const std::string& text) {
  const auto hp = pqot::common::parse_host_port(text, /*allow_port_zero=*/true);
  if (!hp) throw UsageError("--listen: expected HOST:PORT with PORT 0..65535, got '" + text + "'");
  return {hp->host, hp->port};
}

std::uint64_t random_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

int run(int argc, char** argv) {
  CLI::App app{"pqot-modbus-sim " PQOT_VERSION_STRING
               ": a Modbus TCP device simulator on libmodbus " LIBMODBUS_VERSION_STRING
               " (a legacy PLC with an oven, a conveyor and a 3-phase energy meter)"};
  std::string listen = "127.0.0.1:1502";
  std::string port_file;
  std::optional<std::uint64_t> seed;
  int max_clients = 32;
  std::string fault_kind = "none";
  int delay_ms = 2000;
  int exception_code = MODBUS_EXCEPTION_SLAVE_OR_SERVER_FAILURE;
  std::string fault_start = "on";
  std::string log_level = "info";
  std::vector<std::string> kinds;
  for (const auto k : {FaultKind::none, FaultKind::exception, FaultKind::drop, FaultKind::slow,
                       FaultKind::wrong_tid, FaultKind::refuse}) {
    kinds.emplace_back(fault_name(k));
  }

  app.add_option("--listen", listen,
                 "IPv4 HOST:PORT to listen on; HOST may be a name, PORT 0 picks a free port")
      ->type_name("HOST:PORT")
      ->capture_default_str();
  app.add_option("--port-file", port_file,
                 "Also write the port number to this file (replaced atomically)")
      ->type_name("FILE");
  app.add_option("--seed", seed, "Seed of the measurement noise (default: random, logged)")
      ->type_name("N");
  app.add_option("--max-clients", max_clients,
                 "Clients served at once; more are accepted and closed at once")
      ->type_name("N")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--fault", fault_kind, "Fault to inject: " + fault_names())
      ->type_name("KIND")
      ->check(CLI::IsMember(kinds))
      ->capture_default_str();
  app.add_option("--fault-delay-ms", delay_ms, "slow: delay before each answer, in ms")
      ->type_name("MS")
      ->check(CLI::Range(0, 3600000))
      ->capture_default_str();
  app.add_option("--fault-exception", exception_code,
                 "exception: the Modbus exception code of every answer (1..11; 4 = SERVER "
                 "DEVICE FAILURE)")
      ->type_name("CODE")
      ->check(CLI::Range(1, MODBUS_EXCEPTION_MAX - 1))
      ->capture_default_str();
  app.add_option("--fault-start", fault_start,
                 "Whether the fault is active at start (on|off); SIGUSR1 toggles it")
      ->type_name("on|off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--log-level", log_level,
                 "Log on stderr: debug (also every injected fault), info, warn")
      ->type_name("LEVEL")
      ->check(CLI::IsMember({"debug", "info", "warn"}))
      ->capture_default_str();
  app.footer(kFooter);

  ServerOptions opt;
  std::string host;
  try {
    app.parse(argc, argv);
    std::tie(host, opt.port) = split_host_port(listen);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pqot-modbus-sim: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "pqot-modbus-sim: error: " << e.what() << " (see --help)\n";
    return 2;
  }
  set_log_level(*parse_log_level(log_level));
  opt.port_file = port_file;
  opt.max_clients = max_clients;
  opt.seed = seed ? *seed : random_seed();
  opt.fault.kind = *parse_fault_kind(fault_kind);
  opt.fault.on = fault_start == "on";
  opt.fault.delay = std::chrono::milliseconds(delay_ms);
  opt.fault.exception_code = exception_code;

  const auto ip = resolve_ipv4(host);
  if (!ip) {
    std::cerr << "pqot-modbus-sim: error: cannot resolve '" << host << "' to an IPv4 address\n";
    return 1;
  }
  opt.ip = *ip;
  Server server(std::move(opt));
  try {
    server.start();
  } catch (const ListenError& e) {
    std::cerr << "pqot-modbus-sim: error: " << e.what() << "\n";
    return 1;
  }
  server.run();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "pqot-modbus-sim: error: " << e.what() << "\n";
    return 1;
  }
}
