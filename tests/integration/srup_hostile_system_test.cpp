// SRUP-PQ under attack, end to end through mosquitto (issue 13, "Refused, with the reason logged
// and counted"; docs/srup-mqtt.md sections 3 and 5, docs/srup-pq.md sections 6 and 7): strangers
// at the broker, a registered device run by hostile software, captured and forged commands, a
// downgrade to the legacy suite, and hostile clients of the C2's control socket. Each refusal is
// checked where the issue says: in the receiver's log and in its metrics counter; and each test
// ends with the legitimate parties still working.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "../support/mqtt_peer.hpp"
#include "../support/scrape.hpp"
#include "../support/srup_system.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/rsa.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/endpoint.hpp"
#include "pqot/srup/legacy.hpp"
#include "pqot/srup/state.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;

std::string hostile_metrics_config(int port) {
  return "[metrics]\nlisten = \"127.0.0.1:" + std::to_string(port) + "\"\n";
}

// The value of one sample on a daemon's metrics page (-1: no such sample).
double hostile_metric(int port, const std::string& sample_prefix) {
  const std::string page = http_get(port, "/metrics");
  return page.empty() ? -1 : sample(page, sample_prefix);
}

std::string hostile_refusals(const std::string& who, const std::string& reason) {
  return who + "_refusals_total{reason=\"" + reason + "\"}";
}

// Client options for a certificate and key of our own choosing (not the PKI's clientN files).
mqtt::ClientOptions hostile_options(SrupSystem& sys, const std::string& client_id, const fs::path& cert,
                                    const fs::path& key) {
  mqtt::ClientOptions o = sys.broker().client_options(client_id, "");
  o.tls.cert_file = cert.string();
  o.tls.key_file = key.string();
  return o;
}

std::string hostile_text(const crypto::Bytes& b) { return std::string(b.begin(), b.end()); }

crypto::Bytes hostile_token() {
  crypto::Bytes t(16);
  crypto::random_bytes(t);
  return t;
}

// One byte in the middle changed: inside the body (or its ciphertext), which the signature covers.
crypto::Bytes hostile_tampered(crypto::Bytes wire) {
  wire[wire.size() / 2] ^= 0x01;
  return wire;
}

// The test speaking as some SRUP-PQ identity: its own state file (sequence numbers) and endpoint.
struct HostilePeer {
  HostilePeer(const fs::path& state_db, srup::Identity self, srup::EndpointOptions options = {})
      : store(state_db), endpoint(std::move(self), store, std::move(options)) {}
  srup::StateStore store;
  srup::Endpoint endpoint;
};

// A fresh identity under someone else's ID: the same suite, keys nobody enrolled.
srup::Identity hostile_impostor(std::uint64_t id) {
  return srup::make_identity(id, kSystemSuite, srup::random_seeds(kSystemSuite)).self;
}

// A SRUP-PQ envelope of the legacy suite 0x7F (RSA-2048, docs/srup-pq.md section 3) from `sender`,
// properly signed with a fresh RSA key: a downgrade attempt. A signed type (mode 0): a sealed one
// cannot be made across suites.
crypto::Bytes hostile_legacy_suite_envelope(std::uint64_t sender, std::uint64_t recipient, const std::string& topic) {
  const srup::SuiteInfo info = srup::suite_info(srup::Suite::legacy_rsa2048);
  const auto sk = crypto::signature_by_name(info.signature).keygen();
  const auto kk = crypto::rsa_oaep_by_name(info.kem).keygen();
  const srup::Identity rsa{sender, srup::Suite::legacy_rsa2048, sk.secret_key, kk.secret_key, kk.public_key};
  srup::Header h;
  h.type = srup::MessageType::join_request;
  h.suite = srup::Suite::legacy_rsa2048;
  h.mode = srup::Mode::signed_clear;
  h.sender = sender;
  h.recipient = recipient;
  h.sequence = 1;
  h.timestamp_ms = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  h.lifetime_ms = 60'000;
  h.topic = srup::topic_tag(topic);
  h.token = hostile_token();
  return srup::protect(h, crypto::Bytes{0x00}, rsa);
}

