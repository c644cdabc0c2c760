// The mosquitto configuration and initial dynsec.json the project writes
// (include/pqot/mqtt/broker_config.hpp, docs/mqtt.md "The broker configuration").
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "../support/temp_dir.hpp"
#include "pqot/mqtt/broker_config.hpp"

using namespace pqot::mqtt;

namespace {

BrokerConfig broker_config_sample() {
  BrokerConfig c;
  c.port = 18883;
  c.ca_file = "/pki/ca.crt";
  c.cert_file = "/pki/server.crt";
  c.key_file = "/pki/server.key";
  c.persistence_dir = "/var/lib/pqot/mosquitto";
  c.dynsec_file = "/etc/pqot/dynsec.json";
  c.log_file = "/var/log/pqot/mosquitto.log";
  c.run_as_user = "pqot";
  return c;
}

std::string broker_config_read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool broker_config_has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace

TEST(MqttBrokerConfig, RendersEverySecuritySetting) {
  const std::string t = render_broker_config(broker_config_sample());
  for (const char* line : {"per_listener_settings false", "user pqot", "persistence true",
                           "persistence_location /var/lib/pqot/mosquitto/", "autosave_interval 60",
                           "log_dest file /var/log/pqot/mosquitto.log",
                           "plugin /usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so",
                           "plugin_opt_config_file /etc/pqot/dynsec.json", "allow_anonymous false",
                           "listener 18883 127.0.0.1", "cafile /pki/ca.crt", "certfile /pki/server.crt",
                           "keyfile /pki/server.key", "tls_version tlsv1.3", "require_certificate true",
                           "use_identity_as_username true", "max_queued_messages 1000",
                           "max_inflight_messages 20", "max_packet_size 1048576", "max_connections 1000",
                           "set_tcp_nodelay true"}) {
    EXPECT_TRUE(broker_config_has_line(t, line)) << line << "\n" << t;
  }
  EXPECT_EQ(t.find("connection "), std::string::npos);
}

TEST(MqttBrokerConfig, PersistenceOffAndNoUser) {
  auto c = broker_config_sample();
  c.persistence = false;
  c.persistence_dir.clear();
  c.run_as_user.clear();
  const std::string t = render_broker_config(c);
  EXPECT_TRUE(broker_config_has_line(t, "persistence false"));
  EXPECT_EQ(t.find("persistence_location"), std::string::npos);
  EXPECT_EQ(t.find("\nuser "), std::string::npos);
}

TEST(MqttBrokerConfig, RendersBridge) {
  auto c = broker_config_sample();
  BridgeConfig b;
  b.name = "site2";
  b.remote_host = "broker2.example";
  b.remote_port = 8884;
  b.ca_file = "/pki/ca.crt";
  b.cert_file = "/pki/bridge.crt";
  b.key_file = "/pki/bridge.key";
  c.bridges.push_back(b);
  const std::string t = render_broker_config(c);
  for (const char* line : {"connection site2", "address broker2.example:8884", "remote_clientid bridge-site2",
                           "bridge_cafile /pki/ca.crt", "bridge_certfile /pki/bridge.crt",
                           "bridge_keyfile /pki/bridge.key", "bridge_tls_version tlsv1.3",
                           "bridge_protocol_version mqttv311", "cleansession false", "topic srup/# both 1",
                           "try_private true", "restart_timeout 1 30"}) {
    EXPECT_TRUE(broker_config_has_line(t, line)) << line << "\n" << t;
  }
}

TEST(MqttBrokerConfig, RefusesValuesMosquittoWouldMisread) {
  const auto refuses = [](auto change) {
    auto c = broker_config_sample();
    change(c);
    EXPECT_THROW(render_broker_config(c), std::invalid_argument);
  };
  refuses([](BrokerConfig& c) { c.ca_file = "/pki/my ca.crt"; });
  refuses([](BrokerConfig& c) { c.cert_file = "/pki/x\nallow_anonymous true"; });
  refuses([](BrokerConfig& c) { c.key_file = "relative.key"; });
  refuses([](BrokerConfig& c) { c.dynsec_file = ""; });
  refuses([](BrokerConfig& c) { c.log_file = "/a#b"; });
  refuses([](BrokerConfig& c) { c.persistence_dir = ""; });
  refuses([](BrokerConfig& c) { c.port = 0; });
  refuses([](BrokerConfig& c) { c.max_queued_messages = 0; });
  refuses([](BrokerConfig& c) { c.autosave_interval_s = 86401; });
  refuses([](BrokerConfig& c) { c.bridges.push_back(BridgeConfig{}); });
  refuses([](BrokerConfig& c) {
    BridgeConfig b{"b", "h", 1, "", "/ca", "/crt", "/key"};
    b.protocol_version = "mqttv31";
    c.bridges.push_back(b);
  });
}

// The benchmarks' plain listener: absent unless asked for, and when asked for, a listener of its
// own after every TLS line (so that no TLS option is read as its own), with the connection bound.
TEST(MqttBrokerConfig, PlaintextListenerOnlyWhenAskedAndAfterTheTlsOne) {
  BrokerConfig c = broker_config_sample();
  EXPECT_EQ(render_broker_config(c).find("listener 18884"), std::string::npos);
  c.plaintext_port = 18884;
  const std::string t = render_broker_config(c);
  const auto tls = t.find("\nlistener 18883 127.0.0.1\n");
  const auto plain = t.find("\nlistener 18884 127.0.0.1\n");
  ASSERT_NE(tls, std::string::npos) << t;
  ASSERT_NE(plain, std::string::npos) << t;
  EXPECT_LT(t.find("\nuse_identity_as_username true\n"), plain) << t;
  for (const char* tls_option : {"cafile", "certfile", "keyfile", "tls_version", "require_certificate"}) {
    EXPECT_EQ(t.find(std::string("\n") + tls_option, plain), std::string::npos) << tls_option << "\n" << t;
  }
  EXPECT_NE(t.find("\nmax_connections 1000\n", plain), std::string::npos) << t;
  EXPECT_TRUE(broker_config_has_line(t, "allow_anonymous false"));
  c.plaintext_port = c.port;
  EXPECT_THROW(render_broker_config(c), std::invalid_argument);
}

TEST(MqttBrokerConfig, InitialDynsecDeniesByDefaultAndMakesTheAdmin) {
  const auto doc = nlohmann::json::parse(render_initial_dynsec("c2-00000000000000aa"));
  EXPECT_EQ(doc["defaultACLAccess"], nlohmann::json::parse(
      R"({"publishClientSend":false,"publishClientReceive":false,"subscribe":false,"unsubscribe":true})"));
  ASSERT_EQ(doc["clients"].size(), 1u);
  EXPECT_EQ(doc["clients"][0]["username"], "c2-00000000000000aa");
  EXPECT_FALSE(doc["clients"][0].contains("password"));
  EXPECT_EQ(doc["clients"][0]["roles"][0]["rolename"], "c2-00000000000000aa");
  ASSERT_EQ(doc["roles"].size(), 1u);
  const auto& acls = doc["roles"][0]["acls"];
  ASSERT_EQ(acls.size(), 6u);
  for (const char* topic : {"srup/#", "$CONTROL/dynamic-security/#"}) {
    for (const char* type : {"publishClientSend", "publishClientReceive", "subscribePattern"}) {
      bool found = false;
      for (const auto& a : acls) found = found || (a["topic"] == topic && a["acltype"] == type && a["allow"] == true);
      EXPECT_TRUE(found) << type << " " << topic;
    }
  }
  EXPECT_THROW(render_initial_dynsec("bad name"), std::invalid_argument);
}

TEST(MqttBrokerConfig, WritesAtomicallyAndRefusesToOverwrite) {
  pqot::test::TempDir dir("pqot-mqtt-config");
  const std::string path = (dir.path() / "mosquitto.conf").string();
  write_broker_config(broker_config_sample(), path);
  const std::string first = broker_config_read(path);
  EXPECT_TRUE(broker_config_has_line(first, "require_certificate true"));
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THROW(write_config_file(path, "changed\n", false), std::system_error);
  EXPECT_EQ(broker_config_read(path), first);
  write_config_file(path, "changed\n", true);
  EXPECT_EQ(broker_config_read(path), "changed\n");
  const std::string dynsec = (dir.path() / "dynsec.json").string();
  write_initial_dynsec(dynsec, "client1");
  EXPECT_THROW(write_initial_dynsec(dynsec, "client1"), std::system_error);
  // No temporary files are left behind.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 2u);
}
