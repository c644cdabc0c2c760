// The client against a broker that dies and comes back (docs/mqtt.md, "The client"): reconnection
// with backoff, subscriptions restored when the broker lost the session, the session kept when it
// did not, QoS 1 messages kept for an offline subscriber and for an offline publisher, and the
// bounds of publish().
#include <gtest/gtest.h>

#include <string>

#include "../support/mosquitto_broker.hpp"
#include "../support/mqtt_peer.hpp"
#include "../support/refused_port.hpp"

using namespace pqot;
using namespace pqot::test;

namespace {

using MqttEventKind = mqtt::ConnectionEvent::Kind;

bool client_saw(const MqttPeer& peer, MqttEventKind kind, bool session_present) {
  for (const auto& e : peer.events()) {
    if (e.kind == kind && (kind != MqttEventKind::connected || e.session_present == session_present)) return true;
  }
  return false;
}

}  // namespace

// (g) Persistence off, SIGKILL: the broker forgets every session. The client reconnects (with
// backoff, failing while the broker is down), gets session_present false, subscribes again, and
// messages flow again.
TEST(MqttClient, ReconnectsAfterBrokerKilledAndRestoresSubscriptionsWhenSessionLost) {
  TestPki pki(2);
  BrokerSetup setup;
  setup.persistence = false;
  MosquittoBroker broker(pki, setup);
  MqttPeer admin(broker.client_options("client1-admin", "client1"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects());
  ASSERT_EQ(register_identity(admin, "client2", device_acls("dev2")), "");
  ASSERT_EQ(admin.subscribe("srup/#"), 1);
  MqttPeer device(broker.client_options("client2", "client2"));
  device.start();
  ASSERT_TRUE(device.wait_connects());
  ASSERT_EQ(device.subscribe("srup/dev2/c2"), 1);
  ASSERT_EQ(admin.publish_acked("srup/dev2/c2", "before"), 0);
  ASSERT_TRUE(device.wait_message("srup/dev2/c2", "before"));

  broker.kill(SIGKILL);
  ASSERT_TRUE(eventually([&] { return device.stats().disconnects == 1 && !device.client().connected(); }));
  // Attempts fail while the broker is down (backoff between them).
  ASSERT_TRUE(eventually([&] { return device.stats().connect_failures >= 1; }, kPatience * 3));
  const auto resubscribes_before = device.stats().resubscribes;
  broker.restart();
  ASSERT_TRUE(device.wait_connects(2));
  ASSERT_TRUE(admin.wait_connects(2));
  EXPECT_EQ(device.stats().sessions_new, 2u);
  EXPECT_EQ(device.stats().sessions_present, 0u);
  EXPECT_TRUE(client_saw(device, MqttEventKind::disconnected, false));
  ASSERT_EQ(device.wait_suback("srup/dev2/c2"), 1);
  EXPECT_GT(device.stats().resubscribes, resubscribes_before);
  // The admin's subscriptions came back the same way; messages flow again.
  ASSERT_EQ(admin.wait_suback("srup/#"), 1);
  ASSERT_EQ(admin.publish_acked("srup/dev2/c2", "after"), 0);
  EXPECT_TRUE(device.wait_message("srup/dev2/c2", "after"));
  ASSERT_EQ(device.publish_acked("srup/dev2/dev", "up-again"), 0);
  EXPECT_TRUE(admin.wait_message("srup/dev2/dev", "up-again"));
}

// (g) Persistence on and a clean shutdown: the session survives (session_present true), nothing
// is subscribed again, and a QoS 1 message published while the publisher was offline is sent
// after it reconnects.
TEST(MqttClient, SessionPresentAfterCleanRestartWithPersistenceAndOfflinePublishIsSent) {
  TestPki pki(2);
  BrokerSetup setup;
  setup.persistence = true;  // autosave 0: saved at the clean shutdown
  MosquittoBroker broker(pki, setup);
  MqttPeer admin(broker.client_options("client1-admin", "client1"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects());
  ASSERT_EQ(register_identity(admin, "client2", device_acls("dev2")), "");
  ASSERT_EQ(admin.subscribe("srup/#"), 1);
  MqttPeer device(broker.client_options("client2", "client2"));
  device.start();
  ASSERT_TRUE(device.wait_connects());
  ASSERT_EQ(device.subscribe("srup/dev2/c2"), 1);
  const auto resubscribes = device.stats().resubscribes;

  ASSERT_EQ(broker.stop(), 0);
  ASSERT_TRUE(eventually([&] { return !device.client().connected() && !admin.client().connected(); }));
  const auto offline = device.client().publish("srup/dev2/dev", std::string_view("sent-while-offline"));
  ASSERT_TRUE(offline) << mqtt::to_string(offline.error);
  EXPECT_EQ(device.stats().pending, 1u);
  broker.restart();
  ASSERT_TRUE(device.wait_connects(2));
  EXPECT_EQ(device.stats().sessions_present, 1u);
  EXPECT_TRUE(client_saw(device, MqttEventKind::connected, true));
  EXPECT_EQ(device.stats().resubscribes, resubscribes);  // the broker still holds it
  EXPECT_EQ(device.wait_puback(offline.mid), 0);
  EXPECT_TRUE(admin.wait_message("srup/dev2/dev", "sent-while-offline"));
  ASSERT_EQ(admin.publish_acked("srup/dev2/c2", "after-restart"), 0);
  EXPECT_TRUE(device.wait_message("srup/dev2/c2", "after-restart"));
}

// (h) QoS 1 messages published while the subscriber is offline arrive when it comes back: its
// persistent session held the subscription and queued them.
TEST(MqttClient, QueuedQos1MessagesArriveAfterSubscriberReconnects) {
  TestPki pki(2);
  MosquittoBroker broker(pki);
  MqttPeer admin(broker.client_options("client1-admin", "client1"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects());
  ASSERT_EQ(register_identity(admin, "client2", device_acls("dev2")), "");
  {
    MqttPeer device(broker.client_options("client2", "client2"));
    device.start();
    ASSERT_TRUE(device.wait_connects());
    ASSERT_EQ(device.subscribe("srup/dev2/c2"), 1);
  }  // stop(): DISCONNECT, the session stays on the broker
  for (int i = 0; i < 3; ++i) ASSERT_EQ(admin.publish_acked("srup/dev2/c2", "queued-" + std::to_string(i)), 0);

  MqttPeer device(broker.client_options("client2", "client2"));
  device.start();
  ASSERT_TRUE(device.wait_connects());
  EXPECT_EQ(device.stats().sessions_present, 1u);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(device.wait_message("srup/dev2/c2", "queued-" + std::to_string(i)));
}

// publish()'s errors and the bound on messages kept while offline; stop() during a long backoff
// wait returns (it does not sit out the hour).
TEST(MqttClient, PublishBoundsAndStopDuringBackoff) {
  TestPki pki(1);
  const test::RefusedPort refusing;
  auto o = mqtt::ClientOptions{};
  o.host = "127.0.0.1";
  o.port = refusing.port();
  o.client_id = "client1";
  o.tls = {pki.ca(), pki.file("client1.crt"), pki.file("client1.key")};
  o.max_queued = 2;
  o.max_payload = 16;
  o.reconnect_min = std::chrono::hours(1);
  o.reconnect_max = std::chrono::hours(1);
  MqttPeer peer(o);
  EXPECT_EQ(peer.client().publish("srup/a/dev", std::string_view("x")).error, mqtt::PublishError::not_connected);
  peer.start();
  ASSERT_TRUE(eventually([&] { return peer.stats().connect_failures >= 1; }));
  EXPECT_TRUE(peer.client().publish("srup/a/dev", std::string_view("1")));
  EXPECT_TRUE(peer.client().publish("srup/a/dev", std::string_view("2")));
  EXPECT_EQ(peer.client().publish("srup/a/dev", std::string_view("3")).error, mqtt::PublishError::queue_full);
  EXPECT_EQ(peer.client().publish("srup/a/dev", std::string_view("q0"), 0).error, mqtt::PublishError::not_connected);
  EXPECT_EQ(peer.client().publish("srup/a/dev", std::string(17, 'x')).error, mqtt::PublishError::payload_too_large);
  EXPECT_EQ(peer.client().publish("srup/+/dev", std::string_view("x")).error, mqtt::PublishError::invalid_topic);
  EXPECT_EQ(peer.client().publish("srup/a/dev", std::string_view("x"), 2).error, mqtt::PublishError::invalid_qos);
  EXPECT_EQ(peer.stats().published, 2u);
  EXPECT_EQ(peer.stats().pending, 2u);
  EXPECT_EQ(peer.stats().rejected_publishes, 6u);
  peer.client().stop();  // in the one-hour backoff wait: must return
  EXPECT_FALSE(peer.client().connected());
}

// Handlers may publish, also while stop() is ending the connection (the last "disconnected"
// event arrives then): stop() must still return.
TEST(MqttClient, HandlersMayPublishWhileTheClientStops) {
  TestPki pki(1);
  MosquittoBroker broker(pki);
  mqtt::Client client(broker.client_options("client1-admin", "client1"));
  std::atomic<int> events{0};
  std::atomic<int> refused_while_stopping{0};
  client.on_connection([&](const mqtt::ConnectionEvent& e) {
    ++events;
    const auto r = client.publish("srup/x/c2", std::string_view("from-handler"));
    if (e.kind == mqtt::ConnectionEvent::Kind::disconnected && r.error == mqtt::PublishError::not_connected) {
      ++refused_while_stopping;
    }
  });
  client.start();
  ASSERT_TRUE(eventually([&] { return client.connected() && events >= 1; }));
  client.stop();
  EXPECT_EQ(events, 2);
  EXPECT_EQ(refused_while_stopping, 1);
}
