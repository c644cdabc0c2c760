#include "pqot/mqtt/dynsec_commands.hpp"

namespace pqot::mqtt::dynsec {

namespace {

using nlohmann::json;

void dynsec_check_topic(std::string_view topic) {
  if (topic.empty() || topic.size() > kMaxTopicLength) {
    throw DynsecError("ACL topic must be 1.." + std::to_string(kMaxTopicLength) + " bytes, got " +
                      std::to_string(topic.size()));
  }
  // MQTT filter syntax (MQTT 5 section 4.7): '#' only as the whole last level, '+' only as a
  // whole level; no NUL or control characters.
  std::size_t level_start = 0;
  for (std::size_t i = 0; i <= topic.size(); ++i) {
    if (i < topic.size() && static_cast<unsigned char>(topic[i]) < 0x20) {
      throw DynsecError("ACL topic contains a control character at byte " + std::to_string(i));
    }
    if (i < topic.size() && topic[i] != '/') continue;
    const std::string_view level = topic.substr(level_start, i - level_start);
    if (level.find_first_of("+#") != std::string_view::npos) {
      if (level.size() != 1) throw DynsecError("ACL topic: '+' and '#' must be whole levels");
      if (level == "#" && i != topic.size()) throw DynsecError("ACL topic: '#' must be the last level");
    }
    level_start = i + 1;
  }
}

json dynsec_command(const char* name) { return json{{"command", name}}; }

// Nesting of [ and { outside strings, checked before nlohmann's recursive parser sees the text.
bool dynsec_depth_ok(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

}  // namespace

const char* to_string(AclType type) noexcept {
  switch (type) {
    case AclType::publish_client_send: return "publishClientSend";
    case AclType::publish_client_receive: return "publishClientReceive";
    case AclType::subscribe_literal: return "subscribeLiteral";
    case AclType::subscribe_pattern: return "subscribePattern";
    case AclType::unsubscribe_literal: return "unsubscribeLiteral";
    case AclType::unsubscribe_pattern: return "unsubscribePattern";
  }
  return "?";
}

void check_name(std::string_view name, std::string_view what) {
  if (name.empty() || name.size() > kMaxNameLength) {
    throw DynsecError(std::string(what) + " must be 1.." + std::to_string(kMaxNameLength) +
                      " bytes, got " + std::to_string(name.size()));
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c <= 0x20 || c >= 0x7f || c == '+' || c == '#' || c == '/') {
      throw DynsecError(std::string(what) + " has a character that is not allowed at byte " +
                        std::to_string(i) + " (printable ASCII without space, '+', '#', '/')");
    }
  }
}

json create_client(std::string_view username) {
  check_name(username, "username");
  json c = dynsec_command("createClient");
  c["username"] = username;
  return c;
}

json delete_client(std::string_view username) {
  check_name(username, "username");
  json c = dynsec_command("deleteClient");
  c["username"] = username;
  return c;
}

json get_client(std::string_view username) {
  check_name(username, "username");
  json c = dynsec_command("getClient");
  c["username"] = username;
  return c;
}

json list_clients() {
  json c = dynsec_command("listClients");
  c["verbose"] = false;
  return c;
}

json create_role(std::string_view rolename) {
  check_name(rolename, "rolename");
  json c = dynsec_command("createRole");
  c["rolename"] = rolename;
  return c;
}

json delete_role(std::string_view rolename) {
  check_name(rolename, "rolename");
  json c = dynsec_command("deleteRole");
  c["rolename"] = rolename;
  return c;
}

json add_role_acl(std::string_view rolename, const Acl& acl) {
  check_name(rolename, "rolename");
  dynsec_check_topic(acl.topic);
  if (acl.priority < -1000000 || acl.priority > 1000000) {
    throw DynsecError("ACL priority must be -1000000..1000000, got " + std::to_string(acl.priority));
  }
  json c = dynsec_command("addRoleACL");
  c["rolename"] = rolename;
  c["acltype"] = to_string(acl.type);
  c["topic"] = acl.topic;
  c["allow"] = acl.allow;
  c["priority"] = acl.priority;
  return c;
}

json remove_role_acl(std::string_view rolename, AclType type, std::string_view topic) {
  check_name(rolename, "rolename");
  dynsec_check_topic(topic);
  json c = dynsec_command("removeRoleACL");
  c["rolename"] = rolename;
  c["acltype"] = to_string(type);
  c["topic"] = topic;
  return c;
}

json add_client_role(std::string_view username, std::string_view rolename, int priority) {
  check_name(username, "username");
  check_name(rolename, "rolename");
  json c = dynsec_command("addClientRole");
  c["username"] = username;
  c["rolename"] = rolename;
  c["priority"] = priority;
  return c;
}

std::vector<json> register_identity(std::string_view username, const std::vector<Acl>& acls) {
  std::vector<json> out;
  out.reserve(acls.size() + 3);
  out.push_back(create_role(username));
  for (const Acl& acl : acls) out.push_back(add_role_acl(username, acl));
  out.push_back(create_client(username));
  out.push_back(add_client_role(username, username));
  return out;
}

std::vector<json> deregister_identity(std::string_view username) {
  return {delete_client(username), delete_role(username)};
}

std::string encode_commands(const std::vector<json>& commands) {
  return json{{"commands", commands}}.dump();
}

std::vector<Response> parse_responses(std::string_view payload) {
  if (payload.size() > kMaxResponseBytes) {
    throw DynsecError("dynsec response of " + std::to_string(payload.size()) + " bytes (at most " +
                      std::to_string(kMaxResponseBytes) + ")");
  }
  if (!dynsec_depth_ok(payload)) {
    throw DynsecError("dynsec response nested deeper than " + std::to_string(kMaxJsonDepth));
  }
  const json doc = json::parse(payload.begin(), payload.end(), nullptr, false);
  if (doc.is_discarded()) throw DynsecError("dynsec response is not JSON");
  if (!doc.is_object() || !doc.contains("responses") || !doc["responses"].is_array()) {
    throw DynsecError("dynsec response has no \"responses\" array");
  }
  const json& entries = doc["responses"];
  if (entries.size() > kMaxResponses) {
    throw DynsecError("dynsec response has " + std::to_string(entries.size()) + " entries (at most " +
                      std::to_string(kMaxResponses) + ")");
  }
  std::vector<Response> out;
  out.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    const std::string where = "dynsec response entry " + std::to_string(i);
    if (!e.is_object()) throw DynsecError(where + " is not an object");
    const auto command = e.find("command");
    if (command == e.end() || !command->is_string()) throw DynsecError(where + ": \"command\" missing or not a string");
    Response r;
    r.command = command->get<std::string>();
    if (const auto corr = e.find("correlationData"); corr != e.end()) {
      if (!corr->is_string()) throw DynsecError(where + ": \"correlationData\" is not a string");
      r.correlation = corr->get<std::string>();
    }
    if (const auto err = e.find("error"); err != e.end()) {
      if (!err->is_string()) throw DynsecError(where + ": \"error\" is not a string");
      std::string text = err->get<std::string>();
      if (text.size() > kMaxErrorLength) text.resize(kMaxErrorLength);
      r.error = std::move(text);
    }
    if (const auto data = e.find("data"); data != e.end()) r.data = *data;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace pqot::mqtt::dynsec
