// Compact bodies of SRMCP (docs/srmcp.md §9.2): READ, WRITE, their responses and NOTIFICATION as
// typed binary records instead of JSON text, for sessions that negotiated them in the hello (§4).
// Pure encoding and decoding, no I/O. Every count and length from the wire is checked against
// what is left of the body before anything is reserved, and every problem is a ProtocolError.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "pqot/srmcp/node.hpp"
#include "pqot/srmcp/requests.hpp"
#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {

/// A node value with its type (§9.1): nothing (an entry without a value), or a value of one of
/// the node types: bool, int64, double, string, json (an object or array).
using Value = std::variant<std::monostate, bool, std::int64_t, double, std::string, Json>;
/// The JSON form of a value (null for nothing).
Json to_json(const Value& v);
/// The value of a JSON value: booleans, integers that fit in int64, other numbers as double,
/// strings, objects and arrays; nothing for null and for integers above INT64_MAX.
Value from_json(const Json& v);

/// One entry of a READ response or a NOTIFICATION.
struct NodeReading {
  std::string id;                 ///< the node
  Status status = Status::ok;     ///< the per-node status (§11)
  std::optional<ValueType> type;  ///< the node's type; absent for an unknown id
  std::int64_t ts_ms = 0;  ///< time of the value or of the failed attempt (ms since 1970, UTC)
  Value value;             ///< present when status is OK
};

/// One entry of a WRITE response.
struct WriteOutcome {
  std::string id;
  Status status = Status::ok;
  Value stored;  ///< the value as stored (echoed), when status is OK
};

/// A NOTIFICATION body.
struct Notification {
  std::uint64_t subscription = 0;
  std::vector<NodeReading> values;
};

namespace compact {

/// The wire octet of a node type, 0 for "no type" (§9.2).
std::uint8_t type_octet(std::optional<ValueType> t) noexcept;

// ---- requests --------------------------------------------------------------------------------
/// READ request: the ids. Throws std::invalid_argument for no id, more than 65,535 or an id
/// longer than 255 bytes.
void encode_read_request(std::span<const std::string> ids, std::string& out);
/// WRITE request: id and value pairs; the same argument checks, and a value may not be nothing.
void encode_write_request(std::span<const std::pair<std::string, Value>> values, std::string& out);
/// The server's decoders: ProtocolError{reply, BAD_REQUEST, or TOO_LARGE past
/// max_nodes_per_request or for a value larger than a JSON body could carry; `tid`}. A json
/// value must be an object or array, nested at most max_json_depth - 3 deep (as in a JSON body).
ReadRequest decode_read_request(ByteView body, const Limits& limits, std::uint32_t tid);
/// The same, into `ids`, whose strings' capacity is reused (a server decoding request after
/// request allocates nothing for ids that fit the ones before). On a throw `ids` is unspecified.
void decode_read_request_into(ByteView body, const Limits& limits, std::uint32_t tid,
                              std::vector<std::string>& ids);
WriteRequest decode_write_request(ByteView body, const Limits& limits, std::uint32_t tid);

// ---- responses (server side: records appended one by one) ------------------------------------
/// The entry count that starts a READ or WRITE response (at most 65,535).
void begin_entries(std::string& out, std::size_t count);
/// One READ entry: the value is written (as `type`) only when `status` is OK.
void append_read_entry(std::string& out, std::optional<ValueType> type, Status status,
                       std::int64_t ts_ms, const Json& value);
/// One WRITE entry: the stored value is written only when `status` is OK.
void append_write_entry(std::string& out, Status status, std::optional<ValueType> type,
                        const Json& stored);
/// The header of a NOTIFICATION: subscription and entry count.
void begin_notification(std::string& out, std::uint64_t subscription, std::size_t count);
/// One NOTIFICATION entry (id, then as a READ entry; the type follows the value's JSON kind).
void append_notification_entry(std::string& out, std::string_view id, Status status,
                               std::int64_t ts_ms, const Json& value);

// ---- responses (client side) -----------------------------------------------------------------
/// A READ response to a request for `ids`: one entry per id, in order, each with its id filled
/// in. Throws ProtocolError{reply, BAD_REQUEST} for anything malformed: a count other than
/// ids.size(), an unknown type octet, a value where the status says none (or none where it says
/// one), bad UTF-8, trailing bytes. A status this version does not know is kept (a newer server may
/// send it).
std::vector<NodeReading> decode_read_response(ByteView body, std::span<const std::string> ids,
                                              const Limits& limits);
/// A WRITE response to a request for `ids` (the same checks).
std::vector<WriteOutcome> decode_write_response(ByteView body, std::span<const std::string> ids,
                                                const Limits& limits);
/// A NOTIFICATION (at most max_nodes_per_request × ... entries: bounded by the body's length).
Notification decode_notification(ByteView body, const Limits& limits);

}  // namespace compact

/// The JSON bodies of §9.1 for the same content (what the Json API of the client returns).
Json to_json(const std::vector<NodeReading>& read_entries);
Json to_json(const std::vector<WriteOutcome>& write_entries);
Json to_json(const Notification& n);

}  // namespace pqot::srmcp
