// SRMCP compact bodies (docs/srmcp.md §9.2) and the hello's version negotiation records (§4):
// the documented bytes, round trips through the node store, the same content as the JSON bodies,
// and every malformation answered as §9.2 says.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "pqot/srmcp/compact.hpp"
#include "pqot/srmcp/json_text.hpp"
#include "pqot/srmcp/node.hpp"

namespace pqot::srmcp::compact_tests {
namespace {

using Bytes8 = std::vector<std::uint8_t>;

std::string hex(std::string_view s) {
  return crypto::to_hex(crypto::as_bytes(s));
}
std::string from_hex(std::string_view h) {
  const Bytes b = crypto::from_hex(h);
  return std::string(b.begin(), b.end());
}
ByteView view(const std::string& s) {
  return crypto::as_bytes(s);
}

Status status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.action(), Action::reply);
    return e.status();
  }
  return Status::ok;
}

const Principal kAnyone{"client", {}};
constexpr std::int64_t kTs = 1'700'000'000'000;

// Nodes of every type; "fixed" reads at a known time (the documented vector).
NodeStore& store() {
  static NodeStore* s = [] {
    auto* n = new NodeStore();
    NodeSpec fixed;
    fixed.id = "a";
    fixed.type = ValueType::int64;
    fixed.read = [] {
      return ReadResult{Status::ok, Json(21),
                        std::chrono::system_clock::time_point(std::chrono::milliseconds(kTs))};
    };
    n->add(fixed);
    NodeSpec folder;
    folder.id = "f";
    n->add(folder);
    for (auto [id, type, init] : {std::tuple{"d", ValueType::float64, Json(1.5)},
                                  {"i", ValueType::int64, Json(-7)},
                                  {"s", ValueType::string, Json("Zähler")},
                                  {"b", ValueType::boolean, Json(true)},
                                  {"j", ValueType::json, Json{{"k", Json::array({1, 2})}}}}) {
      NodeSpec spec;
      spec.id = id;
      spec.type = type;
      spec.initial = init;
      spec.writers = {"*"};
      n->add(spec);
    }
    NodeSpec hidden;
    hidden.id = "secret";
    hidden.type = ValueType::int64;
    hidden.readers = {"nobody"};
    hidden.writers = {"nobody"};
    n->add(hidden);
    return n;
  }();
  return *s;
}

std::string read_compact(const std::vector<std::string>& ids) {
  std::string out;
  EXPECT_TRUE(
      store().read_body(ids, kAnyone, BodyEncoding::compact, out, [](std::string) { FAIL(); }));
  return out;
}

TEST(SrmcpCompact, TheDocumentedReadVector_S9_2) {
  std::string request;
  compact::encode_read_request(std::vector<std::string>{"a", "bb"}, request);
  EXPECT_EQ(hex(request), "00020161026262");
  EXPECT_EQ(compact::decode_read_request(view(request), Limits{}, 1).ids,
            (std::vector<std::string>{"a", "bb"}));
  // The unknown id's entry carries the time of the attempt: all but those 8 bytes are fixed.
  const std::string response = hex(read_compact({"a", "bb"}));
  ASSERT_EQ(response.size(), 64u);
  EXPECT_EQ(response.substr(0, 48),
            "0002"
            "000002"
            "0000018bcfe56800"
            "0000000000000015"
            "000200");
}

TEST(SrmcpCompact, EveryTypeRoundTripsAndSaysWhatTheJsonBodySays_S9_2) {
  const std::vector<std::string> ids{"d", "i", "s", "b", "j", "f", "nope", "secret"};
  const std::string body = read_compact(ids);
  const auto entries = compact::decode_read_response(view(body), ids, Limits{});
  ASSERT_EQ(entries.size(), ids.size());
  EXPECT_EQ(std::get<double>(entries[0].value), 1.5);
  EXPECT_EQ(std::get<std::int64_t>(entries[1].value), -7);
  EXPECT_EQ(std::get<std::string>(entries[2].value), "Zähler");
  EXPECT_EQ(std::get<bool>(entries[3].value), true);
  EXPECT_EQ(std::get<Json>(entries[4].value), (Json{{"k", Json::array({1, 2})}}));
  EXPECT_EQ(entries[5].status, Status::not_readable);
  EXPECT_EQ(entries[5].type, ValueType::folder);
  EXPECT_EQ(entries[6].status, Status::unknown_node);
  EXPECT_FALSE(entries[6].type.has_value());
  EXPECT_EQ(entries[7].status, Status::unknown_node)
      << "a node the caller may not see is not revealed";

  // The JSON body of the same READ, parsed, equals the compact one's JSON form.
  std::string text;
  ASSERT_TRUE(
      store().read_body(ids, kAnyone, BodyEncoding::json, text, [](std::string) { FAIL(); }));
  Json from_json_body = Json::parse(text);
  Json from_compact = to_json(entries);
  ASSERT_EQ(from_json_body["values"].size(), from_compact["values"].size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    // Memory nodes are stamped at each read: compare everything but the time.
    from_json_body["values"][i].erase("ts_ms");
    from_compact["values"][i].erase("ts_ms");
  }
  EXPECT_EQ(from_json_body, from_compact);
}

