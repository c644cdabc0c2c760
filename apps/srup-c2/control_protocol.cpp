// The C2 control protocol's request parser and answer format (docs/srup-c2.md, "Control socket").
#include "control_protocol.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "pqot/crypto/bytes.hpp"
#include "pqot/srup/types.hpp"
#include "records.hpp"

namespace pqot::srup_c2 {

using nlohmann::json;

std::string_view to_string(ControlErrorCode c) noexcept {
  switch (c) {
    case ControlErrorCode::bad_request: return "bad_request";
    case ControlErrorCode::not_found: return "not_found";
    case ControlErrorCode::conflict: return "conflict";
    case ControlErrorCode::busy: return "busy";
    case ControlErrorCode::unavailable: return "unavailable";
    case ControlErrorCode::internal: return "internal";
  }
  return "internal";
}

std::optional<std::uint64_t> parse_peer_id(std::string_view text) {
  for (std::string_view prefix : {"dev-", "mon-", "c2-"}) {
    if (text.substr(0, prefix.size()) == prefix) {
      text.remove_prefix(prefix.size());
      break;
    }
  }
  if (text.empty() || text.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : text) {
    const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                  : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                              : -1;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  if (v == 0 || v == ~std::uint64_t{0}) return std::nullopt;
  return v;
}

namespace {

[[noreturn]] void bad(const std::string& what) { throw ControlError(ControlErrorCode::bad_request, what); }

// Nesting deeper than any request needs is refused before the JSON parser sees it (requests are
// objects of scalars and one level of objects).
constexpr int kMaxDepth = 4;

void check_depth(std::string_view line) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : line) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth) bad("request nested too deeply");
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
}

