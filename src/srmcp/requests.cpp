#include "pqot/srmcp/requests.hpp"

namespace pqot::srmcp {

namespace {

void require(bool ok, const std::string& what, std::uint32_t tid, Status status = Status::bad_request) {
  if (!ok) throw ProtocolError(Action::reply, status, what, tid);
}

// A non-empty array of at most max_nodes_per_request strings under `key`.
std::vector<std::string> id_list(const Json& body, const char* key, const char* request, const Limits& limits,
                                 std::uint32_t tid) {
  require(body.contains(key) && body[key].is_array(), std::string(request) + " needs \"" + key + "\": [...]", tid);
  const Json& ids = body[key];
  require(!ids.empty(), std::string(request) + " needs at least one id", tid);
  require(ids.size() <= limits.max_nodes_per_request,
          std::string(request) + " of " + std::to_string(ids.size()) + " nodes exceeds the limit of " +
              std::to_string(limits.max_nodes_per_request),
          tid, Status::too_large);
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (const auto& id : ids) {
    require(id.is_string(), "ids must be strings", tid);
    out.push_back(id.get<std::string>());
  }
  return out;
}

}  // namespace

namespace {

// The deepest nesting of arrays and objects in `text`, counted outside strings; stops counting
// once past `limit`. A linear scan, much cheaper than nlohmann's callback parser (which builds and
// reports every value) and it bounds the parser's recursion before it starts.
std::size_t json_depth(ByteView text, std::size_t limit) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const std::uint8_t c : text) {
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
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > deepest && (deepest = depth) > limit) return deepest;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced text is the parser's to refuse
        break;
      default: break;
    }
  }
  return deepest;
}

}  // namespace

Json parse_json_body(ByteView body, const Limits& limits, std::uint32_t tid) {
  if (body.size() > limits.max_message) {
    throw ProtocolError(Action::reply, Status::too_large, "body too large", tid);
  }
  // Depth counts nested arrays and objects: {"ids": ["a"]} is 2 deep.
  if (json_depth(body, limits.max_json_depth) > limits.max_json_depth) {
    throw ProtocolError(Action::reply, Status::bad_request, "JSON nested too deeply", tid);
  }
  try {
    return Json::parse(body.begin(), body.end());
  } catch (const Json::exception& e) {
    throw ProtocolError(Action::reply, Status::bad_request, std::string("malformed JSON: ") + e.what(), tid);
  }
}

BrowseRequest decode_browse(const Json& body, std::uint32_t tid) {
  BrowseRequest r;
  if (body.contains("root")) {
    require(body["root"].is_string(), "\"root\" must be a string", tid);
    r.root = body["root"].get<std::string>();
  }
  if (body.contains("depth")) {
    require(body["depth"].is_number_integer(), "\"depth\" must be an integer", tid);
    const auto d = body["depth"].get<std::int64_t>();
    r.depth = d < 0 ? -1 : static_cast<int>(std::min<std::int64_t>(d, 1000));
  }
  return r;
}

ReadRequest decode_read(const Json& body, const Limits& limits, std::uint32_t tid) {
  return ReadRequest{id_list(body, "ids", "READ", limits, tid)};
}

WriteRequest decode_write(const Json& body, const Limits& limits, std::uint32_t tid) {
  require(body.contains("values") && body["values"].is_array(), "WRITE needs \"values\": [...]", tid);
  const Json& values = body["values"];
  require(!values.empty(), "WRITE needs at least one value", tid);
  require(values.size() <= limits.max_nodes_per_request, "WRITE exceeds the node limit", tid, Status::too_large);
  WriteRequest r;
  r.values.reserve(values.size());
  for (const auto& v : values) {
    require(v.is_object() && v.contains("id") && v["id"].is_string() && v.contains("value"),
            "each write needs \"id\" and \"value\"", tid);
    r.values.emplace_back(v["id"].get<std::string>(), v["value"]);
  }
  return r;
}

SubscribeRequest decode_subscribe(const Json& body, const Limits& limits, std::uint32_t tid) {
  SubscribeRequest r;
  r.ids = id_list(body, "ids", "SUBSCRIBE", limits, tid);
  if (body.contains("interval_ms")) {
    require(body["interval_ms"].is_number_unsigned() && body["interval_ms"].get<std::uint64_t>() <= 3600000,
            "\"interval_ms\" must be 0..3600000", tid);
    r.interval_ms = body["interval_ms"].get<std::uint32_t>();
  }
  // "On change" (0) is sampled by the server; explicit sampling faster than 10 ms is refused.
  require(r.interval_ms == 0 || r.interval_ms >= 10, "interval_ms must be 0 or at least 10", tid);
  return r;
}

std::uint64_t decode_unsubscribe(const Json& body, std::uint32_t tid) {
  require(body.contains("subscription") && body["subscription"].is_number_unsigned(),
          "UNSUBSCRIBE needs \"subscription\"", tid);
  return body["subscription"].get<std::uint64_t>();
}

std::uint32_t decode_link_close(const Json& body, std::uint32_t tid) {
  require(body.contains("link_id") && body["link_id"].is_number_unsigned() &&
              body["link_id"].get<std::uint64_t>() <= 0x7fffffffu,
          "LINK_CLOSE needs \"link_id\"", tid);
  return body["link_id"].get<std::uint32_t>();
}

}  // namespace pqot::srmcp