TEST(SrmcpCompact, WritesAreTypedAndTheNodeTypeDecides_S9_2) {
  const std::vector<std::pair<std::string, Value>> values{{"d", std::int64_t{21}}, {"i", 2.5},
                                                          {"s", std::string("x")}, {"b", false},
                                                          {"j", Json::array({3})}, {"f", true}};
  std::string request;
  compact::encode_write_request(values, request);
  const WriteRequest decoded = compact::decode_write_request(view(request), Limits{}, 1);
  ASSERT_EQ(decoded.values.size(), values.size());
  std::string body;
  ASSERT_TRUE(store().write_body(decoded.values, kAnyone, BodyEncoding::compact, body,
                                 [](std::string) { FAIL(); }));
  std::vector<std::string> ids;
  for (const auto& v : values) ids.push_back(v.first);
  const auto out = compact::decode_write_response(view(body), ids, Limits{});
  ASSERT_EQ(out.size(), values.size());
  EXPECT_EQ(std::get<double>(out[0].stored), 21.0)
      << "an int64 written to a double node is stored as a double";
  EXPECT_EQ(out[1].status, Status::type_mismatch);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(out[1].stored));
  EXPECT_EQ(std::get<std::string>(out[2].stored), "x");
  EXPECT_EQ(std::get<bool>(out[3].stored), false);
  EXPECT_EQ(std::get<Json>(out[4].stored), Json::array({3}));
  EXPECT_EQ(out[5].status, Status::not_writable);
  // A NaN has no JSON form and no node takes it.
  std::string nan;
  compact::encode_write_request(std::vector<std::pair<std::string, Value>>{{"d", std::nan("")}},
                                nan);
  std::string nan_body;
  ASSERT_TRUE(store().write_body(compact::decode_write_request(view(nan), Limits{}, 1).values,
                                 kAnyone, BodyEncoding::compact, nan_body,
                                 [](std::string) { FAIL(); }));
  EXPECT_EQ(
      compact::decode_write_response(view(nan_body), std::vector<std::string>{"d"}, Limits{})[0]
          .status,
      Status::type_mismatch);
}

