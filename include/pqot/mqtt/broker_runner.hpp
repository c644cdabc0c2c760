// A mosquitto process of a program's own (docs/mqtt.md, "Running a broker"): the project's broker
// configuration (broker_config.hpp) written for a free port of 127.0.0.1, mosquitto started from
// it, awaited until it listens, and stopped when the object goes. What the MQTT integration tests
// and `srup bench-mqtt` run their brokers with; never a system broker.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <string>

#include "pqot/mqtt/broker_config.hpp"

namespace pqot::mqtt {

/// Debian's mosquitto 2.0 (package mosquitto).
inline constexpr const char* kMosquittoPath = "/usr/sbin/mosquitto";

/// True if a TCP connection to 127.0.0.1:`port` succeeds (something listens there).
bool loopback_port_open(std::uint16_t port);

/// A port of 127.0.0.1 the kernel just handed out and took back: free unless someone takes it
/// meanwhile. Throws std::runtime_error if no socket can be bound.
std::uint16_t free_loopback_port();

struct BrokerRunOptions {
  std::string mosquitto = kMosquittoPath;
  /// Where the configuration is written (replaced at every start).
  std::filesystem::path config_file;
  /// The broker's stdout and stderr (appended at every start).
  std::filesystem::path output_file;
  /// How long a start may take until the port accepts connections.
  std::chrono::milliseconds start_timeout{20'000};
  /// Free ports tried, one after another, while the broker's log says "Address already in use"
  /// (a port taken between free_loopback_port and mosquitto's bind). At least 1.
  int port_attempts = 5;
};

/// One mosquitto process. The constructor writes `config` with `port` set to a free port (the
/// caller writes the dynsec file, certificates and directories it names first) and starts it; the
/// destructor stops it (SIGTERM, SIGKILL after 5 s).
class BrokerRunner {
 public:
  /// Throws std::runtime_error if mosquitto is not executable (naming the Debian package), cannot
  /// be spawned, or does not listen within the timeout (with its output and log file quoted).
  BrokerRunner(BrokerConfig config, BrokerRunOptions options);
  ~BrokerRunner();
  BrokerRunner(const BrokerRunner&) = delete;
  BrokerRunner& operator=(const BrokerRunner&) = delete;

  std::uint16_t port() const noexcept { return config_.port; }
  const BrokerConfig& config() const noexcept { return config_; }
  bool running() const noexcept { return pid_ > 0; }
  /// What the broker said: its stdout/stderr, then its log file (config.log_file, if any).
  std::string output() const;

  /// Sends `sig` and waits until the process is gone (SIGKILL after `grace`). Its exit code, or
  /// 128 + the signal that ended it; -1 if it was not running.
  int stop(int sig = SIGTERM, std::chrono::milliseconds grace = std::chrono::seconds(5)) noexcept;
  /// Kills the broker (SIGKILL) and starts it again on the same port and configuration (same
  /// dynsec file, same persistence directory), retrying while the port is still held, up to
  /// `patience`. Throws std::runtime_error with the broker's output if it does not come back.
  void restart(std::chrono::milliseconds patience = std::chrono::seconds(30));

 private:
  // Spawns mosquitto and waits until the port listens (true) or it exits or times out (false,
  // the process gone).
  bool launch();

  BrokerConfig config_;
  BrokerRunOptions options_;
  pid_t pid_ = -1;
};

}  // namespace pqot::mqtt