// The original SRUP's version-5 envelope (docs/srup-legacy.md): an Action from `sender`. Its
// signature is any 256 bytes: a SRUP-PQ receiver refuses the envelope at step 1 (magic and
// version), before it would look at a signature.
crypto::Bytes hostile_srup_v5_action(std::uint64_t sender) {
  srup::legacy::LegacyEnvelope e = srup::legacy::make_envelope(1, sender, hostile_token(), srup::legacy::Action{7});
  e.signature = crypto::Bytes(srup::legacy::kSignatureSize, 0x5a);
  return srup::legacy::encode(e);
}

// A raw connection to a Unix socket, closed with the scope.
class HostileSocket {
 public:
  explicit HostileSocket(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~HostileSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  HostileSocket(const HostileSocket&) = delete;
  HostileSocket& operator=(const HostileSocket&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  /// Writes all of `text` (blocking).
  bool send_all(const std::string& text) {
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t n = ::send(fd_, text.data() + at, text.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<std::size_t>(n);
    }
    return true;
  }

  /// The next line (without '\n'), or what came before the peer closed or the patience ran out.
  std::string read_line() {
    const auto deadline = std::chrono::steady_clock::now() + kPatience * 3;
    while (std::chrono::steady_clock::now() < deadline) {
      if (const auto nl = pending_.find('\n'); nl != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        return line;
      }
      if (!read_some()) break;
    }
    return std::exchange(pending_, std::string());
  }

  /// Reads (and discards) until the peer closes: true if it did within the patience.
  bool closed_by_peer() {
    const auto deadline = std::chrono::steady_clock::now() + kPatience * 3;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }

 private:
  bool read_some() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) return true;
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    pending_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  int fd_;
  std::string pending_;
};

}  // namespace

