// The MQTT client refuses bad options and unusable TLS files before it connects
// (include/pqot/mqtt/client.hpp, docs/mqtt.md "The client").
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "../support/temp_dir.hpp"
#include "../support/test_pki.hpp"
#include "pqot/mqtt/client.hpp"

using namespace pqot::mqtt;

namespace {

ClientOptions client_options_sample(const pqot::test::TestPki& pki) {
  ClientOptions o;
  o.client_id = "dev-0123456789abcdef";
  o.tls = {pki.ca(), pki.file("client1.crt"), pki.file("client1.key")};
  return o;
}

std::string client_options_error(const ClientOptions& o, bool start) {
  try {
    Client c(o);
    if (start) c.start();
  } catch (const ClientError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MqttClientOptions, BadOptionsAreRefusedByName) {
  pqot::test::TestPki pki(2);
  const auto refused = [&](auto change, const std::string& needle) {
    auto o = client_options_sample(pki);
    change(o);
    const std::string e = client_options_error(o, false);
    EXPECT_NE(e.find(needle), std::string::npos) << "'" << e << "' lacks '" << needle << "'";
  };
  refused([](ClientOptions& o) { o.client_id = ""; }, "client_id");
  refused([](ClientOptions& o) { o.client_id = "a/b"; }, "client_id");
  refused([](ClientOptions& o) { o.client_id = std::string(129, 'a'); }, "client_id");
  refused([](ClientOptions& o) { o.port = 0; }, "port");
  refused([](ClientOptions& o) { o.tls.ca_file = ""; }, "ca_file");
  refused([](ClientOptions& o) { o.tls.key_file = ""; }, "go together");
  refused([](ClientOptions& o) { o.keepalive = std::chrono::seconds(1); }, "keepalive");
  refused([](ClientOptions& o) { o.reconnect_min = std::chrono::seconds(5); o.reconnect_max = std::chrono::seconds(1); }, "reconnect");
  refused([](ClientOptions& o) { o.max_inflight = 0; }, "max_inflight");
  refused([](ClientOptions& o) { o.max_queued = 0; }, "max_queued");
  refused([](ClientOptions& o) { o.max_payload = 0; }, "max_payload");
  refused([](ClientOptions& o) { o.max_subscriptions = 0; }, "max_subscriptions");
  EXPECT_EQ(client_options_error(client_options_sample(pki), false), "");
}

TEST(MqttClientOptions, UnusableTlsFilesFailStartBeforeConnecting) {
  pqot::test::TestPki pki(2);
  pqot::test::TempDir dir("pqot-mqtt-tls");
  const std::string garbage = (dir.path() / "garbage.pem").string();
  std::ofstream(garbage) << "not a certificate\n";
  const auto failure = [&](auto change) {
    auto o = client_options_sample(pki);
    change(o);
    return client_options_error(o, true);
  };
  EXPECT_NE(failure([](ClientOptions& o) { o.tls.ca_file = "/nonexistent/ca.crt"; }).find("'/nonexistent/ca.crt' is not a readable file"), std::string::npos);
  EXPECT_NE(failure([&](ClientOptions& o) { o.tls.ca_file = garbage; }).find("CA file '" + garbage + "' is unusable"), std::string::npos);
  EXPECT_NE(failure([&](ClientOptions& o) { o.tls.cert_file = garbage; }).find("certificate file '" + garbage + "' is unusable"), std::string::npos);
  EXPECT_NE(failure([&](ClientOptions& o) { o.tls.key_file = garbage; }).find("key file '" + garbage + "' is unusable"), std::string::npos);
  EXPECT_NE(failure([&](ClientOptions& o) { o.tls.key_file = pki.file("client2.key"); }).find("mismatch"), std::string::npos);
}

TEST(MqttClientOptions, SubscribeRefusesBadFiltersAndTooMany) {
  pqot::test::TestPki pki(1);
  auto o = client_options_sample(pki);
  o.max_subscriptions = 2;
  Client c(o);
  EXPECT_THROW(c.subscribe("srup/#/x"), ClientError);
  EXPECT_THROW(c.subscribe(""), ClientError);
  EXPECT_THROW(c.subscribe("srup/a", 2), ClientError);
  c.subscribe("srup/a");
  c.subscribe("srup/b");
  c.subscribe("srup/a");  // again: no new entry
  EXPECT_THROW(c.subscribe("srup/c"), ClientError);
  EXPECT_FALSE(c.subscription_result("srup/a").has_value());
  EXPECT_EQ(c.publish("srup/a", std::string_view("x")).error, PublishError::not_connected);  // not started
}
