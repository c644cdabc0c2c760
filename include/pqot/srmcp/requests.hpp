// Request bodies of SRMCP v2 (docs/srmcp.md §9): JSON with the limits of §12, decoded into plain
// structs. Every problem is a ProtocolError{reply} carrying the status the client receives.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

using Json = nlohmann::json;

/// Parses a message body as JSON: at most max_message bytes, nesting at most max_json_depth.
/// Throws ProtocolError{reply, BAD_REQUEST or TOO_LARGE} (with `tid`).
Json parse_json_body(ByteView body, const Limits& limits, std::uint32_t tid);

struct BrowseRequest {
  std::string root;  ///< empty: the top level
  int depth = -1;    ///< -1: unlimited
};
struct ReadRequest {
  std::vector<std::string> ids;
};
struct WriteRequest {
  std::vector<std::pair<std::string, Json>> values;
};
struct SubscribeRequest {
  std::vector<std::string> ids;
  std::uint32_t interval_ms = 0;  ///< 0: on change
};

// Each takes the parsed body (a JSON object) of one request type and checks its schema and limits.
BrowseRequest decode_browse(const Json& body, std::uint32_t tid);
ReadRequest decode_read(const Json& body, const Limits& limits, std::uint32_t tid);
WriteRequest decode_write(const Json& body, const Limits& limits, std::uint32_t tid);
SubscribeRequest decode_subscribe(const Json& body, const Limits& limits, std::uint32_t tid);
std::uint64_t decode_unsubscribe(const Json& body, std::uint32_t tid);
std::uint32_t decode_link_close(const Json& body, std::uint32_t tid);

}  // namespace pqot::srmcp