// Strangers at the broker, and a registered device whose software is hostile: the broker keeps
// both off the topics that are not theirs, the C2 refuses (logs, counts) everything the hostile
// device injects on the topics it may use, and the C2 and a legitimate device carry on.
TEST(SrupHostileSystem, StrangersAndAHostileDeviceAreRefusedWhileTheC2AndItsDevicesCarryOn) {
  const int c2_metrics = mqtt::free_loopback_port();
  SrupSystem sys(hostile_metrics_config(c2_metrics));
  const int a_metrics = mqtt::free_loopback_port();
  const fs::path a_config = sys.make_device(0xa1, "simple", hostile_metrics_config(a_metrics));
  ChildProcess device_a(bin("srup-device"), {"--config", a_config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa1) == "joined"; }, kPatience * 3))
      << device_a.out() << sys.c2().out();
  const auto a_acts = [&](const std::string& arg) {
    const CliResult r = sys.c2_cli({"action", srup::id_text(0xa1), "7", "--arg", arg, "--wait", "30"});
    return r.out.find("ACTION_SUCCESS") != std::string::npos && device_a.wait_for_out("action log: " + arg);
  };
  ASSERT_TRUE(a_acts("before")) << device_a.out() << sys.c2().out();
  // Text from the wire reaches the device's log escaped: it can neither forge a log line nor
  // drive the terminal the log is read on.
  const CliResult logged =
      sys.c2_cli({"action", srup::id_text(0xa1), "7", "--arg", "\x1b[2Jx\n2026-12-02 critical forged", "--wait", "30"});
  EXPECT_NE(logged.out.find("ACTION_SUCCESS"), std::string::npos) << logged.out << logged.err;
  EXPECT_TRUE(device_a.wait_for_out("action log: \\x1b[2Jx\\x0a2026-12-02 critical forged")) << device_a.out();
  EXPECT_EQ(device_a.out().find("\x1b[2J"), std::string::npos) << device_a.out();

  // No client certificate: the TLS handshake fails (MqttBroker.* shows the broker side).
  MqttPeer anonymous(sys.broker().client_options("anonymous", ""));
  anonymous.start();
  EXPECT_TRUE(eventually([&] { return anonymous.stats().connect_failures >= 1; }, kPatience * 3));
  EXPECT_EQ(anonymous.stats().connects, 0u);
  EXPECT_TRUE(is_no_certificate_refusal(anonymous.last_failure())) << anonymous.last_failure();
  EXPECT_TRUE(sys.broker().wait_log("peer did not return a certificate")) << sys.broker().log();

  // A certificate the broker's CA signed, for an identity nobody registered: it connects and may
  // do nothing, not even on "its own" device topics.
  const fs::path stranger_dir = sys.dir() / "stranger";
  fs::create_directories(stranger_dir);
  sys.issue_broker_identity(stranger_dir, "dev-" + srup::id_text(0xee));
  MqttPeer stranger(hostile_options(sys, "dev-" + srup::id_text(0xee), stranger_dir / "broker.crt",
                                    stranger_dir / "broker.key"));
  stranger.start();
  ASSERT_TRUE(stranger.wait_connects()) << stranger.last_failure();
  EXPECT_EQ(stranger.subscribe(srup::filter_all_from_devices()), 0x87);
  EXPECT_EQ(stranger.subscribe(srup::topic_to_device(0xa1)), 0x87);
  EXPECT_EQ(stranger.subscribe(srup::topic_to_device(0xee)), 0x87);
  EXPECT_EQ(stranger.publish_acked(srup::topic_to_device(0xa1), "forged command"), 0x87);
  EXPECT_EQ(stranger.publish_acked(srup::topic_from_device(0xee), "forged join"), 0x87);

  // A registered device run by hostile software: the test is its software, with its enrolled
  // identity, its broker certificate from enrolment and a state file of its own.
  const fs::path bad_dir = sys.make_device(0xbd, "simple").parent_path();
  MqttPeer bad(hostile_options(sys, "dev-" + srup::id_text(0xbd), bad_dir / "bundle" / "broker.crt", bad_dir / "broker.key"));
  bad.start();
  ASSERT_TRUE(bad.wait_connects()) << bad.last_failure();
  ASSERT_EQ(bad.subscribe(srup::topic_to_device(0xbd)), 1);
  // Another device's topics, both ways, and everyone's: refused by the broker.
  EXPECT_EQ(bad.subscribe(srup::topic_to_device(0xa1)), 0x87);
  EXPECT_EQ(bad.subscribe(srup::filter_all_from_devices()), 0x87);
  EXPECT_EQ(bad.publish_acked(srup::topic_to_device(0xa1), "forged command"), 0x87);
  EXPECT_EQ(bad.publish_acked(srup::topic_from_device(0xa1), "forged answer"), 0x87);

  // It joins like any device (simple join), so what follows comes from a joined device.
  srup::LoadedIdentity bad_identity = srup::load_identity(bad_dir);
  const srup::PublicKeys bad_keys{bad_identity.pub.keys.signature_public, bad_identity.pub.keys.kem_public};
  const srup::PublicIdentity c2_pub = srup::load_public_identity(bad_dir / "bundle" / "c2.pub");
  const srup::PublicIdentity a_pub = srup::load_public_identity(a_config.parent_path() / "identity.pub");
  HostilePeer bad_peer(sys.dir() / "bad-state.db", bad_identity.self);
  bad_peer.endpoint.enrol(kC2Id, c2_pub.keys);
  bad_peer.endpoint.enrol(0xa1, a_pub.keys);
  const std::string bad_topic = srup::topic_from_device(0xbd);
  const auto join_request = [&](HostilePeer& p, std::uint64_t to, const std::string& topic) {
    return p.endpoint.make(to, srup::MessageType::join_request, srup::JoinRequest{bad_keys}, topic, hostile_token());
  };
  const crypto::Bytes join = join_request(bad_peer, kC2Id, bad_topic);
  ASSERT_EQ(bad.publish_acked(bad_topic, hostile_text(join)), 0);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xbd) == "joined"; })) << sys.c2().out();

  // What it injects on the topic it may use; each refused for the reason given, logged, counted.
  srup::EndpointOptions late;
  late.now_ms = [] {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count()) -
           2 * 3'600'000;  // its clock two hours behind: lifetime 60 s
  };
  HostilePeer bad_late(sys.dir() / "bad-late.db", bad_identity.self, late);
  bad_late.endpoint.enrol(kC2Id, c2_pub.keys);
  HostilePeer claims_a(sys.dir() / "claims-a.db", hostile_impostor(0xa1));
  claims_a.endpoint.enrol(kC2Id, c2_pub.keys);
  HostilePeer other_key(sys.dir() / "other-key.db", hostile_impostor(0xbd));
  other_key.endpoint.enrol(kC2Id, c2_pub.keys);
  struct Injection {
    std::string what, reason;
    crypto::Bytes wire;
  };
  const std::vector<Injection> injections = {
      {"its own join request again, byte for byte", "REPLAY", join},
      {"its own envelope, one byte changed", "BAD_SIGNATURE", hostile_tampered(join_request(bad_peer, kC2Id, bad_topic))},
      {"an envelope signed by a key the C2 did not enrol for it", "BAD_SIGNATURE", join_request(other_key, kC2Id, bad_topic)},
      {"an envelope claiming device A as its sender", "WRONG_TOPIC", join_request(claims_a, kC2Id, srup::topic_from_device(0xa1))},
      {"an envelope made for its telemetry topic", "WRONG_TOPIC", join_request(bad_peer, kC2Id, srup::topic_telemetry(0xbd))},
      {"an envelope addressed to device A", "WRONG_RECIPIENT", join_request(bad_peer, 0xa1, bad_topic)},
      {"an envelope whose lifetime has passed", "EXPIRED", join_request(bad_late, kC2Id, bad_topic)},
      {"the legacy suite 0x7F (RSA-2048)", "UNSUPPORTED_SUITE", hostile_legacy_suite_envelope(0xbd, kC2Id, bad_topic)},
      {"the original SRUP's version-5 envelope", "MALFORMED", hostile_srup_v5_action(0xbd)},
  };
  std::map<std::string, double> expected;
  for (const Injection& i : injections) {
    ASSERT_EQ(bad.publish_acked(bad_topic, hostile_text(i.wire)), 0) << i.what;  // the broker lets it through
    const double n = ++expected[i.reason];
    EXPECT_TRUE(eventually([&] { return hostile_metric(c2_metrics, hostile_refusals("srup_c2", i.reason)) >= n; }))
        << i.what << ": " << http_get(c2_metrics, "/metrics") << sys.c2().out();
    EXPECT_TRUE(sys.c2().wait_for_out("refused from " + srup::id_text(0xbd) + ": " + i.reason)) << i.what;
  }
  for (const auto& [reason, n] : expected) {
    EXPECT_EQ(hostile_metric(c2_metrics, hostile_refusals("srup_c2", reason)), n) << reason;
  }

  // Data it reports by itself: a string of 4,096 control bytes, valid and authenticated, but six
  // times longer as escaped JSON than the registry stores a value. Once, this stopped the C2 (an
  // exception out of its message handler); it is kept as its type and size, and the C2 carries on.
  const std::string control_bytes(4096, '\x01');
  const crypto::Bytes blob = bad_peer.endpoint.make(kC2Id, srup::MessageType::data,
                                                    srup::Data{"blob", srup::Value{control_bytes}}, bad_topic,
                                                    hostile_token());
  ASSERT_EQ(bad.publish_acked(bad_topic, hostile_text(blob)), 0);
  EXPECT_TRUE(eventually([&] {
    const CliResult r = sys.c2_cli({"--json", "history", srup::id_text(0xbd), "data"});
    return r.exit_code == 0 && r.out.find("truncated") != std::string::npos;
  })) << sys.c2().out();

  // Nobody else was touched: the C2 never saw the stranger's or the broker-refused publishes, kept
  // its broker connection, and device A (never reached) still acts.
  const std::string c2_log = sys.c2().out();
  EXPECT_EQ(c2_log.find("refused from " + srup::id_text(0xa1)), std::string::npos) << c2_log;
  EXPECT_EQ(c2_log.find("refused from " + srup::id_text(0xee)), std::string::npos) << c2_log;
  EXPECT_EQ(hostile_metric(c2_metrics, "srup_c2_mqtt_reconnects_total"), 0);
  EXPECT_EQ(sys.device_state(0xbd), "joined");
  ASSERT_TRUE(a_acts("after")) << device_a.out() << sys.c2().out();
  EXPECT_EQ(http_get(a_metrics, "/metrics").find("srup_device_refusals_total{"), std::string::npos)
      << http_get(a_metrics, "/metrics");
  EXPECT_EQ(device_a.out().find("refused"), std::string::npos) << device_a.out();
  EXPECT_EQ(hostile_metric(a_metrics, "srup_device_broker_connected"), 1);
}

