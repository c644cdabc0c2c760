// The broker `srup bench-mqtt` measures through: mosquitto 2.0 started from the project's own
// configuration (pqot::mqtt::render_broker_config: TLS 1.3, client certificates, dynsec) in a
// private temporary directory with a fresh PKI, on a free port of 127.0.0.1, and stopped (SIGTERM,
// then SIGKILL) when the object goes. Never a system broker. The process itself is
// pqot::mqtt::BrokerRunner's (the MQTT tests run theirs with it too); this adds the PKI and the
// temporary directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "pqot/mqtt/broker_runner.hpp"

namespace pqot::srup_tool {

class BenchBroker {
 public:
  /// Creates the directory, the PKI (a CA, the broker's certificate, one client certificate whose
  /// CN is `client_cn`, the dynsec administrator: allowed srup/# both ways) and starts
  /// `mosquitto_path`. With a `link_address` (an IPv4 literal: the broker's address on an
  /// emulated link, bench/srup.mjs) the broker listens on every address of its namespace, not
  /// only 127.0.0.1, and its certificate names that address too. Throws std::runtime_error naming
  /// what failed (the broker's log included when it does not come up within 10 s).
  /// With `plaintext_listener`, the broker also listens without TLS (BrokerConfig::plaintext_port,
  /// benchmarks only) for the users add_plain_user() makes.
  BenchBroker(const std::string& mosquitto_path, const std::string& client_cn,
              const std::string& link_address = {}, bool plaintext_listener = false);
  ~BenchBroker();
  BenchBroker(const BenchBroker&) = delete;
  BenchBroker& operator=(const BenchBroker&) = delete;

  std::uint16_t port() const noexcept { return broker_->port(); }
  /// The listener without TLS; 0 unless the constructor was asked for it.
  std::uint16_t plaintext_port() const noexcept { return plaintext_port_; }
  /// A dynsec user that logs in with `password` (on the plaintext listener), allowed srup/# both
  /// ways, made through the $CONTROL API with the client certificate (the dynsec admin's).
  /// Throws std::runtime_error with the plugin's answer when a command fails.
  void add_plain_user(const std::string& username, const std::string& password) const;
  std::string ca_file() const { return (dir_ / "ca.crt").string(); }
  std::string client_cert() const { return (dir_ / "client.crt").string(); }
  std::string client_key() const { return (dir_ / "client.key").string(); }
  /// A directory for the bench's own files (state databases), removed with the broker's.
  std::filesystem::path work_dir() const { return dir_ / "work"; }

 private:
  std::filesystem::path dir_;
  std::string client_cn_;
  std::uint16_t plaintext_port_ = 0;
  std::unique_ptr<mqtt::BrokerRunner> broker_;
};

}  // namespace pqot::srup_tool
