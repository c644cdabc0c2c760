// Compact bodies (docs/srmcp.md §9.2).
#include "pqot/srmcp/compact.hpp"

#include <bit>
#include <limits>
#include <stdexcept>

#include "pqot/common/byte_io.hpp"
#include "pqot/common/utf8.hpp"
#include "pqot/srmcp/json_text.hpp"

namespace pqot::srmcp {

namespace {

// Type octets (§9.2).
constexpr std::uint8_t kNoType = 0, kBool = 1, kInt64 = 2, kDouble = 3, kString = 4, kJson = 5,
                       kFolder = 6;

[[noreturn]] void bad(const std::string& what, std::uint32_t tid) {
  throw ProtocolError(Action::reply, Status::bad_request, what, tid);
}

std::optional<ValueType> type_of_octet(std::uint8_t o) {
  switch (o) {
    case kBool:
      return ValueType::boolean;
    case kInt64:
      return ValueType::int64;
    case kDouble:
      return ValueType::float64;
    case kString:
      return ValueType::string;
    case kJson:
      return ValueType::json;
    case kFolder:
      return ValueType::folder;
    default:
      return std::nullopt;
  }
}

void put_u8(std::string& out, std::uint8_t v) {
  out.push_back(static_cast<char>(v));
}
void put_u16(std::string& out, std::uint16_t v) {
  put_u8(out, static_cast<std::uint8_t>(v >> 8));
  put_u8(out, static_cast<std::uint8_t>(v));
}
void put_u64(std::string& out, std::uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (56 - 8 * i));
  out.append(b, 8);
}
void put_text(std::string& out, std::string_view text) {
  if (text.size() > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("compact text too long");
  const auto n = static_cast<std::uint32_t>(text.size());
  put_u16(out, static_cast<std::uint16_t>(n >> 16));
  put_u16(out, static_cast<std::uint16_t>(n));
  out.append(text);
}
void put_id(std::string& out, std::string_view id) {
  if (id.empty() || id.size() > 255) throw std::invalid_argument("a node id must be 1..255 bytes");
  put_u8(out, static_cast<std::uint8_t>(id.size()));
  out.append(id);
}
void put_count(std::string& out, std::size_t n) {
  if (n > 0xffff) throw std::invalid_argument("more than 65,535 entries");
  put_u16(out, static_cast<std::uint16_t>(n));
}

// A value as its node type stores it (the store keeps values in that type's canonical form).
void put_value_of(std::string& out, ValueType type, const Json& v) {
  switch (type) {
    case ValueType::boolean:
      put_u8(out, v.get<bool>() ? 1 : 0);
      return;
    case ValueType::int64:
      put_u64(out, static_cast<std::uint64_t>(v.get<std::int64_t>()));
      return;
    case ValueType::float64:
      put_u64(out, std::bit_cast<std::uint64_t>(v.get<double>()));
      return;
    case ValueType::string:
      put_text(out, v.get_ref<const std::string&>());
      return;
    case ValueType::json: {
      std::string text;
      append_json(text, v);
      put_text(out, text);
      return;
    }
    case ValueType::folder:
      break;
  }
  throw std::logic_error("a folder has no value");
}

// A typed value from a JSON value's kind; nullopt for null (and integers above INT64_MAX).
std::optional<ValueType> kind_of(const Json& v) {
  if (v.is_boolean()) return ValueType::boolean;
  if (v.is_number_unsigned()) {
    if (v.get<std::uint64_t>() >
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return ValueType::float64;
    }
    return ValueType::int64;
  }
  if (v.is_number_integer()) return ValueType::int64;
  if (v.is_number_float()) return ValueType::float64;
  if (v.is_string()) return ValueType::string;
  if (v.is_object() || v.is_array()) return ValueType::json;
  return std::nullopt;
}

void put_typed_value(std::string& out, const Value& v) {
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          throw std::invalid_argument("a value to write is missing");
        } else if constexpr (std::is_same_v<T, bool>) {
          put_u8(out, kBool);
          put_u8(out, x ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          put_u8(out, kInt64);
          put_u64(out, static_cast<std::uint64_t>(x));
        } else if constexpr (std::is_same_v<T, double>) {
          put_u8(out, kDouble);
          put_u64(out, std::bit_cast<std::uint64_t>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          put_u8(out, kString);
          put_text(out, x);
        } else {
          std::string text;
          append_json(text, x);
          put_u8(out, kJson);
          put_text(out, text);
        }
      },
      v);
}

// Reading: every underflow becomes BAD_REQUEST for `tid`.
class Reader {
 public:
  Reader(ByteView body, std::uint32_t tid) : r_(body), tid_(tid) {}

