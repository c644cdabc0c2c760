#include "bench_broker.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "pqot/common/files.hpp"
#include "pqot/mqtt/broker_config.hpp"
#include "pqot/mqtt/client.hpp"
#include "pqot/mqtt/dynsec.hpp"
#include "pqot/pki/enrol.hpp"
#include "pqot/pki/test_pki.hpp"

namespace pqot::srup_tool {

namespace fs = std::filesystem;

BenchBroker::BenchBroker(const std::string& mosquitto_path, const std::string& client_cn,
                         const std::string& link_address, bool plaintext_listener)
    : client_cn_(client_cn) {
  std::string pattern = (fs::temp_directory_path() / "srup-bench-mqtt-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("bench-mqtt: cannot create a temporary directory: " + std::string(std::strerror(errno)));
  }
  dir_ = pattern;
  try {
    pki::PkiOptions po;
    po.dir = dir_;
    po.clients = 0;
    po.days = 2;
    po.ca_days = 2;
    if (!link_address.empty()) po.server_names.push_back(link_address);
    pki::create_test_pki(po);
    const auto request = pki::make_key_and_request(client_cn);
    common::write_new_file(dir_ / "client.key", std::string_view(request.key_pem.data(), request.key_pem.size()), 0600);
    const auto cert = pki::issue_client_certificate(pki::CaFiles::in_dir(dir_), request.csr_pem, client_cn, 1);
    common::write_new_file(dir_ / "client.crt", cert.pem, 0644);
    fs::create_directories(dir_ / "work");
    fs::create_directories(dir_ / "persistence");

    mqtt::BrokerConfig c;
    c.ca_file = (dir_ / "ca.crt").string();
    c.cert_file = (dir_ / "server.crt").string();
    c.key_file = (dir_ / "server.key").string();
    c.persistence_dir = (dir_ / "persistence").string() + "/";
    c.dynsec_file = (dir_ / "dynsec.json").string();
    c.log_file = (dir_ / "mosquitto.log").string();
    c.log_types = {"error", "warning"};
    if (!link_address.empty()) c.listen_host = "0.0.0.0";
    // A port the kernel just handed out on 127.0.0.1 (the TLS one is the runner's choice).
    if (plaintext_listener) plaintext_port_ = c.plaintext_port = mqtt::free_loopback_port();
    mqtt::write_initial_dynsec(c.dynsec_file, client_cn);
    mqtt::BrokerRunOptions o;
    o.mosquitto = mosquitto_path;
    o.config_file = dir_ / "mosquitto.conf";
    o.output_file = dir_ / "mosquitto.stderr";
    o.start_timeout = std::chrono::seconds(10);
    broker_ = std::make_unique<mqtt::BrokerRunner>(std::move(c), std::move(o));
  } catch (...) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

void BenchBroker::add_plain_user(const std::string& username, const std::string& password) const {
  mqtt::ClientOptions o;
  o.port = port();
  o.client_id = client_cn_ + "-admin";
  o.tls = {ca_file(), client_cert(), client_key()};
  o.clean_session = true;
  mqtt::Client admin_client(o);
  mqtt::DynsecAdmin admin(admin_client);
  // Destroyed before `admin`, also when a command fails: the client's network thread, whose
  // message handler uses the admin, is joined first.
  struct StopClientFirst {
    mqtt::Client& client;
    ~StopClientFirst() { client.stop(); }
  } stop_client_first{admin_client};
  admin_client.on_message([&admin](const mqtt::Message& m) { admin.handle(m); });
  admin_client.start();
  std::vector<nlohmann::json> commands;
  for (auto& c : mqtt::dynsec::register_identity(
           username, {{mqtt::dynsec::AclType::publish_client_send, "srup/#"},
                      {mqtt::dynsec::AclType::publish_client_receive, "srup/#"},
                      {mqtt::dynsec::AclType::subscribe_pattern, "srup/#"}})) {
    if (c["command"] == "createClient") c["password"] = password;
    commands.push_back(std::move(c));
  }
  for (const auto& r : admin.execute_all(commands)) {
    if (!r.ok) throw std::runtime_error("bench-mqtt: dynsec " + r.command + " for the plain user: " + r.error);
  }
}

BenchBroker::~BenchBroker() {
  broker_.reset();  // stopped before its directory goes
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

}  // namespace pqot::srup_tool
