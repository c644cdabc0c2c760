// The SRUP-PQ system the integration tests drive (issue 13; docs/srup-mqtt.md): a mosquitto broker
// with TLS and dynsec whose administrator is the C2, srup-c2 with its control socket, the `srup c2`
// client as the operator uses it, and devices enrolled the way docs/srup-mqtt.md 4.1 says.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "mosquitto_broker.hpp"
#include "mqtt_peer.hpp"
#include "programs.hpp"
#include "temp_dir.hpp"
#include "test_pki.hpp"
#include "wait.hpp"
#include "pqot/common/files.hpp"
#include "pqot/pki/enrol.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::test {

inline constexpr std::uint64_t kC2Id = 0xc2;
inline constexpr srup::Suite kSystemSuite = srup::Suite::ed25519_xwing;  // fast; the suite is not under test here

inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.flush()) << p;
}

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// A one-shot program run to its end.
inline CliResult run_program(const std::string& program, std::vector<std::string> args) {
  ChildProcess p(program, std::move(args), /*listen_any=*/false);
  CliResult r;
  r.exit_code = p.wait_exit(std::chrono::seconds(60)).value_or(-1);
  r.out = p.out();
  r.err = p.log();
  return r;
}

inline BrokerSetup with_c2_admin(BrokerSetup s) {
  s.admin = "c2-" + srup::id_text(kC2Id);  // the C2 is the broker's dynsec administrator
  return s;
}

inline BrokerSetup c2_admin_setup() { return with_c2_admin({}); }

