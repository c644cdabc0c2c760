// A mosquitto broker of our own for the MQTT tests (docs/mqtt.md): the project's configuration
// (pqot::mqtt::render_broker_config) in a private directory, the test PKI's server certificate,
// a free port on 127.0.0.1, the dynsec plugin with `admin` (a client CN of the PKI) as its admin.
// Never a system broker. A missing /usr/sbin/mosquitto fails the test (no skip).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "pqot/mqtt/broker_config.hpp"
#include "pqot/mqtt/client.hpp"
#include "temp_dir.hpp"
#include "test_pki.hpp"
#include "wait.hpp"

namespace pqot::test {

inline const std::string kMosquitto = "/usr/sbin/mosquitto";

/// What to vary per test.
struct BrokerSetup {
  bool persistence = false;
  unsigned autosave_interval_s = 0;    ///< with persistence: 0 saves at shutdown only
  std::string admin = "client1";       ///< CN of the dynsec admin in the initial dynsec.json
  std::vector<mqtt::BridgeConfig> bridges;
  std::vector<std::string> log_types{"all"};
};

/// A TCP connection to 127.0.0.1:port succeeds (the listener is up).
inline bool broker_port_open(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

/// A port the kernel just gave out and took back: free unless someone takes it meanwhile (the
/// broker start retries with another then).
inline int broker_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot find a free port");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

class MosquittoBroker {
 public:
  explicit MosquittoBroker(const TestPki& pki, BrokerSetup setup = {}) : pki_(pki), setup_(std::move(setup)) {
    if (::access(kMosquitto.c_str(), X_OK) != 0) {
      throw std::runtime_error(kMosquitto + " not found: the MQTT tests need Debian's mosquitto 2.0 "
                               "(apt-get install mosquitto; scripts/install-deps.sh)");
    }
    std::filesystem::create_directories(persist_dir());
    mqtt::write_initial_dynsec(dynsec_file(), setup_.admin);
    for (int attempt = 0; attempt < 5; ++attempt) {
      port_ = broker_free_port();
      write_config();
      if (launch()) return;
      if (log().find("Address already in use") == std::string::npos) break;
    }
    throw std::runtime_error("mosquitto did not start:\n" + log() + process_->log());
  }
  MosquittoBroker(const MosquittoBroker&) = delete;
  MosquittoBroker& operator=(const MosquittoBroker&) = delete;
  ~MosquittoBroker() { stop(); }

  int port() const { return port_; }
  std::filesystem::path dir() const { return tmp_.path(); }
  std::string log_path() const { return (tmp_.path() / "mosquitto.log").string(); }
  std::string log() const { return slurp(log_path()); }
  std::string config_path() const { return (tmp_.path() / "mosquitto.conf").string(); }
  std::string dynsec_file() const { return (tmp_.path() / "dynsec.json").string(); }
  std::string persist_dir() const { return (tmp_.path() / "persist").string(); }
  const TestPki& pki() const { return pki_; }

  /// Sends `sig` (SIGKILL by default) and waits until the process is gone.
  void kill(int sig = SIGKILL) {
    if (process_) process_->stop(sig);
  }
  /// SIGTERM (mosquitto saves its persistence file) and wait; the exit code.
  int stop() {
    if (!process_) return -1;
    const int rc = process_->stop(SIGTERM);
    return rc;
  }
  /// Starts again on the same port, configuration, dynsec.json and persistence directory.
  void restart() {
    kill(SIGKILL);
    if (!eventually([&] { return launch(); }, std::chrono::seconds(30))) {
      throw std::runtime_error("mosquitto did not restart:\n" + log());
    }
  }

  /// Client options for `who` ("client1", ..., or "" for no certificate) of `pki` (ours by default).
  mqtt::ClientOptions client_options(const std::string& client_id, const std::string& who,
                                     const TestPki* pki = nullptr) const {
    const TestPki& p = pki != nullptr ? *pki : pki_;
    mqtt::ClientOptions o;
    o.host = "localhost";
    o.port = static_cast<std::uint16_t>(port_);
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
  void write_config() {
    mqtt::BrokerConfig c;
    c.port = static_cast<std::uint16_t>(port_);
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
    mqtt::write_broker_config(c, config_path(), true);
  }

  // Starts mosquitto and waits until it listens, or until it has exited (false).
  bool launch() {
    process_ = std::make_unique<ChildProcess>(kMosquitto, std::vector<std::string>{"-c", config_path()}, false);
    bool exited = false;
    const bool up = eventually([&] {
      if (process_->wait_exit(std::chrono::milliseconds(0))) {
        exited = true;
        return true;
      }
      return broker_port_open(port_);
    }, std::chrono::seconds(20));
    return up && !exited;
  }

  const TestPki& pki_;
  BrokerSetup setup_;
  TempDir tmp_{"pqot-mosquitto"};
  int port_ = 0;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace pqot::test