TEST(SrmcpCompact, MalformedRequestsAreBadRequestsAndTooManyIdsTooLarge_S9_2_S12) {
  const Limits limits;
  const auto read = [&](const std::string& h) {
    return status_of([&] { compact::decode_read_request(view(from_hex(h)), limits, 1); });
  };
  const auto write = [&](const std::string& h) {
    return status_of([&] { compact::decode_write_request(view(from_hex(h)), limits, 1); });
  };
  EXPECT_EQ(read("00020161026262"), Status::ok);
  EXPECT_EQ(read(""), Status::bad_request) << "empty";
  EXPECT_EQ(read("0000"), Status::bad_request) << "no id";
  EXPECT_EQ(read("000201610262"), Status::bad_request) << "truncated id";
  EXPECT_EQ(read("0001016100"), Status::bad_request) << "trailing byte";
  EXPECT_EQ(read("000100"), Status::bad_request) << "empty id";
  EXPECT_EQ(read("00ff0161"), Status::bad_request)
      << "count past the body, checked before reserving";
  EXPECT_EQ(read("ffff0161"), Status::too_large) << "count over max_nodes_per_request";
  std::string many = "0101";  // 257 ids of "a", one over the default limit of 256
  for (int i = 0; i < 257; ++i) many += "0161";
  EXPECT_EQ(read(many), Status::too_large);
  EXPECT_EQ(write("000101620101"), Status::ok) << "b := true";
  EXPECT_EQ(write("000101620102"), Status::bad_request) << "a bool of 2";
  EXPECT_EQ(write("000101620701"), Status::bad_request) << "unknown type octet";
  EXPECT_EQ(write("000101620601"), Status::bad_request) << "a folder value";
  EXPECT_EQ(write("0001016200"), Status::bad_request) << "no type octet";
  EXPECT_EQ(write("0001017304000000028080"), Status::bad_request) << "invalid UTF-8";
  EXPECT_EQ(write("000101730400000005"), Status::bad_request) << "text length past the body";
  EXPECT_EQ(write("000101730400000002c3a4"), Status::ok) << "ä";
  EXPECT_EQ(write("0001016a05000000027b7d"), Status::ok) << "{}";
  EXPECT_EQ(write("0001016a05000000017b"), Status::bad_request) << "bad JSON text";
  std::string deep(40, '[');
  deep += std::string(40, ']');
  char len[9];
  std::snprintf(len, sizeof len, "%08x", static_cast<unsigned>(deep.size()));
  EXPECT_EQ(write("0001016a05" + std::string(len) + hex(deep)), Status::bad_request)
      << "JSON nested over the limit";
  // A json value is no deeper than a JSON body could carry it (32 - 3 for
  // {"values":[{"value":...}]}).
  const auto json_of_depth = [&](int d) {
    const std::string v = std::string(static_cast<std::size_t>(d), '[') +
                          std::string(static_cast<std::size_t>(d), ']');
    std::snprintf(len, sizeof len, "%08x", static_cast<unsigned>(v.size()));
    return write("0001016a05" + std::string(len) + hex(v));
  };
  EXPECT_EQ(json_of_depth(29), Status::ok);
  EXPECT_EQ(json_of_depth(30), Status::bad_request) << "readable by JSON sessions no more";
  EXPECT_EQ(write("0001016a050000000474727565"), Status::bad_request)
      << "json type octet with a scalar (true)";
  // A string is no larger, once written as JSON, than a JSON body could carry: control bytes
  // count six each.
  Limits small;
  small.max_message = 1024;
  const auto string_write = [&](const std::string& v) {
    std::snprintf(len, sizeof len, "%08x", static_cast<unsigned>(v.size()));
    return status_of([&] {
      compact::decode_write_request(view(from_hex("0001017304" + std::string(len) + hex(v))), small,
                                    1);
    });
  };
  EXPECT_EQ(string_write(std::string(700, 'x')), Status::ok);
  EXPECT_EQ(string_write(std::string(200, '\x01')), Status::too_large) << "1,200 bytes as JSON";
}

TEST(SrmcpCompact, AClientRefusesMalformedResponses_S9_2) {
  const Limits limits;
  const std::vector<std::string> one{"x"};
  const auto read = [&](const std::string& h) {
    return status_of([&] { compact::decode_read_response(view(from_hex(h)), one, limits); });
  };
  EXPECT_EQ(read("0001"
                 "000002"
                 "0000000000000001"
                 "0000000000000005"),
            Status::ok);
  EXPECT_EQ(read("0002"
                 "000200"
                 "0000000000000001"
                 "000200"
                 "0000000000000001"),
            Status::bad_request)
      << "two entries for one id";
  EXPECT_EQ(read("0001"
                 "000000"
                 "0000000000000001"),
            Status::bad_request)
      << "OK without a type";
  EXPECT_EQ(read("0001"
                 "000006"
                 "0000000000000001"),
            Status::bad_request)
      << "OK folder";
  EXPECT_EQ(read("0001"
                 "000009"
                 "0000000000000001"),
            Status::bad_request)
      << "unknown type octet";
  EXPECT_EQ(read("0001"
                 "000002"
                 "0000000000000001"
                 "00000000000000"),
            Status::bad_request)
      << "short int64";
  EXPECT_EQ(read("0001"
                 "000200"
                 "0000000000000001"
                 "00"),
            Status::bad_request)
      << "a value after a failure";
  EXPECT_EQ(read("0001"
                 "0063"
                 "00"
                 "0000000000000001"),
            Status::ok)
      << "a status this version lacks is kept";
  EXPECT_EQ(
      status_of([&] { compact::decode_write_response(view(from_hex("0001000000")), one, limits); }),
      Status::bad_request)
      << "OK write without a value of a type";
  EXPECT_EQ(status_of([&] {
              compact::decode_notification(view(from_hex("0000000000000001"
                                                         "0001"
                                                         "00")),
                                           limits);
            }),
            Status::bad_request)
      << "notification entry with an empty id";
  EXPECT_EQ(status_of([&] {
              compact::decode_notification(view(from_hex("0000000000000001"
                                                         "0001"
                                                         "0178"
                                                         "000f"
                                                         "02"
                                                         "0000000000000001")),
                                           limits);
            }),
            Status::bad_request)
      << "a failed notification entry with a type";
}