  template <class F>
  auto guard(F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const common::Underflow&) {
      bad("compact body truncated", tid_);
    }
  }
  std::uint8_t u8() {
    return guard([&] { return r_.u8(); });
  }
  std::uint16_t u16() {
    return guard([&] { return r_.u16(); });
  }
  std::uint64_t u64() {
    return guard([&] { return r_.u64(); });
  }
  std::string_view bytes(std::size_t n) {
    const auto b = guard([&] { return r_.bytes(n); });
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  std::string_view id() {
    const std::uint8_t n = u8();
    if (n == 0) bad("empty node id", tid_);
    return bytes(n);
  }
  std::string_view text() {
    const std::uint32_t n = guard([&] { return r_.u32(); });
    if (n > r_.remaining()) bad("compact text longer than its body", tid_);
    return bytes(n);
  }
  // A count of entries, each at least `min_entry` bytes: checked against what is left before the
  // caller reserves anything.
  std::size_t count(std::size_t min_entry, std::size_t limit) {
    const std::size_t n = u16();
    if (n > limit) throw ProtocolError(Action::reply, Status::too_large, "too many entries", tid_);
    if (n * min_entry > r_.remaining()) bad("entry count larger than the body", tid_);
    return n;
  }
  void finish() {
    if (!r_.empty()) bad("trailing bytes after the compact body", tid_);
  }
  std::uint32_t tid() const { return tid_; }

 private:
  common::ByteReader r_;
  std::uint32_t tid_;
};

// What a JSON body adds around one value: {"values":[{"value": V ...}]} nests it 3 deep, and an
// entry's other fields take well under 256 bytes.
constexpr std::uint32_t kJsonEntryDepth = 3;
constexpr std::uint32_t kJsonEntryRoom = 256;

// The length of `s` as a JSON string's contents: control characters become \u00XX, quote and
// backslash gain a backslash.
std::size_t escaped_size(std::string_view s) {
  std::size_t n = s.size();
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20) {
      n += 5;
    } else if (c == '"' || c == '\\') {
      n += 1;
    }
  }
  return n;
}

// A value of node type `type` (not a folder).
Json read_value_json(Reader& r, ValueType type, const Limits& limits) {
  switch (type) {
    case ValueType::boolean: {
      const std::uint8_t b = r.u8();
      if (b > 1) bad("a bool must be 0 or 1", r.tid());
      return b == 1;
    }
    case ValueType::int64:
      return static_cast<std::int64_t>(r.u64());
    case ValueType::float64:
      return std::bit_cast<double>(r.u64());
    case ValueType::string: {
      const std::string_view s = r.text();
      if (!common::valid_utf8(s)) bad("a string value is not valid UTF-8", r.tid());
      // No more than a JSON body could carry: the value must stay readable by JSON sessions,
      // where each control byte becomes six.
      if (escaped_size(s) > limits.max_message - kJsonEntryRoom) {
        throw ProtocolError(Action::reply, Status::too_large,
                            "a string value larger than a JSON body may carry", r.tid());
      }
      return std::string(s);
    }
    case ValueType::json: {
      // Nested no deeper than in a JSON body, where the value sits inside {"values":[{"value":
      // ...}]}.
      Limits inner = limits;
      inner.max_json_depth =
          limits.max_json_depth > kJsonEntryDepth ? limits.max_json_depth - kJsonEntryDepth : 1;
      const std::string_view text = r.text();
      if (text.size() > limits.max_message - kJsonEntryRoom) {
        throw ProtocolError(Action::reply, Status::too_large,
                            "a json value larger than a JSON body may carry", r.tid());
      }
      Json j = parse_json_body(crypto::as_bytes(text), inner, r.tid());
      if (!j.is_object() && !j.is_array())
        bad("a json value must be an object or an array", r.tid());
      return j;
    }
    case ValueType::folder:
      break;
  }
  bad("a folder has no value", r.tid());
}

Value to_value(ValueType type, Json j) {
  switch (type) {
    case ValueType::boolean:
      return j.get<bool>();
    case ValueType::int64:
      return j.get<std::int64_t>();
    case ValueType::float64:
      return j.get<double>();
    case ValueType::string:
      return std::move(j.get_ref<std::string&>());
    case ValueType::json:
      return j;
    case ValueType::folder:
      break;
  }
  return std::monostate{};
}

