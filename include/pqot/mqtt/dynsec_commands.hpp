// Mosquitto's dynamic-security plugin (dynsec) commands as JSON, and the parser of its responses
// (docs/mqtt.md, "Registration"). No I/O: DynsecAdmin (dynsec.hpp) sends these through a Client;
// the parser is fuzzed (tests/fuzz/mqtt_dynsec_response.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace pqot::mqtt::dynsec {

/// Where commands go and where the plugin answers (mosquitto 2.0, API version 1).
inline constexpr std::string_view kCommandTopic = "$CONTROL/dynamic-security/v1";
inline constexpr std::string_view kResponseTopic = "$CONTROL/dynamic-security/v1/response";

/// Bounds on names and topics we put into commands, and on responses we parse.
inline constexpr std::size_t kMaxNameLength = 256;       ///< username, rolename
inline constexpr std::size_t kMaxTopicLength = 1024;     ///< ACL topic filter
inline constexpr std::size_t kMaxResponseBytes = 1 << 20;  ///< one response message
inline constexpr std::size_t kMaxResponses = 1024;       ///< entries in one response message
inline constexpr std::size_t kMaxJsonDepth = 32;         ///< nesting of [ and { in a response
inline constexpr std::size_t kMaxErrorLength = 1024;     ///< the plugin's error text (longer is cut)

/// A name, topic or ACL type that is not acceptable, or a response that is not one.
class DynsecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The ACL types of dynsec's roles.
enum class AclType {
  publish_client_send,     ///< "publishClientSend": the client may publish to the topic
  publish_client_receive,  ///< "publishClientReceive": the broker may deliver the topic to it
  subscribe_literal,       ///< "subscribeLiteral": the filter exactly as written
  subscribe_pattern,       ///< "subscribePattern": a filter that matches the pattern
  unsubscribe_literal,     ///< "unsubscribeLiteral"
  unsubscribe_pattern,     ///< "unsubscribePattern"
};
/// The JSON spelling: "publishClientSend", ...
const char* to_string(AclType type) noexcept;

struct Acl {
  AclType type = AclType::publish_client_send;
  std::string topic;  ///< a topic filter, 1..kMaxTopicLength bytes, valid MQTT filter syntax
  bool allow = true;
  int priority = 0;  ///< higher first; -1000000..1000000
};

// Builders: each returns one command object without correlationData (DynsecAdmin adds it).
// Names must be 1..kMaxNameLength bytes of printable ASCII without space, '+', '#' and '/'
// (certificate CNs such as "dev-0123456789abcdef"); otherwise DynsecError.

/// Clients authenticate by certificate (use_identity_as_username), so no password is set.
nlohmann::json create_client(std::string_view username);
nlohmann::json delete_client(std::string_view username);
nlohmann::json get_client(std::string_view username);
nlohmann::json list_clients();
nlohmann::json create_role(std::string_view rolename);
nlohmann::json delete_role(std::string_view rolename);
nlohmann::json add_role_acl(std::string_view rolename, const Acl& acl);
nlohmann::json remove_role_acl(std::string_view rolename, AclType type, std::string_view topic);
/// `priority`: the role's priority for this client (higher first).
nlohmann::json add_client_role(std::string_view username, std::string_view rolename, int priority = 0);

/// Registration of one identity as the design does it (docs/mqtt.md, "Registration"): a role named
/// like the user holding `acls`, the client, and the role given to the client. In this order:
/// createRole, addRoleACL per ACL, createClient, addClientRole.
std::vector<nlohmann::json> register_identity(std::string_view username, const std::vector<Acl>& acls);
/// Deregistration: deleteClient (the broker disconnects the client, and its reconnections are
/// denied every publish and subscribe), then deleteRole. Not disableClient: see docs/mqtt.md.
std::vector<nlohmann::json> deregister_identity(std::string_view username);

/// Checks a username or rolename (the rule above); throws DynsecError naming `what`.
void check_name(std::string_view name, std::string_view what);

/// The message payload that carries `commands`: {"commands":[...]}.
std::string encode_commands(const std::vector<nlohmann::json>& commands);

/// One entry of a response message.
struct Response {
  std::string command;                ///< "createClient", ...
  std::string correlation;            ///< correlationData as sent ("" if absent)
  std::optional<std::string> error;   ///< the plugin's error text; absent on success
  nlohmann::json data;                ///< "data" (getClient, listClients), else null
};

/// Parses a message from kResponseTopic: {"responses":[{"command":..., "correlationData":...,
/// "error":..., "data":...}, ...]}. Throws DynsecError for anything else: more than
/// kMaxResponseBytes or kMaxResponses, nesting deeper than kMaxJsonDepth, not JSON, no
/// "responses" array, an entry that is not an object, "command" missing or not a string,
/// "correlationData" or "error" present but not a string. Unknown keys are ignored. An error text
/// longer than kMaxErrorLength is cut to that length.
std::vector<Response> parse_responses(std::string_view payload);

}  // namespace pqot::mqtt::dynsec
