// Two brokers bridged over TLS 1.3 by the bridge section of broker_config.hpp (docs/mqtt.md,
// "The bridge"): srup/# flows both ways. The bridge logs in to the remote broker with a client
// certificate of our CA (CN client3), registered there like any other identity.
#include <gtest/gtest.h>

#include <string>

#include "../support/mosquitto_broker.hpp"
#include "../support/mqtt_peer.hpp"

using namespace pqot;
using namespace pqot::test;

namespace {

// Publishes `payload`-N on `topic` from `from` until `to` has received one of them: the bridge
// connects and subscribes at its own pace, and what is published before is not carried.
bool bridge_carries(MqttPeer& from, MqttPeer& to, const std::string& topic, const std::string& payload) {
  int n = 0;
  return eventually([&] {
    for (int i = 0; i < n; ++i) {
      if (to.count(topic, payload + "-" + std::to_string(i)) > 0) return true;
    }
    from.publish_acked(topic, payload + "-" + std::to_string(n++));
    return false;
  }, kPatience * 6);
}

}  // namespace

TEST(MqttBridge, SrupTopicsCrossTwoBrokersBothWays) {
  TestPki pki(3);
  MosquittoBroker remote(pki);
  MqttPeer remote_admin(remote.client_options("client1-admin", "client1"), true);
  remote_admin.start();
  ASSERT_TRUE(remote_admin.wait_connects());
  ASSERT_EQ(register_identity(remote_admin, "client3", all_srup_acls()), "");
  ASSERT_EQ(remote_admin.subscribe("srup/#"), 1);

  mqtt::BridgeConfig bridge;
  bridge.name = "b1";
  bridge.remote_host = "127.0.0.1";
  bridge.remote_port = static_cast<std::uint16_t>(remote.port());
  bridge.ca_file = pki.ca();
  bridge.cert_file = pki.file("client3.crt");
  bridge.key_file = pki.file("client3.key");
  BrokerSetup setup;
  setup.bridges.push_back(bridge);
  MosquittoBroker local(pki, setup);
  MqttPeer local_admin(local.client_options("client1-admin", "client1"), true);
  local_admin.start();
  ASSERT_TRUE(local_admin.wait_connects());
  ASSERT_EQ(local_admin.subscribe("srup/#"), 1);

  EXPECT_TRUE(bridge_carries(local_admin, remote_admin, "srup/dev9/dev", "to-remote"))
      << local.log() << "\n----\n" << remote.log();
  EXPECT_TRUE(bridge_carries(remote_admin, local_admin, "srup/dev9/c2", "to-local"))
      << local.log() << "\n----\n" << remote.log();
  EXPECT_NE(remote.log().find("bridge-b1"), std::string::npos);
}