// The broker, the C2 and its operator's CLI, and devices made the way docs/srup-mqtt.md 4.1 says.
class SrupSystem {
 public:
  /// `extra_c2_config`: more sections for c2.toml (not [c2], [broker], [enrolment], [commands]);
  /// `broker_setup`: the broker's (persistence, bridges, ...); its dynsec admin is always the C2.
  explicit SrupSystem(const std::string& extra_c2_config = "", BrokerSetup broker_setup = {})
      : broker_(pki_, with_c2_admin(std::move(broker_setup))) {
    const std::filesystem::path c2 = dir_.path() / "c2";
    std::filesystem::create_directories(c2);
    std::filesystem::permissions(c2, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
    srup::write_identity(c2, kC2Id, kSystemSuite, srup::random_seeds(kSystemSuite));
    broker_files(c2, "c2-" + srup::id_text(kC2Id));
    socket_ = (c2 / "control.sock").string();
    write_text(c2 / "c2.toml",
               "[c2]\nstate_dir = \"" + c2.string() + "\"\n"
               "[broker]\nhost = \"localhost\"\nport = " + std::to_string(broker_.port()) +
               "\nca = \"" + pki_.ca() + "\"\ncert = \"" + (c2 / "broker.crt").string() + "\"\nkey = \"" +
               (c2 / "broker.key").string() + "\"\nreconnect_min_ms = 100\nreconnect_max_ms = 1000\n"
               "[enrolment]\nca_cert = \"" + pki_.ca() + "\"\nca_key = \"" + pki_.file("ca.key") + "\"\n"
               "default_join = \"simple\"\n"
               "[commands]\nretry_initial_ms = 500\nretry_max_ms = 2000\n" + extra_c2_config);
    start_c2();
  }

  void start_c2() {
    c2_ = std::make_unique<ChildProcess>(bin("srup-c2"), std::vector<std::string>{"--config", (dir_.path() / "c2" / "c2.toml").string()},
                                         false);
    EXPECT_TRUE(eventually([&] { return std::filesystem::exists(socket_) || c2_->wait_exit(std::chrono::milliseconds(1)); }))
        << c2_->log();
    // Enrolment drives the broker's dynsec plugin: a command sent before the C2's first CONNACK
    // (and its SUBSCRIBE to the plugin's responses) can lose its answer and time out.
    EXPECT_TRUE(eventually([&] { return broker_connected(); }, kPatience * 3)) << c2_->out();
  }

  /// The C2 says (status) that it is connected to the broker.
  bool broker_connected() {
    const CliResult r = c2_cli({"--json", "status"});
    if (r.exit_code != 0) return false;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() && j.contains("broker") && j["broker"].value("connected", false);
  }

  /// SIGKILL: the C2 gets no chance to save or say goodbye.
  void kill_c2() { c2_->stop(SIGKILL); }
  /// Starts the C2 again on the same configuration and state directory, and waits until it
  /// reports its broker connection (a killed C2 leaves its socket file behind: its existence says
  /// nothing).
  void restart_c2() {
    c2_ = std::make_unique<ChildProcess>(bin("srup-c2"), std::vector<std::string>{"--config", (dir_.path() / "c2" / "c2.toml").string()},
                                         false);
    EXPECT_TRUE(eventually([&] { return c2_->wait_exit(std::chrono::milliseconds(1)) || broker_connected(); }, kPatience * 3))
        << c2_->log() << c2_->out();
  }

  CliResult c2_cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"c2", "--socket", socket_});
    return run_program(bin("srup"), std::move(args));
  }

  // A device's identity and broker key, enrolled through `srup c2 enrol`; its config file.
  std::filesystem::path make_device(std::uint64_t id, const std::string& join, const std::string& extra_config = "") {
    return make_device_with(id, join, {}, "", extra_config);
  }

  // make_device with `enrol_args` added to `srup c2 enrol` (e.g. {"--observer", ID}) and
  // `join_config` lines added to the device's [join] section (e.g. "observe_dir = ...\n").
  std::filesystem::path make_device_with(std::uint64_t id, const std::string& join,
                                         const std::vector<std::string>& enrol_args, const std::string& join_config,
                                         const std::string& extra_config = "") {
    const std::filesystem::path d = dir_.path() / ("dev-" + srup::id_text(id));
    std::filesystem::create_directories(d);
    std::filesystem::permissions(d, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
    srup::write_identity(d, id, kSystemSuite, srup::random_seeds(kSystemSuite));
    const auto kr = pki::make_key_and_request("dev-" + srup::id_text(id));
    common::write_new_file(d / "broker.key", std::string_view(kr.key_pem.data(), kr.key_pem.size()), 0600);
    write_text(d / "broker.csr", kr.csr_pem);
    std::vector<std::string> enrol = {"enrol", "--pub", (d / "identity.pub").string(), "--csr", (d / "broker.csr").string(),
                                      "--type", "meter", "--join", join, "--out", (d / "bundle").string()};
    for (const std::string& a : enrol_args) enrol.push_back(a);
    const CliResult r = c2_cli(std::move(enrol));
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    write_text(d / "device.toml",
               "[device]\nstate_dir = \"" + d.string() + "\"\ntype = \"meter\"\n"
               "[c2]\npublic_identity = \"" + (d / "bundle" / "c2.pub").string() + "\"\n"
               "[broker]\nhost = \"localhost\"\nport = " + std::to_string(broker_.port()) + "\nca = \"" +
               (d / "bundle" / "ca.crt").string() + "\"\ncert = \"" + (d / "bundle" / "broker.crt").string() +
               "\"\nkey = \"" + (d / "broker.key").string() + "\"\nreconnect_min_ms = 100\nreconnect_max_ms = 1000\n"
               "[join]\nmode = \"" + join + "\"\n" + join_config +
               "[[action]]\nid = 7\nbuiltin = \"log\"\n" + extra_config);
    return d / "device.toml";
  }

  std::string device_state(std::uint64_t id) {
    const CliResult r = c2_cli({"--json", "device", srup::id_text(id)});
    if (r.exit_code != 0) return "error: " + r.err;
    return nlohmann::json::parse(r.out).value("state", "");
  }

  /// A broker key and a certificate for `cn` from the broker's CA in `d` (broker.key, broker.crt):
  /// what the CA signs, whether or not the broker has `cn` registered.
  void issue_broker_identity(const std::filesystem::path& d, const std::string& cn) { broker_files(d, cn); }

  ChildProcess& c2() { return *c2_; }
  MosquittoBroker& broker() { return broker_; }
  const TestPki& pki() const { return pki_; }
  const std::filesystem::path& dir() const { return dir_.path(); }
  const std::string& control_socket() const { return socket_; }

 private:
  void broker_files(const std::filesystem::path& d, const std::string& cn) {
    const auto kr = pki::make_key_and_request(cn);
    common::write_new_file(d / "broker.key", std::string_view(kr.key_pem.data(), kr.key_pem.size()), 0600);
    const auto cert = pki::issue_client_certificate(pki::CaFiles::in_dir(pki_.dir()), kr.csr_pem, cn, 30);
    write_text(d / "broker.crt", cert.pem);
  }

  TempDir dir_{"pqot-srup-system"};
  TestPki pki_{0};
  MosquittoBroker broker_;
  std::string socket_;
  std::unique_ptr<ChildProcess> c2_;
};

}  // namespace pqot::test

