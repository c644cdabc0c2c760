// SRMCP v2 request bodies (docs/srmcp.md §9) and their limits (§12).
#include <gtest/gtest.h>

#include <functional>

#include "pqot/srmcp/requests.hpp"

namespace pqot::srmcp {
namespace {

Status status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ProtocolError& e) {
    EXPECT_EQ(e.action(), Action::reply);
    EXPECT_EQ(e.tid(), 9u);
    return e.status();
  }
  return Status::ok;
}

ByteView bytes(const std::string& text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

Json body(const std::string& text) { return parse_json_body(bytes(text), Limits{}, 9); }

TEST(SrmcpRequests, JsonBodyLimits_S12) {
  EXPECT_EQ(status_of([] { body("{not json"); }), Status::bad_request);
  std::string deep(40, '[');
  deep += std::string(40, ']');
  EXPECT_EQ(status_of([&] { body(deep); }), Status::bad_request) << "nesting over 32";
  // The limit exactly (§12: 32 nested arrays and objects, the outer object included); brackets
  // inside strings do not count.
  const std::string at_limit = "{\"a\":" + std::string(31, '[') + "\"[[[{{{\"" + std::string(31, ']') + "}";
  EXPECT_NO_THROW(body(at_limit));
  const std::string over = "{\"a\":" + std::string(32, '[') + std::string(32, ']') + "}";
  EXPECT_EQ(status_of([&] { body(over); }), Status::bad_request) << "33 deep";
  // An escaped quote does not end a string: the brackets after it are still inside it.
  const std::string escaped = "{\"a\":\"\\\"" + std::string(40, '[') + "\"}";
  EXPECT_NO_THROW(body(escaped));
  Limits small;
  small.max_message = 10;
  EXPECT_EQ(status_of([&] { parse_json_body(bytes("{\"ids\":[\"abc\"]}"), small, 9); }), Status::too_large);
  EXPECT_TRUE(body("{\"a\":1}").is_object());
}

TEST(SrmcpRequests, ReadSchemaAndLimit_S9) {
  Limits limits;
  limits.max_nodes_per_request = 2;
  EXPECT_EQ(decode_read(body("{\"ids\":[\"a\",\"b\"]}"), limits, 9).ids.size(), 2u);
  EXPECT_EQ(status_of([&] { decode_read(body("{\"ids\":[\"a\",\"b\",\"c\"]}"), limits, 9); }),
            Status::too_large);
  EXPECT_EQ(status_of([&] { decode_read(body("{\"ids\":[]}"), limits, 9); }), Status::bad_request);
  EXPECT_EQ(status_of([&] { decode_read(body("{\"ids\":[1]}"), limits, 9); }), Status::bad_request);
  EXPECT_EQ(status_of([&] { decode_read(body("{\"id\":\"a\"}"), limits, 9); }), Status::bad_request);
}

TEST(SrmcpRequests, WriteSchema_S9) {
  const auto w = decode_write(body("{\"values\":[{\"id\":\"a\",\"value\":{\"x\":1}}]}"), Limits{}, 9);
  ASSERT_EQ(w.values.size(), 1u);
  EXPECT_EQ(w.values[0].second["x"], 1);
  EXPECT_EQ(status_of([] { decode_write(body("{\"values\":[{\"id\":\"a\"}]}"), Limits{}, 9); }),
            Status::bad_request);
  EXPECT_EQ(status_of([] { decode_write(body("{\"values\":[\"a\"]}"), Limits{}, 9); }), Status::bad_request);
}

TEST(SrmcpRequests, BrowseSubscribeUnsubscribeLinkClose_S9) {
  const auto b = decode_browse(body("{\"root\":\"x\",\"depth\":2}"), 9);
  EXPECT_EQ(b.root, "x");
  EXPECT_EQ(b.depth, 2);
  EXPECT_EQ(decode_browse(body("{}"), 9).depth, -1);
  EXPECT_EQ(status_of([] { decode_browse(body("{\"depth\":\"deep\"}"), 9); }), Status::bad_request);
  EXPECT_EQ(decode_subscribe(body("{\"ids\":[\"a\"],\"interval_ms\":100}"), Limits{}, 9).interval_ms, 100u);
  EXPECT_EQ(status_of([] { decode_subscribe(body("{\"ids\":[\"a\"],\"interval_ms\":5}"), Limits{}, 9); }),
            Status::bad_request);
  EXPECT_EQ(decode_unsubscribe(body("{\"subscription\":7}"), 9), 7u);
  EXPECT_EQ(status_of([] { decode_unsubscribe(body("{\"subscription\":-1}"), 9); }), Status::bad_request);
  EXPECT_EQ(decode_link_close(body("{\"link_id\":3}"), 9), 3u);
  EXPECT_EQ(status_of([] { decode_link_close(body("{\"link_id\":4294967295}"), 9); }), Status::bad_request);
}

}  // namespace
}  // namespace pqot::srmcp
