// The fast JSON writer of message bodies (include/pqot/srmcp/json_text.hpp).
#include "pqot/srmcp/json_text.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace pqot::srmcp {
namespace {

using Json = nlohmann::json;

TEST(JsonText, MatchesDumpForTypicalBodies) {
  const Json bodies[] = {
      Json::object(),
      Json::array(),
      Json{{"ids", {"plant.t0", "plant.t1"}}},
      Json{{"values", {{{"id", "a"}, {"value", 42}, {"type", "int64"}, {"ts_ms", 1764450000123}, {"status", 0}}}}},
      Json{{"message", "quote \" backslash \\ tab \t newline \n control \x01 \x1f end"}},
      Json{{"n", nullptr}, {"t", true}, {"f", false}, {"u", 18446744073709551615ull}, {"i", -9223372036854775807ll}},
      Json{{"unicode", "Temperatur \xc2\xb0" "C, \xe6\xb8\xa9\xe5\xba\xa6, \xf0\x9f\x94\xa5"}},
      Json{{"nested", {{"a", {1, 2, {{"b", {}}}}}}}},
  };
  for (const Json& b : bodies) EXPECT_EQ(to_json_text(b), b.dump()) << b.dump();
}

TEST(JsonText, AppendJsonStringEscapesLikeDump) {
  for (const std::string s : {"plant.t0", "quote \" backslash \\ tab \t control \x01", "Temperatur \xc2\xb0" "C", ""}) {
    std::string out = "[";
    append_json_string(out, s);
    std::string expected = "[";  // (not "[" + ...: GCC 12 warns falsely, -Wrestrict)
    expected += Json(s).dump();
    EXPECT_EQ(out, expected) << s;
  }
}

TEST(JsonText, DoublesStayDoublesAndRoundTripExactly) {
  for (double d : {0.0, -0.0, 1.0, 20.0, 0.1, 1.0 / 3.0, 1e300, -2.5e-300, 123456789012345678.0,
                   std::numeric_limits<double>::min(), std::numeric_limits<double>::max(),
                   std::numeric_limits<double>::denorm_min()}) {
    const Json back = Json::parse(to_json_text(Json(d)));
    ASSERT_TRUE(back.is_number_float()) << to_json_text(Json(d));
    EXPECT_EQ(back.get<double>(), d) << to_json_text(Json(d));
  }
}

TEST(JsonText, NonFiniteDoublesBecomeNullLikeDump) {
  for (double d : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(to_json_text(Json(d)), "null");
    EXPECT_EQ(Json(d).dump(), "null");
  }
}

TEST(JsonText, InvalidUtf8IsRefusedLikeDump) {
  const Json bad = Json{{"s", std::string("\xff\xfe", 2)}};
  EXPECT_THROW(to_json_text(bad), Json::type_error);
  EXPECT_THROW((void)bad.dump(), Json::type_error);
}

// Random trees of every type: the text parses back to an equal value.
Json random_value(std::mt19937_64& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 3 ? 6 : 8));
  switch (kind) {
    case 0: return nullptr;
    case 1: return rng() % 2 == 0;
    case 2: return static_cast<std::int64_t>(rng());
    case 3: return static_cast<std::uint64_t>(rng());
    case 4: return std::ldexp(static_cast<double>(static_cast<std::int64_t>(rng())), static_cast<int>(rng() % 200) - 100);
    case 5: {
      std::string s;
      const std::size_t n = rng() % 24;
      for (std::size_t i = 0; i < n; ++i) s += static_cast<char>(rng() % 0x80);  // every ASCII byte
      return s;
    }
    case 6: {
      Json a = Json::array();
      for (std::size_t i = rng() % 5; i > 0; --i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (std::size_t i = rng() % 5; i > 0; --i) o["k" + std::to_string(rng() % 100)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonText, RandomTreesRoundTrip) {
  std::mt19937_64 rng(20261129);
  for (int i = 0; i < 2000; ++i) {
    const Json v = random_value(rng, 0);
    const std::string text = to_json_text(v);
    EXPECT_EQ(Json::parse(text), v) << text;
  }
}

}  // namespace
}  // namespace pqot::srmcp