namespace pqot::test {

// Another C2 on the same broker (re-homing, docs/srup-mqtt.md 4.2): its own identity, state
// directory, control socket and broker certificate, registered at the broker through the first
// C2's certificate with the rights the first C2 has (srup/# and the dynsec administration).
class SecondC2 {
 public:
  SecondC2(SrupSystem& sys, std::uint64_t id) : id_(id), dir_(sys.dir() / ("c2-" + srup::id_text(id))) {
    namespace fs = std::filesystem;
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
    srup::write_identity(dir_, id, kSystemSuite, srup::random_seeds(kSystemSuite));
    const std::string cn = "c2-" + srup::id_text(id);
    const auto kr = pki::make_key_and_request(cn);
    common::write_new_file(dir_ / "broker.key", std::string_view(kr.key_pem.data(), kr.key_pem.size()), 0600);
    write_text(dir_ / "broker.crt",
               pki::issue_client_certificate(pki::CaFiles::in_dir(sys.pki().dir()), kr.csr_pem, cn, 30).pem);
    mqtt::ClientOptions admin_options = sys.broker().client_options("c2-" + srup::id_text(kC2Id) + "-fixture", "");
    admin_options.tls.cert_file = (sys.dir() / "c2" / "broker.crt").string();
    admin_options.tls.key_file = (sys.dir() / "c2" / "broker.key").string();
    MqttPeer admin(admin_options, true);
    admin.start();
    EXPECT_TRUE(admin.wait_connects());
    std::vector<mqtt::dynsec::Acl> acls = all_srup_acls();
    for (const auto type : {mqtt::dynsec::AclType::publish_client_send, mqtt::dynsec::AclType::publish_client_receive,
                            mqtt::dynsec::AclType::subscribe_pattern}) {
      acls.push_back({type, "$CONTROL/dynamic-security/#", true, 0});
    }
    EXPECT_EQ(register_identity(admin, cn, acls), "");
    socket_ = (dir_ / "control.sock").string();
    write_text(dir_ / "c2.toml",
               "[c2]\nstate_dir = \"" + dir_.string() + "\"\n"
               "[broker]\nhost = \"localhost\"\nport = " + std::to_string(sys.broker().port()) +
               "\nca = \"" + sys.pki().ca() + "\"\ncert = \"" + (dir_ / "broker.crt").string() + "\"\nkey = \"" +
               (dir_ / "broker.key").string() + "\"\nreconnect_min_ms = 100\nreconnect_max_ms = 1000\n"
               "[enrolment]\nca_cert = \"" + sys.pki().ca() + "\"\nca_key = \"" + sys.pki().file("ca.key") + "\"\n"
               "default_join = \"simple\"\n"
               "[commands]\nretry_initial_ms = 500\nretry_max_ms = 2000\n");
    c2_ = std::make_unique<ChildProcess>(bin("srup-c2"), std::vector<std::string>{"--config", (dir_ / "c2.toml").string()},
                                         false);
    EXPECT_TRUE(eventually([&] { return std::filesystem::exists(socket_) || c2_->wait_exit(std::chrono::milliseconds(1)); }))
        << c2_->log();
  }

  CliResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"c2", "--socket", socket_});
    return run_program(bin("srup"), std::move(args));
  }

  std::string device_state(std::uint64_t device) {
    const CliResult r = cli({"--json", "device", srup::id_text(device)});
    if (r.exit_code != 0) return "error: " + r.err;
    return nlohmann::json::parse(r.out).value("state", "");
  }

  std::uint64_t id() const { return id_; }
  /// Its identity.pub: what `srup c2 join-command --c2-pub` names.
  std::filesystem::path public_identity() const { return dir_ / "identity.pub"; }
  ChildProcess& c2() { return *c2_; }

 private:
  std::uint64_t id_;
  std::filesystem::path dir_;
  std::string socket_;
  std::unique_ptr<ChildProcess> c2_;
};

}  // namespace pqot::test
