// The project's mosquitto configuration keeps out whoever is not registered (docs/mqtt.md, "The
// broker configuration" and "Observed behaviour"): no certificate and a foreign CA fail the TLS
// handshake; a certificate of our CA connects, but without a dynsec registration every PUBLISH is
// refused (PUBACK 0x87) and every SUBSCRIBE too (SUBACK 0x87 on MQTT 5).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>

#include "../support/mosquitto_broker.hpp"
#include "../support/mqtt_peer.hpp"

using namespace pqot;
using namespace pqot::test;

namespace {

// A raw TLS 1.3 client without a certificate: what the server's alert says. In TLS 1.3 the client
// finishes its handshake before the server has checked the client's (missing) certificate, so
// the alert arrives on the first read.
std::string broker_raw_tls_without_certificate(int port, const std::string& ca) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_3_VERSION);
  SSL_CTX_load_verify_locations(ctx.get(), ca.c_str(), nullptr);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return "tcp connect failed";
  }
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  std::string result = "no alert";
  ERR_clear_error();
  if (SSL_connect(ssl.get()) == 1) {
    char buf[16];
    if (SSL_read(ssl.get(), buf, sizeof buf) <= 0) {
      const unsigned long e = ERR_get_error();
      result = e != 0 ? ERR_reason_error_string(e) : "closed without alert";
    }
  } else {
    const unsigned long e = ERR_get_error();
    result = e != 0 ? ERR_reason_error_string(e) : "handshake failed without alert";
  }
  ERR_clear_error();
  ::close(fd);
  return result;
}

}  // namespace

// (a) require_certificate true: no certificate, no connection (TLS alert "certificate required").
TEST(MqttBroker, ClientWithoutCertificateIsRefusedWithTlsAlert) {
  TestPki pki(2);
  MosquittoBroker broker(pki);
  EXPECT_EQ(broker_raw_tls_without_certificate(broker.port(), pki.ca()), "tlsv13 alert certificate required");

  MqttPeer anonymous(broker.client_options("anonymous", ""));
  anonymous.start();
  ASSERT_TRUE(eventually([&] { return anonymous.stats().connect_failures >= 2; }, kPatience * 3));
  EXPECT_EQ(anonymous.stats().connects, 0u);
  EXPECT_TRUE(is_no_certificate_refusal(anonymous.last_failure())) << anonymous.last_failure();
  EXPECT_TRUE(broker.wait_log("peer did not return a certificate")) << broker.log();
}

// (b) A certificate of another CA fails verification at the broker ("unknown ca").
TEST(MqttBroker, CertificateOfAnotherCaIsRefused) {
  TestPki pki(2);
  TestPki other(2);
  MosquittoBroker broker(pki);
  MqttPeer stranger(broker.client_options("client2", "client2", &other));
  stranger.start();
  ASSERT_TRUE(eventually([&] { return stranger.stats().connect_failures >= 2; }, kPatience * 3));
  EXPECT_EQ(stranger.stats().connects, 0u);
  EXPECT_NE(stranger.last_failure().find("unknown ca"), std::string::npos) << stranger.last_failure();
  EXPECT_NE(broker.log().find("certificate verify failed"), std::string::npos);
}

// (c) A certificate of our CA connects whatever its CN (authentication plugins are skipped with
// use_identity_as_username), but unregistered it can neither publish nor subscribe.
TEST(MqttBroker, UnregisteredCertificateConnectsButCanNeitherPublishNorSubscribe) {
  TestPki pki(2);
  MosquittoBroker broker(pki);
  MqttPeer admin(broker.client_options("client1-admin", "client1"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects());
  ASSERT_EQ(admin.subscribe("srup/#"), 1);

  MqttPeer unregistered(broker.client_options("client2", "client2"));
  unregistered.start();
  ASSERT_TRUE(unregistered.wait_connects()) << unregistered.last_failure();

  EXPECT_EQ(unregistered.subscribe("srup/d/c2"), 0x87);
  EXPECT_EQ(unregistered.stats().refused_subscriptions, 1u);

  EXPECT_EQ(unregistered.publish_acked("srup/d/dev", "forged"), 0x87);
  EXPECT_EQ(unregistered.stats().refused_publishes, 1u);
  // Barrier: the admin's own message comes back after anything the broker delivered before it.
  ASSERT_EQ(admin.publish_acked("srup/barrier", "b1"), 0);
  ASSERT_TRUE(admin.wait_message("srup/barrier", "b1"));
  EXPECT_EQ(admin.count("srup/d/dev"), 0u);
  // The admin's messages on the device topic do not reach it either.
  ASSERT_EQ(admin.publish_acked("srup/d/c2", "command"), 0);
  ASSERT_EQ(unregistered.publish_acked("srup/d/dev", "barrier"), 0x87);
  EXPECT_EQ(unregistered.count("srup/d/c2"), 0u);
}

// (d) The benchmarks' listener without TLS (BrokerConfig::plaintext_port, `srup bench-mqtt`): the
// broker-wide settings still hold there. A dynsec user with a password gets in and publishes; a
// wrong password, no password, and the certificate-only admin's name without its certificate are
// refused; the TLS listener still refuses a client without a certificate.
TEST(MqttBroker, PlaintextListenerAdmitsOnlyAPasswordUser) {
  TestPki pki(1);
  BrokerSetup setup;
  setup.plaintext_listener = true;
  MosquittoBroker broker(pki, setup);
  ASSERT_NE(broker.plaintext_port(), 0);
  MqttPeer admin(broker.client_options("client1-admin", "client1"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects());
  auto commands = mqtt::dynsec::register_identity(
      "bench-plain", {{mqtt::dynsec::AclType::publish_client_send, "srup/#"}});
  for (auto& c : commands) {
    if (c["command"] == "createClient") c["password"] = "correct horse";
  }
  for (const auto& r : admin.admin().execute_all(commands)) ASSERT_TRUE(r.ok) << r.command << ": " << r.error;

  auto publish = [&](const std::string& user, const std::string* password) {
    std::vector<std::string> args{"-h", "127.0.0.1", "-p", std::to_string(broker.plaintext_port()), "-V", "mqttv5",
                                  "-q", "1", "-t", "srup/plain/test", "-m", "hello", "-i", "plain-" + user, "-u", user};
    if (password != nullptr) args.insert(args.end(), {"-P", *password});
    return run_process("/usr/bin/mosquitto_pub", args);
  };
  const std::string right = "correct horse", wrong = "battery staple", empty;
  const auto ok = publish("bench-plain", &right);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  for (const auto& [user, password] : std::vector<std::pair<std::string, const std::string*>>{
           {"bench-plain", &wrong}, {"bench-plain", nullptr}, {"bench-plain", &empty}, {"client1", nullptr},
           {"client1", &right}}) {
    const auto refused = publish(user, password);
    EXPECT_NE(refused.exit_code, 0) << user << " / " << (password ? *password : "(none)") << "\n" << refused.out;
    std::string err = refused.err;
    std::transform(err.begin(), err.end(), err.begin(), [](unsigned char c) { return std::tolower(c); });
    EXPECT_NE(err.find("connection error: not authorized"), std::string::npos) << refused.err;  // CONNACK 0x87
  }
  EXPECT_NE(broker_raw_tls_without_certificate(broker.port(), pki.ca()).find("certificate required"), std::string::npos);
}