TEST(SrmcpCompact, NotificationsCarryIdsAndTheValuesType_S9_2) {
  std::string body;
  compact::begin_notification(body, 7, 3);
  compact::append_notification_entry(body, "d", Status::ok, 5, Json(2.0));
  compact::append_notification_entry(body, "i", Status::ok, 6, Json(std::uint64_t{3}));
  compact::append_notification_entry(body, "m", Status::backend_error, 7, nullptr);
  const Notification n = compact::decode_notification(view(body), Limits{});
  EXPECT_EQ(n.subscription, 7u);
  ASSERT_EQ(n.values.size(), 3u);
  EXPECT_EQ(n.values[0].id, "d");
  EXPECT_EQ(std::get<double>(n.values[0].value), 2.0);
  EXPECT_EQ(std::get<std::int64_t>(n.values[1].value), 3);
  EXPECT_EQ(n.values[2].status, Status::backend_error);
  EXPECT_EQ(n.values[2].ts_ms, 7);
  EXPECT_EQ(to_json(n),
            Json::parse(
                R"({"subscription":7,"values":[{"id":"d","status":0,"ts_ms":5,"value":2.0},)"
                R"({"id":"i","status":0,"ts_ms":6,"value":3},{"id":"m","status":15,"ts_ms":7}]})"));
}

TEST(SrmcpCompact, ValuesFromJsonKeepTheirKinds) {
  EXPECT_EQ(std::get<std::int64_t>(from_json(Json(5))), 5);
  EXPECT_EQ(std::get<std::int64_t>(from_json(Json(-5))), -5);
  EXPECT_EQ(std::get<double>(from_json(Json(5.0))), 5.0);
  EXPECT_EQ(std::get<double>(from_json(Json(std::uint64_t{1} << 63))), 9223372036854775808.0);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(from_json(Json())));
  EXPECT_EQ(to_json(Value{std::string("x")}), Json("x"));
  std::string out;
  EXPECT_THROW(compact::encode_read_request(std::vector<std::string>{}, out),
               std::invalid_argument);
  EXPECT_THROW(compact::encode_read_request(std::vector<std::string>{std::string(256, 'a')}, out),
               std::invalid_argument);
  EXPECT_THROW(compact::encode_write_request(
                   std::vector<std::pair<std::string, Value>>{{"a", std::monostate{}}}, out),
               std::invalid_argument);
}

TEST(SrmcpCompact, HelloRefusedAndTheVersionOctets_S4) {
  HelloRefused r;
  r.reason = HelloRefused::Reason::no_common_version;
  r.versions = {3};
  r.kems = {KemId::ml_kem_768, KemId::x_wing};
  const Bytes b = encode(r);
  EXPECT_EQ(crypto::to_hex(b),
            "010103020001"
            "0003");
  const HelloRefused back = parse_hello_refused(b);
  EXPECT_EQ(back.versions, r.versions);
  EXPECT_EQ(back.kems, r.kems);
  for (const char* bad : {"", "03010302000100", "0100020001", "01010300", "0101030200010003ff"}) {
    const Bytes x = crypto::from_hex(bad);
    EXPECT_THROW(parse_hello_refused(x), ProtocolError) << bad;
  }
  EXPECT_EQ(encoding_of_version(2), BodyEncoding::json);
  EXPECT_EQ(encoding_of_version(3), BodyEncoding::compact);
  EXPECT_FALSE(encoding_of_version(4).has_value());
  EXPECT_TRUE(has_compact_body(BodyEncoding::compact, MessageType::notification));
  EXPECT_FALSE(has_compact_body(BodyEncoding::compact, MessageType::error));
  EXPECT_FALSE(has_compact_body(BodyEncoding::json, MessageType::read));
}

}  // namespace
}  // namespace pqot::srmcp::compact_tests