// What follows a READ or NOTIFICATION entry's id: status, type, time, value. A notification's
// failed entry has no type (§9.2).
NodeReading read_entry(Reader& r, const Limits& limits, bool notification = false) {
  NodeReading e;
  e.status = static_cast<Status>(r.u16());
  const std::uint8_t t = r.u8();
  e.ts_ms = static_cast<std::int64_t>(r.u64());
  if (notification && e.status != Status::ok && t != kNoType)
    bad("a failed notification entry with a type", r.tid());
  if (t != kNoType) {
    e.type = type_of_octet(t);
    if (!e.type) bad("unknown type octet " + std::to_string(t), r.tid());
  }
  if (e.status == Status::ok) {
    if (!e.type || *e.type == ValueType::folder) bad("an OK entry without a value type", r.tid());
    e.value = to_value(*e.type, read_value_json(r, *e.type, limits));
  }
  return e;
}

// Entry sizes at their smallest, for the count checks: a READ entry without value is 11 bytes.
constexpr std::size_t kMinReadEntry = 2 + 1 + 8;
constexpr std::size_t kMinWriteEntry = 2;
constexpr std::size_t kMinId = 2;

}  // namespace

Json to_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> Json {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
          return nullptr;
        } else {
          return Json(x);
        }
      },
      v);
}

Value from_json(const Json& v) {
  const auto kind = kind_of(v);
  if (!kind) return std::monostate{};
  return to_value(*kind, *kind == ValueType::float64 ? Json(v.get<double>()) : v);
}

namespace compact {

std::uint8_t type_octet(std::optional<ValueType> t) noexcept {
  if (!t) return kNoType;
  switch (*t) {
    case ValueType::boolean:
      return kBool;
    case ValueType::int64:
      return kInt64;
    case ValueType::float64:
      return kDouble;
    case ValueType::string:
      return kString;
    case ValueType::json:
      return kJson;
    case ValueType::folder:
      return kFolder;
  }
  return kNoType;
}

void encode_read_request(std::span<const std::string> ids, std::string& out) {
  if (ids.empty()) throw std::invalid_argument("READ needs at least one id");
  std::size_t size = 2;
  for (const auto& id : ids) size += 1 + id.size();
  out.reserve(out.size() + size);  // one allocation for the whole body
  put_count(out, ids.size());
  for (const auto& id : ids) put_id(out, id);
}

void encode_write_request(std::span<const std::pair<std::string, Value>> values, std::string& out) {
  if (values.empty()) throw std::invalid_argument("WRITE needs at least one value");
  put_count(out, values.size());
  for (const auto& [id, v] : values) {
    put_id(out, id);
    put_typed_value(out, v);
  }
}

ReadRequest decode_read_request(ByteView body, const Limits& limits, std::uint32_t tid) {
  ReadRequest req;
  decode_read_request_into(body, limits, tid, req.ids);
  return req;
}

void decode_read_request_into(ByteView body, const Limits& limits, std::uint32_t tid,
                              std::vector<std::string>& ids) {
  Reader r(body, tid);
  const std::size_t n = r.count(kMinId, limits.max_nodes_per_request);
  if (n == 0) bad("READ needs at least one id", tid);
  ids.resize(n);  // count() has bounded n by the body's length
  for (std::size_t i = 0; i < n; ++i) ids[i].assign(r.id());
  r.finish();
}

WriteRequest decode_write_request(ByteView body, const Limits& limits, std::uint32_t tid) {
  Reader r(body, tid);
  const std::size_t n = r.count(kMinId + 2, limits.max_nodes_per_request);
  if (n == 0) bad("WRITE needs at least one value", tid);
  WriteRequest req;
  req.values.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::string id(r.id());
    const std::uint8_t t = r.u8();
    const auto type = type_of_octet(t);
    if (!type || *type == ValueType::folder)
      bad("unknown value type octet " + std::to_string(t), tid);
    req.values.emplace_back(std::move(id), read_value_json(r, *type, limits));
  }
  r.finish();
  return req;
}

void begin_entries(std::string& out, std::size_t count) {
  put_count(out, count);
}

void append_read_entry(std::string& out, std::optional<ValueType> type, Status status,
                       std::int64_t ts_ms, const Json& value) {
  put_u16(out, static_cast<std::uint16_t>(status));
  put_u8(out, type_octet(type));
  put_u64(out, static_cast<std::uint64_t>(ts_ms));
  if (status == Status::ok) put_value_of(out, *type, value);
}