// What reaches a device on its command topic. The broker lets only the C2 (and a bridge) publish
// there, and no device can even read another's commands (the test above), so capturing and
// re-publishing a C2's command needs broker-wide rights: here a registered bridge identity
// (docs/srup-mqtt.md 3: `srup/#` both ways) stands for a compromised bridge or broker, the
// strongest position an attacker on the MQTT side can have. Messages that only the C2's key can
// make in another form (for another topic, with an old timestamp) are sealed by the test itself
// with the C2's key from its state directory: the envelope must protect the device even from a
// holder of that key replaying it out of context.
TEST(SrupHostileSystem, CapturedForgedAndDowngradedCommandsAreRefusedByTheDevice) {
  SrupSystem sys;
  const fs::path c2_dir = sys.dir() / "c2";
  const std::string c2_user = "c2-" + srup::id_text(kC2Id);
  MqttPeer admin(hostile_options(sys, c2_user + "-test", c2_dir / "broker.crt", c2_dir / "broker.key"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects()) << admin.last_failure();
  ASSERT_EQ(register_identity(admin, "bridge-hostile", all_srup_acls()), "");
  const fs::path bridge_dir = sys.dir() / "bridge";
  fs::create_directories(bridge_dir);
  sys.issue_broker_identity(bridge_dir, "bridge-hostile");
  MqttPeer bridge(hostile_options(sys, "bridge-hostile", bridge_dir / "broker.crt", bridge_dir / "broker.key"));
  bridge.start();
  ASSERT_TRUE(bridge.wait_connects()) << bridge.last_failure();
  ASSERT_EQ(bridge.subscribe("srup/#"), 1);

  const int a_metrics = mqtt::free_loopback_port();
  const int b_metrics = mqtt::free_loopback_port();
  const fs::path a_config = sys.make_device(0xa1, "simple", hostile_metrics_config(a_metrics));
  const fs::path b_config = sys.make_device(0xb1, "simple", hostile_metrics_config(b_metrics));
  ChildProcess device_a(bin("srup-device"), {"--config", a_config.string()}, false);
  ChildProcess device_b(bin("srup-device"), {"--config", b_config.string()}, false);
  ASSERT_TRUE(eventually([&] { return sys.device_state(0xa1) == "joined" && sys.device_state(0xb1) == "joined"; },
                         kPatience * 3))
      << device_a.out() << device_b.out() << sys.c2().out();
  const auto acts = [&](std::uint64_t dev, ChildProcess& device, const std::string& arg) {
    const CliResult r = sys.c2_cli({"action", srup::id_text(dev), "7", "--arg", arg, "--wait", "30"});
    return r.out.find("ACTION_SUCCESS") != std::string::npos && device.wait_for_out("action log: " + arg);
  };
  ASSERT_TRUE(acts(0xa1, device_a, "first")) << device_a.out() << sys.c2().out();

  // Captured by the bridge: the C2's Action for A, and its Response that accepted A's join.
  const std::string a_topic = srup::topic_to_device(0xa1);
  const auto captured = [&](srup::MessageType type) {
    crypto::Bytes found;
    eventually([&] {
      for (const mqtt::Message& m : bridge.messages()) {
        if (m.topic != a_topic) continue;
        const crypto::Bytes wire(m.payload.begin(), m.payload.end());
        try {
          if (srup::parse_envelope(wire).header.type == type) found = wire;
        } catch (const srup::Refused&) {
        }
      }
      return !found.empty();
    });
    return found;
  };
  const crypto::Bytes action = captured(srup::MessageType::action);
  const crypto::Bytes join_answer = captured(srup::MessageType::response);
  ASSERT_FALSE(action.empty());
  ASSERT_FALSE(join_answer.empty());

  const srup::PublicIdentity a_pub = srup::load_public_identity(a_config.parent_path() / "identity.pub");
  srup::EndpointOptions as_c2;
  as_c2.is_c2 = true;
  HostilePeer c2_key(sys.dir() / "c2-key.db", srup::load_identity(c2_dir).self, as_c2);
  c2_key.endpoint.enrol(0xa1, a_pub.keys);
  srup::EndpointOptions late = as_c2;
  late.now_ms = [] {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count()) -
           2 * 3'600'000;
  };
  HostilePeer c2_key_late(sys.dir() / "c2-key-late.db", srup::load_identity(c2_dir).self, late);
  c2_key_late.endpoint.enrol(0xa1, a_pub.keys);
  HostilePeer impostor(sys.dir() / "impostor.db", hostile_impostor(kC2Id), as_c2);
  impostor.endpoint.enrol(0xa1, a_pub.keys);
  HostilePeer stranger(sys.dir() / "stranger.db", hostile_impostor(0xee), as_c2);
  stranger.endpoint.enrol(0xa1, a_pub.keys);
  const auto action_from = [&](HostilePeer& p, const std::string& arg, const std::string& topic) {
    return p.endpoint.make(0xa1, srup::MessageType::action, srup::Action{7, srup::Value{arg}}, topic, hostile_token());
  };

  // The captured command again: answered from A's journal, never run again (docs/srup-pq.md 7.3).
  ASSERT_EQ(bridge.publish_acked(a_topic, hostile_text(action)), 0);
  EXPECT_TRUE(eventually([&] { return hostile_metric(a_metrics, "srup_device_answers_resent_total") >= 1; }))
      << http_get(a_metrics, "/metrics") << device_a.out();

  struct Injection {
    std::string what, reason;
    crypto::Bytes wire;
  };
  const std::vector<Injection> injections = {
      {"the C2's Response to A's join, replayed", "REPLAY", join_answer},
      {"the captured command, one byte changed", "BAD_SIGNATURE", hostile_tampered(action)},
      {"a command signed by a key that is not the C2's", "BAD_SIGNATURE", action_from(impostor, "impostor", a_topic)},
      {"a command from a sender A does not know", "UNKNOWN_SENDER", action_from(stranger, "stranger", a_topic)},
      {"the C2's command made for another topic", "WRONG_TOPIC", action_from(c2_key, "retopicked", srup::topic_from_device(0xa1))},
      {"the C2's command whose lifetime has passed", "EXPIRED", action_from(c2_key_late, "expired", a_topic)},
      {"the legacy suite 0x7F under the C2's ID", "UNSUPPORTED_SUITE", hostile_legacy_suite_envelope(kC2Id, 0xa1, a_topic)},
      {"the original SRUP's version-5 Action under the C2's ID", "MALFORMED", hostile_srup_v5_action(kC2Id)},
  };
  std::map<std::string, double> expected;
  for (const Injection& i : injections) {
    ASSERT_EQ(bridge.publish_acked(a_topic, hostile_text(i.wire)), 0) << i.what;
    const double n = ++expected[i.reason];
    EXPECT_TRUE(eventually([&] { return hostile_metric(a_metrics, hostile_refusals("srup_device", i.reason)) >= n; }))
        << i.what << ": " << http_get(a_metrics, "/metrics") << device_a.out();
    EXPECT_TRUE(device_a.wait_for_out("refused: " + i.reason)) << i.what << "\n" << device_a.out();
  }
  for (const auto& [reason, n] : expected) {
    EXPECT_EQ(hostile_metric(a_metrics, hostile_refusals("srup_device", reason)), n) << reason;
  }

  // Re-addressed: A's command delivered to B.
  ASSERT_EQ(bridge.publish_acked(srup::topic_to_device(0xb1), hostile_text(action)), 0);
  EXPECT_TRUE(eventually([&] { return hostile_metric(b_metrics, hostile_refusals("srup_device", "WRONG_RECIPIENT")) == 1; }))
      << http_get(b_metrics, "/metrics") << device_b.out();
  EXPECT_TRUE(device_b.wait_for_out("refused: WRONG_RECIPIENT")) << device_b.out();

  // Both devices still obey their C2, and nothing forged or replayed ran.
  ASSERT_TRUE(acts(0xa1, device_a, "second")) << device_a.out() << sys.c2().out();
  ASSERT_TRUE(acts(0xb1, device_b, "third")) << device_b.out() << sys.c2().out();
  const std::string a_log = device_a.out();
  EXPECT_EQ(count_of(a_log, "action log: first"), 1u) << a_log;
  for (const char* never : {"impostor", "stranger", "retopicked", "expired"}) {
    EXPECT_EQ(a_log.find(std::string("action log: ") + never), std::string::npos) << never;
  }
  EXPECT_EQ(count_of(device_b.out(), "action log: "), 1u) << device_b.out();
}

