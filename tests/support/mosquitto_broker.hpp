// A mosquitto broker of our own for the MQTT tests (docs/mqtt.md): the project's configuration
// (pqot::mqtt::render_broker_config) in a private directory, the test PKI's server certificate,
// a free port on 127.0.0.1, the dynsec plugin with `admin` (a client CN of the PKI) as its admin.
// The process is pqot::mqtt::BrokerRunner's (as `srup bench-mqtt`'s is). Never a system broker.
// A missing /usr/sbin/mosquitto fails the test (no skip).
#pragma once

#include <csignal>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "pqot/mqtt/broker_config.hpp"
#include "pqot/mqtt/broker_runner.hpp"
#include "pqot/mqtt/client.hpp"
#include "temp_dir.hpp"
#include "test_pki.hpp"
#include "wait.hpp"

namespace pqot::test {

inline const std::string kMosquitto = mqtt::kMosquittoPath;

/// What to vary per test.
struct BrokerSetup {
  bool persistence = false;
  unsigned autosave_interval_s = 0;    ///< with persistence: 0 saves at shutdown only
  std::string admin = "client1";       ///< CN of the dynsec admin in the initial dynsec.json
  std::vector<mqtt::BridgeConfig> bridges;
  std::vector<std::string> log_types{"all"};
  bool plaintext_listener = false;     ///< BrokerConfig::plaintext_port on a free port
};

class MosquittoBroker {
 public:
  explicit MosquittoBroker(const TestPki& pki, BrokerSetup setup = {})
      : pki_(pki),
        setup_(std::move(setup)),
        plaintext_port_(setup_.plaintext_listener ? mqtt::free_loopback_port() : 0) {
    std::filesystem::create_directories(persist_dir());
    mqtt::write_initial_dynsec(dynsec_file(), setup_.admin);
    mqtt::BrokerRunOptions o;
    o.mosquitto = kMosquitto;
    o.config_file = config_path();
    o.output_file = tmp_.path() / "mosquitto.out";
    runner_ = std::make_unique<mqtt::BrokerRunner>(config(), std::move(o));
  }
  MosquittoBroker(const MosquittoBroker&) = delete;
  MosquittoBroker& operator=(const MosquittoBroker&) = delete;
  ~MosquittoBroker() { stop(); }

  int port() const { return runner_->port(); }
  /// The listener without TLS (BrokerSetup::plaintext_listener), else 0.
  int plaintext_port() const { return plaintext_port_; }
  std::filesystem::path dir() const { return tmp_.path(); }
  std::string log_path() const { return (tmp_.path() / "mosquitto.log").string(); }
  std::string log() const { return slurp(log_path()); }
  /// Waits until the broker's log holds `needle`.
  bool wait_log(const std::string& needle) const {
    return eventually([&] { return log().find(needle) != std::string::npos; }, kPatience * 3);
  }
  std::string config_path() const { return (tmp_.path() / "mosquitto.conf").string(); }
  std::string dynsec_file() const { return (tmp_.path() / "dynsec.json").string(); }
  std::string persist_dir() const { return (tmp_.path() / "persist").string(); }
  const TestPki& pki() const { return pki_; }

  /// Sends `sig` (SIGKILL by default) and waits until the process is gone.
  void kill(int sig = SIGKILL) { runner_->stop(sig, kPatience); }
  /// SIGTERM (mosquitto saves its persistence file) and wait; the exit code.
  int stop() { return runner_->stop(SIGTERM, kPatience); }
  /// Starts again on the same port, configuration, dynsec.json and persistence directory.
  void restart() { runner_->restart(std::chrono::seconds(30)); }

  /// Client options for `who` ("client1", ..., or "" for no certificate) of `pki` (ours by default).
  mqtt::ClientOptions client_options(const std::string& client_id, const std::string& who,
                                     const TestPki* pki = nullptr) const {
    const TestPki& p = pki != nullptr ? *pki : pki_;
    mqtt::ClientOptions o;
    o.host = "localhost";
    o.port = runner_->port();
    o.client_id = client_id;
    o.tls.ca_file = pki_.ca();  // the broker's CA, whoever signed the client
    if (!who.empty()) {
      o.tls.cert_file = p.file(who + ".crt");
      o.tls.key_file = p.file(who + ".key");
    }
    o.reconnect_min = std::chrono::milliseconds(100);
    o.reconnect_max = std::chrono::milliseconds(1000);
    o.keepalive = std::chrono::seconds(10);
    return o;
  }

 private:
  // The project's configuration for this broker (the runner sets the port).
  mqtt::BrokerConfig config() const {
    mqtt::BrokerConfig c;
    c.ca_file = pki_.ca();
    c.cert_file = pki_.file("server.crt");
    c.key_file = pki_.file("server.key");
    c.persistence = setup_.persistence;
    c.persistence_dir = persist_dir();
    c.autosave_interval_s = setup_.autosave_interval_s;
    c.dynsec_file = dynsec_file();
    c.log_file = log_path();
    c.log_types = setup_.log_types;
    c.bridges = setup_.bridges;
    c.plaintext_port = plaintext_port_;
    return c;
  }

  const TestPki& pki_;
  BrokerSetup setup_;
  std::uint16_t plaintext_port_;
  TempDir tmp_{"pqot-mosquitto"};
  std::unique_ptr<mqtt::BrokerRunner> runner_;
};

}  // namespace pqot::test
