// Dynsec commands as the plugin expects them, and the parser of its responses
// (include/pqot/mqtt/dynsec_commands.hpp, docs/mqtt.md "Registration").
#include <gtest/gtest.h>

#include <string>

#include "pqot/mqtt/dynsec_commands.hpp"

using namespace pqot::mqtt::dynsec;
using nlohmann::json;

TEST(MqttDynsecCommands, BuildersSpellCommandsAsThePluginExpects) {
  EXPECT_EQ(create_client("dev-0123456789abcdef"), json::parse(R"({"command":"createClient","username":"dev-0123456789abcdef"})"));
  EXPECT_EQ(delete_client("c"), json::parse(R"({"command":"deleteClient","username":"c"})"));
  EXPECT_EQ(get_client("c"), json::parse(R"({"command":"getClient","username":"c"})"));
  EXPECT_EQ(list_clients(), json::parse(R"({"command":"listClients","verbose":false})"));
  EXPECT_EQ(create_role("r"), json::parse(R"({"command":"createRole","rolename":"r"})"));
  EXPECT_EQ(delete_role("r"), json::parse(R"({"command":"deleteRole","rolename":"r"})"));
  EXPECT_EQ(add_role_acl("r", {AclType::subscribe_pattern, "srup/+/dev", true, 3}),
            json::parse(R"({"command":"addRoleACL","rolename":"r","acltype":"subscribePattern","topic":"srup/+/dev","allow":true,"priority":3})"));
  EXPECT_EQ(remove_role_acl("r", AclType::publish_client_receive, "srup/a/c2"),
            json::parse(R"({"command":"removeRoleACL","rolename":"r","acltype":"publishClientReceive","topic":"srup/a/c2"})"));
  EXPECT_EQ(add_client_role("c", "r"), json::parse(R"({"command":"addClientRole","username":"c","rolename":"r","priority":0})"));
  EXPECT_EQ(encode_commands({list_clients()}), R"({"commands":[{"command":"listClients","verbose":false}]})");
}

TEST(MqttDynsecCommands, RegisterAndDeregisterIdentity) {
  const auto reg = register_identity("dev-01", {{AclType::publish_client_send, "srup/01/dev", true, 0}});
  ASSERT_EQ(reg.size(), 4u);
  EXPECT_EQ(reg[0]["command"], "createRole");
  EXPECT_EQ(reg[1]["command"], "addRoleACL");
  EXPECT_EQ(reg[2]["command"], "createClient");
  EXPECT_EQ(reg[3], json::parse(R"({"command":"addClientRole","username":"dev-01","rolename":"dev-01","priority":0})"));
  const auto dereg = deregister_identity("dev-01");
  ASSERT_EQ(dereg.size(), 2u);
  EXPECT_EQ(dereg[0]["command"], "deleteClient");  // not disableClient (docs/mqtt.md)
  EXPECT_EQ(dereg[1]["command"], "deleteRole");
}

TEST(MqttDynsecCommands, BadNamesAndTopicsAreRefused) {
  EXPECT_THROW(create_client(""), DynsecError);
  EXPECT_THROW(create_client(std::string(kMaxNameLength + 1, 'a')), DynsecError);
  EXPECT_NO_THROW(create_client(std::string(kMaxNameLength, 'a')));
  for (const char* bad : {"a b", "a/b", "a+", "#", "a\nb", "caf\xc3\xa9"}) EXPECT_THROW(create_client(bad), DynsecError) << bad;
  for (const char* bad : {"", "srup/#/x", "srup/a+", "srup/#a", "a\x01"}) {
    EXPECT_THROW(add_role_acl("r", {AclType::subscribe_pattern, bad, true, 0}), DynsecError) << bad;
  }
  EXPECT_THROW(add_role_acl("r", {AclType::subscribe_pattern, std::string(kMaxTopicLength + 1, 'a'), true, 0}), DynsecError);
  EXPECT_THROW(add_role_acl("r", {AclType::subscribe_pattern, "a", true, 2000000}), DynsecError);
  EXPECT_NO_THROW(add_role_acl("r", {AclType::subscribe_pattern, "srup/+/tk/#", true, 0}));
}

// The exact text mosquitto 2.0.11 answered in the experiment of docs/mqtt.md.
TEST(MqttDynsecCommands, ParsesObservedResponses) {
  const auto r = parse_responses(
      R"({"responses":[{"command":"createClient","correlationData":"1"},)"
      R"({"command":"createClient","error":"Client already exists","correlationData":"2"},)"
      R"({"command":"getClient","data":{"client":{"username":"client1","roles":[],"groups":[]}},"correlationData":"3"},)"
      R"({"command":"bogus","error":"Unknown command"}]})");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].command, "createClient");
  EXPECT_EQ(r[0].correlation, "1");
  EXPECT_FALSE(r[0].error);
  EXPECT_EQ(r[1].error, "Client already exists");
  EXPECT_EQ(r[2].data["client"]["username"], "client1");
  EXPECT_EQ(r[3].correlation, "");
  EXPECT_EQ(r[3].error, "Unknown command");
}

TEST(MqttDynsecCommands, MalformedResponsesThrowDynsecError) {
  for (const char* bad : {"", "x", "[]", "{}", R"({"responses":{}})", R"({"responses":[1]})",
                          R"({"responses":[{}]})", R"({"responses":[{"command":1}]})",
                          R"({"responses":[{"command":"a","correlationData":7}]})",
                          R"({"responses":[{"command":"a","error":{}}]})"}) {
    EXPECT_THROW(parse_responses(bad), DynsecError) << bad;
  }
  const std::string deep = std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_THROW(parse_responses(deep), DynsecError);
  // Brackets inside strings do not count as nesting.
  const std::string in_string = R"({"responses":[{"command":")" + std::string(100, '[') + R"("}]})";
  EXPECT_EQ(parse_responses(in_string).size(), 1u);
  EXPECT_THROW(parse_responses(std::string(kMaxResponseBytes + 1, ' ')), DynsecError);
  std::string many = R"({"responses":[)";
  for (std::size_t i = 0; i <= kMaxResponses; ++i) many += std::string(i ? "," : "") + R"({"command":"a"})";
  many += "]}";
  EXPECT_THROW(parse_responses(many), DynsecError);
  const auto cut = parse_responses(R"({"responses":[{"command":"a","error":")" + std::string(5000, 'e') + R"("}]})");
  EXPECT_EQ(cut.at(0).error->size(), kMaxErrorLength);
}