void append_write_entry(std::string& out, Status status, std::optional<ValueType> type,
                        const Json& stored) {
  put_u16(out, static_cast<std::uint16_t>(status));
  if (status != Status::ok) return;
  put_u8(out, type_octet(type));
  put_value_of(out, *type, stored);
}

void begin_notification(std::string& out, std::uint64_t subscription, std::size_t count) {
  put_u64(out, subscription);
  put_count(out, count);
}

void append_notification_entry(std::string& out, std::string_view id, Status status,
                               std::int64_t ts_ms, const Json& value) {
  put_id(out, id);
  const auto kind = status == Status::ok ? kind_of(value) : std::nullopt;
  if (status == Status::ok && !kind)
    throw std::logic_error("an OK notification entry without a value");
  // A value whose integer does not fit int64 is sent as the double the store would make of it.
  const Json& v =
      kind == ValueType::float64 && !value.is_number_float() ? Json(value.get<double>()) : value;
  append_read_entry(out, kind, status, ts_ms, v);
}

std::vector<NodeReading> decode_read_response(ByteView body, std::span<const std::string> ids,
                                              const Limits& limits) {
  Reader r(body, 0);
  const std::size_t n = r.count(kMinReadEntry, 0xffff);
  if (n != ids.size())
    bad("READ response with " + std::to_string(n) + " entries for " + std::to_string(ids.size()) +
            " ids",
        0);
  std::vector<NodeReading> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(read_entry(r, limits));
    out.back().id = ids[i];
  }
  r.finish();
  return out;
}

std::vector<WriteOutcome> decode_write_response(ByteView body, std::span<const std::string> ids,
                                                const Limits& limits) {
  Reader r(body, 0);
  const std::size_t n = r.count(kMinWriteEntry, 0xffff);
  if (n != ids.size())
    bad("WRITE response with " + std::to_string(n) + " entries for " + std::to_string(ids.size()) +
            " values",
        0);
  std::vector<WriteOutcome> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    WriteOutcome e;
    e.id = ids[i];
    e.status = static_cast<Status>(r.u16());
    if (e.status == Status::ok) {
      const std::uint8_t t = r.u8();
      const auto type = type_of_octet(t);
      if (!type || *type == ValueType::folder)
        bad("unknown value type octet " + std::to_string(t), 0);
      e.stored = to_value(*type, read_value_json(r, *type, limits));
    }
    out.push_back(std::move(e));
  }
  r.finish();
  return out;
}

Notification decode_notification(ByteView body, const Limits& limits) {
  Reader r(body, 0);
  Notification n;
  n.subscription = r.u64();
  const std::size_t count = r.count(kMinId + kMinReadEntry, 0xffff);
  n.values.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view id = r.id();
    NodeReading e = read_entry(r, limits, true);
    e.id = id;
    n.values.push_back(std::move(e));
  }
  r.finish();
  return n;
}

}  // namespace compact

Json to_json(const std::vector<NodeReading>& read_entries) {
  Json values = Json::array();
  for (const auto& e : read_entries) {
    Json entry{{"id", e.id}, {"status", static_cast<int>(e.status)}, {"ts_ms", e.ts_ms}};
    if (e.type) entry["type"] = type_name(*e.type);
    if (e.status == Status::ok) entry["value"] = to_json(e.value);
    values.push_back(std::move(entry));
  }
  return Json{{"values", std::move(values)}};
}

Json to_json(const std::vector<WriteOutcome>& write_entries) {
  Json values = Json::array();
  for (const auto& e : write_entries) {
    Json entry{{"id", e.id}, {"status", static_cast<int>(e.status)}};
    if (e.status == Status::ok) entry["value"] = to_json(e.stored);
    values.push_back(std::move(entry));
  }
  return Json{{"values", std::move(values)}};
}

Json to_json(const Notification& n) {
  Json values = Json::array();
  for (const auto& e : n.values) {
    Json entry{{"id", e.id}, {"status", static_cast<int>(e.status)}, {"ts_ms", e.ts_ms}};
    if (e.status == Status::ok) entry["value"] = to_json(e.value);
    values.push_back(std::move(entry));
  }
  return Json{{"subscription", n.subscription}, {"values", std::move(values)}};
}

}  // namespace pqot::srmcp