// One request object: reads fields by name and type, then refuses any field nobody read.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}

  bool has(const std::string& key) const { return j_.contains(key); }

  std::string text(const std::string& key, std::size_t max, bool required = true) {
    used_.insert(key);
    if (!j_.contains(key)) {
      if (required) bad("missing field '" + key + "'");
      return {};
    }
    const json& v = j_.at(key);
    if (!v.is_string()) bad("field '" + key + "' must be a string");
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > max) bad("field '" + key + "' is longer than " + std::to_string(max) + " bytes");
    if (!srup::is_valid_utf8(std::string_view(s))) bad("field '" + key + "' is not valid UTF-8");
    return s;
  }

  std::optional<std::string> optional_text(const std::string& key, std::size_t max) {
    if (!j_.contains(key)) {
      used_.insert(key);
      return std::nullopt;
    }
    return text(key, max);
  }

  std::uint64_t unsigned_number(const std::string& key, std::uint64_t lo, std::uint64_t hi,
                                std::optional<std::uint64_t> fallback = std::nullopt) {
    used_.insert(key);
    if (!j_.contains(key)) {
      if (fallback) return *fallback;
      bad("missing field '" + key + "'");
    }
    const json& v = j_.at(key);
    if (!v.is_number_unsigned()) bad("field '" + key + "' must be a non-negative integer");
    const auto n = v.get<std::uint64_t>();
    if (n < lo || n > hi) {
      bad("field '" + key + "' must be " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return n;
  }

  bool boolean(const std::string& key, bool fallback) {
    used_.insert(key);
    if (!j_.contains(key)) return fallback;
    if (!j_.at(key).is_boolean()) bad("field '" + key + "' must be true or false");
    return j_.at(key).get<bool>();
  }

  std::uint64_t peer(const std::string& key) {
    const std::string s = text(key, 20);
    const auto id = parse_peer_id(s);
    if (!id) bad("field '" + key + "' must be an ID of 1-16 hex digits (not 0, not all ones)");
    return *id;
  }

  std::optional<std::uint64_t> optional_peer(const std::string& key) {
    if (!j_.contains(key)) {
      used_.insert(key);
      return std::nullopt;
    }
    return peer(key);
  }

  // A typed value {"type": NAME, "text": TEXT} (docs/srup-pq.md 2.6); absent: none.
  srup::Value value(const std::string& key) {
    used_.insert(key);
    if (!j_.contains(key)) return srup::Value{};
    const json& v = j_.at(key);
    if (!v.is_object() || v.size() != 2 || !v.contains("type") || !v.contains("text") ||
        !v.at("type").is_string() || !v.at("text").is_string()) {
      bad("field '" + key + "' must be {\"type\": NAME, \"text\": TEXT}");
    }
    try {
      return srup::parse_value(v.at("type").get_ref<const std::string&>(),
                               v.at("text").get_ref<const std::string&>());
    } catch (const std::invalid_argument& e) {
      bad("field '" + key + "': " + e.what());
    }
  }

  std::uint32_t wait_ms() { return static_cast<std::uint32_t>(unsigned_number("wait_ms", 0, kMaxWaitMs, 0)); }

  void done() const {
    for (const auto& [k, v] : j_.items()) {
      if (used_.count(k) == 0) bad("unknown field '" + k + "'");
    }
  }

 private:
  const json& j_;
  std::set<std::string> used_{"cmd"};
};

std::string one_of(Fields& f, const std::string& key, std::initializer_list<std::string_view> allowed,
                   std::optional<std::string> fallback = std::nullopt) {
  std::optional<std::string> v = f.optional_text(key, 32);
  if (!v) {
    if (fallback) return *fallback;
    bad("missing field '" + key + "'");
  }
  if (std::find(allowed.begin(), allowed.end(), *v) == allowed.end()) {
    std::string list;
    for (const auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    bad("field '" + key + "' must be one of: " + list);
  }
  return *v;
}

template <std::size_t N>
std::array<std::uint8_t, N> fixed_hex(const std::string& text, const std::string& key) {
  std::string digits;
  for (const char c : text) {
    if (c == ' ' || c == '-') continue;  // the code is shown in groups
    digits.push_back(c);
  }
  crypto::Bytes b;
  try {
    b = crypto::from_hex(digits);
  } catch (const std::exception&) {
    bad("field '" + key + "' must be hex");
  }
  if (b.size() != N) bad("field '" + key + "' must be " + std::to_string(2 * N) + " hex digits");
  std::array<std::uint8_t, N> out{};
  std::copy(b.begin(), b.end(), out.begin());
  return out;
}

ControlRequest parse_enrol(Fields& f, bool monitor) {
  Enrol e;
  e.monitor = monitor;
  e.public_identity = f.text("public_identity", kMaxPem);
  e.csr = f.text("csr", kMaxPem);
  if (!monitor) {
    e.type = f.text("type", kMaxDeviceType);
    if (e.type.empty() || !std::all_of(e.type.begin(), e.type.end(), [](char c) {
          return c > 0x20 && c < 0x7f;
        })) {
      bad("field 'type' must be 1-64 printable ASCII characters without spaces");
    }
    e.join = one_of(f, "join", {"simple", "human", "observed"}, "simple");
    e.observer = f.optional_peer("observer");
    if (e.observer && e.join != "observed") bad("field 'observer' is only for join 'observed'");
  }
  return e;
}

SendCommand command(srup::MessageType type, std::uint64_t device, srup::Body body, std::uint32_t wait) {
  SendCommand c;
  c.type = type;
  c.device = device;
  c.body = std::move(body);
  c.wait_ms = wait;
  return c;
}

using Parser = std::function<ControlRequest(Fields&)>;

const std::map<std::string, Parser, std::less<>>& parsers() {
  static const std::map<std::string, Parser, std::less<>> table = {
      {"status", [](Fields&) -> ControlRequest { return StatusRequest{}; }},
      {"devices",
       [](Fields& f) -> ControlRequest {
         ListDevices l;
         if (f.has("state")) l.state = one_of(f, "state", {"pending", "joined", "resigned", "deregistered"});
         return l;
       }},
      {"device", [](Fields& f) -> ControlRequest { return ShowDevice{f.peer("device")}; }},
      {"enrol", [](Fields& f) { return parse_enrol(f, false); }},
      {"enrol-monitor", [](Fields& f) { return parse_enrol(f, true); }},
      {"join-code",
       [](Fields& f) -> ControlRequest {
         JoinCode j;
         j.device = f.peer("device");
         j.code = fixed_hex<16>(f.text("code", 64), "code");
         return j;
       }},
      {"action",
       [](Fields& f) -> ControlRequest {
         const std::uint64_t device = f.peer("device");
         srup::Action a;
         a.action_id = static_cast<std::uint8_t>(f.unsigned_number("action", 0, 255));
         a.argument = f.value("arg");
         return command(srup::MessageType::action, device, a, f.wait_ms());
       }},
      {"data",
       [](Fields& f) -> ControlRequest {
         const std::uint64_t device = f.peer("device");
         srup::Data d;
         d.data_id = f.text("id", 255);
         if (d.data_id.empty()) bad("field 'id' must not be empty");
         d.value = f.value("value");
         return command(srup::MessageType::data, device, d, f.wait_ms());
       }},
      {"id-request",
       [](Fields& f) -> ControlRequest {
         const std::uint64_t device = f.peer("device");
         return command(srup::MessageType::id_request, device, srup::Empty{}, f.wait_ms());
       }},
      {"update",
       [](Fields& f) -> ControlRequest {
         const std::uint64_t device = f.peer("device");
         srup::UpdateInitiate u;
         u.url = f.text("url", 2048);
         if (u.url.empty()) bad("field 'url' must not be empty");
         u.digest = fixed_hex<32>(f.text("sha256", 64), "sha256");
         SendCommand c = command(srup::MessageType::update_initiate, device, u, 0);
         c.activate = f.boolean("activate", true);
         c.wait_ms = f.wait_ms();
         return c;
       }},
      {"join-command",
       [](Fields& f) -> ControlRequest {
         const std::uint64_t device = f.peer("device");
         srup::PublicIdentity c2;
         try {
           c2 = decode_identity(crypto::as_bytes(f.text("c2_public_identity", kMaxPem)));
         } catch (const std::invalid_argument& e) {
           bad(std::string("field 'c2_public_identity': ") + e.what());
         }
         srup::JoinCommand j{c2.id, c2.keys.suite, {c2.keys.signature_public, c2.keys.kem_public}};
         return command(srup::MessageType::join_command, device, j, f.wait_ms());
       }},
      {"terminate",
       [](Fields& f) -> ControlRequest {
         const std::uint64_t device = f.peer("device");
         return command(srup::MessageType::terminate_command, device, srup::Empty{}, f.wait_ms());
       }},
      {"deregister",
       [](Fields& f) -> ControlRequest {
         const std::uint64_t device = f.peer("device");
         return command(srup::MessageType::deregister_command, device, srup::Empty{}, f.wait_ms());
       }},
      {"authorize",
       [](Fields& f) -> ControlRequest { return Authorize{f.peer("monitor"), f.peer("device"), true}; }},
      {"revoke",
       [](Fields& f) -> ControlRequest { return Authorize{f.peer("monitor"), f.peer("device"), false}; }},
      {"commands",
       [](Fields& f) -> ControlRequest {
         ListCommands l;
         l.device = f.optional_peer("device");
         if (f.has("state")) l.state = one_of(f, "state", {"pending", "answered", "expired", "cancelled"});
         l.limit = static_cast<std::uint32_t>(f.unsigned_number("limit", 1, kMaxListLimit, 100));
         return l;
       }},
      {"command",
       [](Fields& f) -> ControlRequest {
         ShowCommand c;
         c.token_hex = f.text("token", 128);
         if (c.token_hex.size() < 2 || c.token_hex.size() % 2 != 0 ||
             !std::all_of(c.token_hex.begin(), c.token_hex.end(),
                          [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)) != 0; })) {
           bad("field 'token' must be 2-128 hex digits");
         }
         return c;
       }},
      {"history",
       [](Fields& f) -> ControlRequest {
         History h;
         h.device = f.peer("device");
         h.kind = one_of(f, "kind", {"data", "telemetry", "events"});
         h.limit = static_cast<std::uint32_t>(f.unsigned_number("limit", 1, kMaxListLimit, 20));
         return h;
       }},
      {"backup",
       [](Fields& f) -> ControlRequest {
         Backup b;
         b.path = f.text("path", 4096);
         if (b.path.empty() || b.path.front() != '/') bad("field 'path' must be an absolute path");
         return b;
       }},
  };
  return table;
}

}  // namespace

ControlRequest parse_control_request(std::string_view line) {
  if (line.size() > kMaxRequestLine) bad("request longer than " + std::to_string(kMaxRequestLine) + " bytes");
  check_depth(line);
  const json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) bad("request must be one JSON object on one line");
  if (!j.contains("cmd") || !j.at("cmd").is_string()) bad("missing field 'cmd'");
  const auto& name = j.at("cmd").get_ref<const std::string&>();
  const auto it = parsers().find(name);
  if (it == parsers().end()) bad("unknown cmd '" + name.substr(0, 32) + "'");
  Fields fields(j);
  ControlRequest request = it->second(fields);
  fields.done();
  return request;
}

std::string format_result(const json& result) {
  json out = {{"ok", true}, {"result", result}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string format_error(ControlErrorCode code, std::string_view message) {
  json out = {{"ok", false}, {"code", to_string(code)}, {"error", std::string(message)}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace pqot::srup_c2