// Hostile clients of the C2's control socket (docs/srup-c2.md, "Control socket"): only the owner
// may connect (the file's mode; another user cannot be tried here), garbage and oversized
// requests are refused, a slow writer and a client that never reads are closed after the idle
// time, and the connections it holds at once are bounded. Each refusal is counted and logged,
// and the operator's `srup c2 devices` works again as soon as a slot is free.
TEST(SrupHostileSystem, HostileControlClientsAreBoundedAndTheOperatorGetsBackIn) {
  const int c2_metrics = mqtt::free_loopback_port();
  SrupSystem sys(hostile_metrics_config(c2_metrics) + "[control]\nmax_clients = 3\nidle_timeout_ms = 3000\n");
  const std::string& path = sys.control_socket();
  const auto control_refusals = [&](const std::string& reason) {
    return hostile_metric(c2_metrics, "srup_c2_control_refusals_total{reason=\"" + reason + "\"}");
  };
  const auto operator_lists_devices = [&] {
    const CliResult r = sys.c2_cli({"devices"});
    return r.exit_code == 0 && r.out.find("STATE") != std::string::npos;
  };

  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // connecting needs write permission: the owner only
  ASSERT_EQ(::stat(fs::path(path).parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);

  {  // Garbage: one bad_request answer, and the connection still serves a valid request.
    HostileSocket garbage(path);
    ASSERT_TRUE(garbage.ok());
    ASSERT_TRUE(garbage.send_all(std::string("\x01\xff{{ not json \x7f") + "\n"));
    const std::string answer = garbage.read_line();
    EXPECT_NE(answer.find("\"bad_request\""), std::string::npos) << answer;
    ASSERT_TRUE(garbage.send_all("{\"cmd\":\"status\",\"what\":1}\n"));  // an unknown field
    EXPECT_NE(garbage.read_line().find("\"bad_request\""), std::string::npos);
    ASSERT_TRUE(garbage.send_all("{\"cmd\":\"status\"}\n"));
    EXPECT_NE(garbage.read_line().find("\"ok\":true"), std::string::npos);
  }
  EXPECT_TRUE(eventually([&] { return control_refusals("bad_request") == 2; }));

  {  // Oversized: a line past request_max_bytes (65,536) is answered once and the connection closed.
    HostileSocket oversized(path);
    ASSERT_TRUE(oversized.ok());
    oversized.send_all(std::string(70'000, 'a'));
    const std::string answer = oversized.read_line();
    EXPECT_NE(answer.find("longer than 65536 bytes"), std::string::npos) << answer.substr(0, 200);
    EXPECT_TRUE(oversized.closed_by_peer());
  }
  EXPECT_TRUE(eventually([&] { return control_refusals("too_long") == 1; }));
  EXPECT_TRUE(sys.c2().wait_for_out("control socket: closed a connection whose request is longer than 65536 bytes"));

  {  // A slow writer (half a request, never finished) and a client that sends requests but never
     // reads the answers: the operator still gets in meanwhile, and both are closed by the daemon.
    HostileSocket slow(path);
    ASSERT_TRUE(slow.ok());
    ASSERT_TRUE(slow.send_all("{\"cmd\":\"sta"));
    HostileSocket deaf(path);
    ASSERT_TRUE(deaf.ok());
    ASSERT_EQ(::fcntl(deaf.fd(), F_SETFL, O_NONBLOCK), 0);
    const std::string request = "{\"cmd\":\"status\"}\n";
    for (int i = 0; i < 20'000; ++i) {  // until the daemon stops reading: its answers fill the socket
      if (::send(deaf.fd(), request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) continue;
      pollfd p{deaf.fd(), POLLOUT, 0};
      if (::poll(&p, 1, 1000) <= 0) break;
    }
    EXPECT_TRUE(operator_lists_devices());
    EXPECT_TRUE(eventually([&] { return control_refusals("idle") == 2; }, kPatience * 3))
        << http_get(c2_metrics, "/metrics") << sys.c2().out();
    EXPECT_TRUE(slow.closed_by_peer());
    EXPECT_TRUE(deaf.closed_by_peer());
  }

  {  // Idle connections up to the bound, and one more.
    std::vector<std::unique_ptr<HostileSocket>> idle;
    for (int i = 0; i < 3; ++i) {
      idle.push_back(std::make_unique<HostileSocket>(path));
      ASSERT_TRUE(idle.back()->ok());
    }
    ASSERT_TRUE(eventually([&] { return hostile_metric(c2_metrics, "srup_c2_control_clients") == 3; }));
    HostileSocket one_more(path);
    ASSERT_TRUE(one_more.ok());  // the kernel accepts; the daemon answers busy and closes
    EXPECT_NE(one_more.read_line().find("\"busy\""), std::string::npos);
    EXPECT_TRUE(one_more.closed_by_peer());
    EXPECT_GE(control_refusals("busy"), 1);
    EXPECT_TRUE(sys.c2().wait_for_out("control socket: refused a connection: 3 clients connected (max_clients)"));
    // The idle ones are closed after idle_timeout_ms; then the operator is served again.
    EXPECT_TRUE(eventually(operator_lists_devices, kPatience * 3)) << sys.c2().out();
    EXPECT_TRUE(eventually([&] { return control_refusals("idle") == 5; }));
    for (auto& s : idle) EXPECT_TRUE(s->closed_by_peer());
  }
  EXPECT_TRUE(sys.c2().wait_for_out("control socket: closed a connection idle for 3000 ms"));
  EXPECT_EQ(sys.c2().stop(), 0) << sys.c2().out();
}

}  // namespace pqot::test
