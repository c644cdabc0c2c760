// Registration and deregistration through the dynamic-security plugin, driven over MQTT by
// DynsecAdmin (docs/mqtt.md, "Registration"): a registered device reaches its own topics only;
// deleteClient kicks it and keeps it out after it reconnects, including deliveries on its old
// persistent subscription; a bystander is never disturbed.
#include <gtest/gtest.h>

#include <string>

#include "../support/mosquitto_broker.hpp"
#include "../support/mqtt_peer.hpp"

using namespace pqot;
using namespace pqot::test;

// (d), (e), (f) in one broker's life: the bystander must stay connected through all of it.
TEST(MqttRegistration, RegisteredDeviceOwnTopicsOnlyDeleteClientKeepsItOutBystanderUndisturbed) {
  TestPki pki(3);
  MosquittoBroker broker(pki);
  MqttPeer admin(broker.client_options("client1-admin", "client1"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects());
  ASSERT_EQ(admin.subscribe("srup/#"), 1);

  // The bystander: device dev3 (CN client3), registered and connected throughout.
  ASSERT_EQ(register_identity(admin, "client3", device_acls("dev3")), "");
  MqttPeer bystander(broker.client_options("client3", "client3"));
  bystander.start();
  ASSERT_TRUE(bystander.wait_connects());
  ASSERT_EQ(bystander.subscribe("srup/dev3/c2"), 1);

  // (d) client2 registered as device dev2.
  ASSERT_EQ(register_identity(admin, "client2", device_acls("dev2")), "");
  const auto got = admin.admin().execute(mqtt::dynsec::get_client("client2"));
  ASSERT_TRUE(got.ok) << got.error;
  EXPECT_EQ(got.data["client"]["username"], "client2");
  const auto again = admin.admin().execute(mqtt::dynsec::create_client("client2"));
  EXPECT_FALSE(again.ok);
  EXPECT_EQ(again.error, "Client already exists");

  MqttPeer device(broker.client_options("client2", "client2"));
  device.start();
  ASSERT_TRUE(device.wait_connects());
  EXPECT_EQ(device.subscribe("srup/dev2/c2"), 1);
  EXPECT_EQ(device.subscribe("srup/dev3/c2"), 0x87);  // another device's topic
  EXPECT_EQ(device.publish_acked("srup/dev2/dev", "join"), 0);
  EXPECT_TRUE(admin.wait_message("srup/dev2/dev", "join"));
  EXPECT_EQ(device.publish_acked("srup/dev3/dev", "impersonation"), 0x87);
  ASSERT_EQ(admin.publish_acked("srup/dev2/c2", "command-1"), 0);
  EXPECT_TRUE(device.wait_message("srup/dev2/c2", "command-1"));
  ASSERT_EQ(admin.publish_acked("srup/dev3/c2", "for-dev3"), 0);
  EXPECT_TRUE(bystander.wait_message("srup/dev3/c2", "for-dev3"));
  ASSERT_EQ(admin.publish_acked("srup/barrier", "b1"), 0);
  ASSERT_TRUE(admin.wait_message("srup/barrier", "b1"));
  EXPECT_EQ(admin.count("srup/dev3/dev"), 0u);
  EXPECT_EQ(device.count("srup/dev3/c2"), 0u);

  // (e) Deregistration: deleteClient + deleteRole. The broker disconnects the device ...
  const auto before = device.stats();
  for (const auto& r : admin.admin().execute_all(mqtt::dynsec::deregister_identity("client2"))) {
    ASSERT_TRUE(r.ok) << r.command << ": " << r.error;
  }
  ASSERT_TRUE(eventually([&] { return device.stats().disconnects > before.disconnects; }, kPatience * 3));
  // ... its certificate still passes TLS, so it reconnects (session present) ...
  ASSERT_TRUE(device.wait_connects(before.connects + 1));
  EXPECT_GE(device.stats().sessions_present, 1u);
  // ... but its old subscription no longer delivers (ACL checked at delivery) ...
  ASSERT_EQ(admin.publish_acked("srup/dev2/c2", "command-2"), 0);
  EXPECT_EQ(device.publish_acked("srup/dev2/dev", "after-delete"), 0x87);  // refused, and a barrier
  EXPECT_EQ(device.count("srup/dev2/c2", "command-2"), 0u);
  ASSERT_EQ(admin.publish_acked("srup/barrier", "b2"), 0);
  ASSERT_TRUE(admin.wait_message("srup/barrier", "b2"));
  EXPECT_EQ(admin.count("srup/dev2/dev", "after-delete"), 0u);
  // ... and subscribing is refused.
  EXPECT_EQ(device.subscribe("srup/dev2/tm"), 0x87);
  EXPECT_EQ(device.subscribe("srup/dev2/c2"), 0x87);
  const auto gone = admin.admin().execute(mqtt::dynsec::get_client("client2"));
  EXPECT_FALSE(gone.ok);
  EXPECT_EQ(gone.error, "Client not found");

  // (f) The bystander was never disconnected and still works.
  ASSERT_EQ(admin.publish_acked("srup/dev3/c2", "still-there"), 0);
  EXPECT_TRUE(bystander.wait_message("srup/dev3/c2", "still-there"));
  EXPECT_EQ(bystander.stats().disconnects, 0u);
  EXPECT_EQ(bystander.stats().connects, 1u);
  EXPECT_EQ(admin.stats().disconnects, 0u);
}

// A command to a broker that never answers (no dynsec rights: the admin's CN is not the admin)
// ends with the timeout; outstanding commands are bounded.
TEST(MqttRegistration, DynsecCommandWithoutAnswerTimesOutAndOutstandingIsBounded) {
  TestPki pki(2);
  MosquittoBroker broker(pki);
  mqtt::Client client(broker.client_options("client2", "client2"));
  mqtt::DynsecAdmin* admin_ptr = nullptr;
  client.on_message([&](const mqtt::Message& m) {
    if (admin_ptr != nullptr) admin_ptr->handle(m);
  });
  mqtt::DynsecAdmin admin(client, {std::chrono::milliseconds(500), 1});
  admin_ptr = &admin;
  client.start();
  ASSERT_TRUE(eventually([&] { return client.connected(); }));
  std::atomic<int> second_done{0};
  std::string second_error;
  std::mutex mu;
  std::atomic<bool> first_done{false};
  std::string first_error;
  admin.submit(mqtt::dynsec::list_clients(), [&](const mqtt::DynsecResult& r) {
    std::lock_guard g(mu);
    first_error = r.error;
    first_done = true;
  });
  admin.submit(mqtt::dynsec::list_clients(), [&](const mqtt::DynsecResult& r) {
    std::lock_guard g(mu);
    second_error = r.error;
    ++second_done;
  });
  EXPECT_EQ(second_done, 1);  // refused at once: the bound is 1
  EXPECT_EQ(second_error, "too many outstanding dynsec commands (1)");
  ASSERT_TRUE(eventually([&] { return first_done.load(); }));
  std::lock_guard g(mu);
  EXPECT_EQ(first_error, "timeout: no response within 500 ms");
  EXPECT_EQ(admin.outstanding(), 0u);
  client.stop();
}

// Why deregistration is deleteClient: after disableClient the broker kicks the client, but its
// certificate still passes TLS and dynsec's ACL check ignores the disabled flag, so it comes back
// and publishes again (the design note's observation, docs/mqtt.md).
TEST(MqttRegistration, DisableClientIsNotEnoughTheClientComesBackAndPublishes) {
  TestPki pki(2);
  MosquittoBroker broker(pki);
  MqttPeer admin(broker.client_options("client1-admin", "client1"), true);
  admin.start();
  ASSERT_TRUE(admin.wait_connects());
  ASSERT_EQ(admin.subscribe("srup/#"), 1);
  ASSERT_EQ(register_identity(admin, "client2", device_acls("dev2")), "");
  MqttPeer device(broker.client_options("client2", "client2"));
  device.start();
  ASSERT_TRUE(device.wait_connects());
  const auto disabled = admin.admin().execute({{"command", "disableClient"}, {"username", "client2"}});
  ASSERT_TRUE(disabled.ok) << disabled.error;
  ASSERT_TRUE(eventually([&] { return device.stats().disconnects >= 1; }, kPatience * 3));
  ASSERT_TRUE(device.wait_connects(2));
  EXPECT_EQ(device.publish_acked("srup/dev2/dev", "still-in"), 0);
  EXPECT_TRUE(admin.wait_message("srup/dev2/dev", "still-in"));
}
