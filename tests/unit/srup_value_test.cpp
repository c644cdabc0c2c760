// SRUP-PQ typed values (docs/srup-pq.md sections 2.6 and 2.7): which alternative a C++ value
// becomes, the exact bytes of every tag, the one NaN, UTF-8 and length limits, every truncation,
// and the text form the `srup` tool reads and writes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "pqot/srup/value.hpp"

namespace pqot::srup {
namespace {

Bytes hex(std::string_view h) {
  return crypto::from_hex(h);
}

Refusal refusal_of(ByteView wire) {
  try {
    (void)decode_value(wire);
  } catch (const Refused& r) {
    return r.reason();
  }
  ADD_FAILURE() << "accepted " << crypto::to_hex(wire);
  return Refusal::malformed;
}

TEST(SrupValue, CxxValuesPickTheAlternativeOfTheirExactType) {
  EXPECT_EQ(type_of(Value("text")), ValueType::string);  // not bool: C++20 P1957
  EXPECT_EQ(type_of(Value(std::string("text"))), ValueType::string);
  EXPECT_EQ(type_of(Value(Bytes{1, 2})), ValueType::bytes);
  EXPECT_EQ(type_of(Value(true)), ValueType::boolean);
  EXPECT_EQ(type_of(Value(5)), ValueType::int32);
  EXPECT_EQ(type_of(Value(5u)), ValueType::uint32);
  EXPECT_EQ(type_of(Value(std::int8_t{5})), ValueType::int8);
  EXPECT_EQ(type_of(Value(std::uint8_t{5})), ValueType::uint8);
  EXPECT_EQ(type_of(Value(std::int16_t{5})), ValueType::int16);
  EXPECT_EQ(type_of(Value(std::int64_t{5})), ValueType::int64);
  EXPECT_EQ(type_of(Value(std::uint64_t{5})), ValueType::uint64);
  EXPECT_EQ(type_of(Value(21.5f)), ValueType::float32);
  EXPECT_EQ(type_of(Value(21.5)), ValueType::float64);
  EXPECT_EQ(type_of(Value()), ValueType::none);
  EXPECT_EQ(type_of(string_value("ab")), ValueType::string);
  EXPECT_EQ(type_of(bytes_value(crypto::as_bytes("ab"))), ValueType::bytes);
  EXPECT_EQ(std::get<Bytes>(bytes_value(crypto::as_bytes("ab"))), (Bytes{'a', 'b'}));
}

TEST(SrupValue, EveryTagHasTheSpecsBytes) {
  const std::vector<std::pair<Value, std::string>> cases = {
      {Value(), "00"},
      {Value(false), "0100"},
      {Value(true), "0101"},
      {Value(std::int8_t{-2}), "02fe"},
      {Value(std::int16_t{-40}), "03ffd8"},
      {Value(std::int32_t{-1}), "04ffffffff"},
      {Value(std::int64_t{0x0102030405060708}), "050102030405060708"},
      {Value(std::uint8_t{0xff}), "06ff"},
      {Value(std::uint16_t{0x1234}), "071234"},
      {Value(std::uint32_t{0xdeadbeef}), "08deadbeef"},
      {Value(std::numeric_limits<std::uint64_t>::max()), "09ffffffffffffffff"},
      {Value(21.5f), "0a41ac0000"},
      {Value(1234567.5), "0b4132d68780000000"},
      {Value(-0.0f), "0a80000000"},
      {Value(std::numeric_limits<float>::infinity()), "0a7f800000"},
      {string_value("é€"), "0c0005c3a9e282ac"},
      {string_value(""), "0c0000"},
      {Value(Bytes{0xde, 0xad}), "0d0002dead"},
  };
  for (const auto& [value, wire] : cases) {
    EXPECT_EQ(crypto::to_hex(encode_value(value)), wire);
    const Value back = decode_value(hex(wire));
    EXPECT_EQ(back.index(), value.index()) << wire;
    EXPECT_EQ(encode_value(back), hex(wire));
  }
}

TEST(SrupValue, EveryNanIsWrittenAsTheOneQuietNanAndNoOtherIsRead) {
  const float minus_nan = -std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(crypto::to_hex(encode_value(Value(minus_nan))), "0a7fc00000");
  EXPECT_EQ(crypto::to_hex(encode_value(Value(std::numeric_limits<double>::signaling_NaN()))),
            "0b7ff8000000000000");
  EXPECT_TRUE(std::isnan(std::get<float>(decode_value(hex("0a7fc00000")))));
  EXPECT_TRUE(std::isnan(std::get<double>(decode_value(hex("0b7ff8000000000000")))));
  for (const char* other : {"0a7fc00001", "0affc00000", "0a7f800001", "0affffffff"}) {
    EXPECT_EQ(refusal_of(hex(other)), Refusal::bad_request) << other;
  }
  for (const char* other : {"0b7ff8000000000001", "0bfff8000000000000", "0b7ff0000000000001"}) {
    EXPECT_EQ(refusal_of(hex(other)), Refusal::bad_request) << other;
  }
}

TEST(SrupValue, BoolIsZeroOrOne) {
  EXPECT_EQ(refusal_of(hex("0102")), Refusal::bad_request);
  EXPECT_EQ(refusal_of(hex("01ff")), Refusal::bad_request);
}

TEST(SrupValue, UnknownTagsAreBadRequest) {
  for (int tag = 0x0e; tag <= 0xff; ++tag) {
    const Bytes wire = {static_cast<std::uint8_t>(tag), 0, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(refusal_of(wire), Refusal::bad_request) << tag;
  }
}

TEST(SrupValue, EveryTruncationAndTrailingByteIsRefused) {
  for (const char* wire : {"0101", "02fe", "03ffd8", "04ffffffff", "050102030405060708", "071234",
                           "0a41ac0000", "0b4132d68780000000", "0c0002c3a9", "0d0002dead"}) {
    const Bytes w = hex(wire);
    for (std::size_t n = 0; n < w.size(); ++n) {
      EXPECT_EQ(refusal_of(ByteView(w).first(n)), Refusal::bad_request) << wire << " " << n;
    }
    Bytes longer = w;
    longer.push_back(0);
    EXPECT_EQ(refusal_of(longer), Refusal::bad_request) << wire;
  }
}

TEST(SrupValue, StringsAndBytesAtTheLimitAndOnePast) {
  for (std::uint8_t tag : {std::uint8_t{0x0c}, std::uint8_t{0x0d}}) {
    Bytes at = {tag, 0x10, 0x00};  // 4,096
    at.resize(3 + kMaxValueBytes, 'a');
    EXPECT_EQ(encode_value(decode_value(at)), at);
    Bytes past = {tag, 0x10, 0x01};
    past.resize(3 + kMaxValueBytes + 1, 'a');
    EXPECT_EQ(refusal_of(past), Refusal::bad_request);
    // a length past the limit is refused before the bytes are looked for
    EXPECT_EQ(refusal_of(Bytes{tag, 0xff, 0xff}), Refusal::bad_request);
  }
  EXPECT_NO_THROW(encode_value(string_value(std::string(kMaxValueBytes, 'a'))));
  EXPECT_THROW(encode_value(string_value(std::string(kMaxValueBytes + 1, 'a'))),
               std::invalid_argument);
  EXPECT_THROW(encode_value(Value(Bytes(kMaxValueBytes + 1))), std::invalid_argument);
}

struct Utf8Case {
  const char* hex;
  bool valid;
  const char* why;
};

TEST(SrupValue, Utf8IsCheckedAsRfc3629) {
  const Utf8Case cases[] = {
      {"", true, "empty"},
      {"41", true, "ASCII"},
      {"00", true, "NUL is a code point"},
      {"c3a9", true, "U+00E9"},
      {"e282ac", true, "U+20AC"},
      {"ed9fbf", true, "U+D7FF, below the surrogates"},
      {"ee8080", true, "U+E000, above the surrogates"},
      {"efbfbf", true, "U+FFFF"},
      {"f0908080", true, "U+10000"},
      {"f48fbfbf", true, "U+10FFFF"},
      {"c080", false, "overlong NUL"},
      {"c1bf", false, "overlong U+007F"},
      {"e08080", false, "overlong 3-byte"},
      {"e09fbf", false, "overlong U+07FF"},
      {"f08fbfbf", false, "overlong U+FFFF"},
      {"eda080", false, "surrogate U+D800"},
      {"edbfbf", false, "surrogate U+DFFF"},
      {"f4908080", false, "U+110000"},
      {"f5808080", false, "lead byte F5"},
      {"ff", false, "FF"},
      {"80", false, "lone continuation"},
      {"c3", false, "truncated 2-byte"},
      {"e282", false, "truncated 3-byte"},
      {"f09080", false, "truncated 4-byte"},
      {"c328", false, "bad continuation"},
      {"e228ac", false, "bad second continuation"},
      {"f09028bc", false, "bad third continuation"},
  };
  for (const auto& c : cases) {
    const Bytes text = hex(c.hex);
    EXPECT_EQ(is_valid_utf8(text), c.valid) << c.why;
    Bytes wire = {0x0c, 0x00, static_cast<std::uint8_t>(text.size())};
    wire.insert(wire.end(), text.begin(), text.end());
    if (c.valid) {
      EXPECT_EQ(encode_value(decode_value(wire)), wire) << c.why;
    } else {
      EXPECT_EQ(refusal_of(wire), Refusal::bad_request) << c.why;
      EXPECT_THROW(encode_value(string_value(std::string(text.begin(), text.end()))),
                   std::invalid_argument)
          << c.why;
      EXPECT_THROW(parse_value("string", std::string(text.begin(), text.end())),
                   std::invalid_argument)
          << c.why;
    }
  }
}

TEST(SrupValue, TextFormReadsBackToTheSameBytes) {
  const std::vector<Value> values = {Value(),
                                     Value(true),
                                     Value(false),
                                     Value(std::int8_t{-128}),
                                     Value(std::int16_t{-40}),
                                     Value(std::numeric_limits<std::int32_t>::min()),
                                     Value(std::numeric_limits<std::int64_t>::min()),
                                     Value(std::uint8_t{255}),
                                     Value(std::uint16_t{65535}),
                                     Value(std::uint32_t{4294967295u}),
                                     Value(std::numeric_limits<std::uint64_t>::max()),
                                     Value(21.5f),
                                     Value(0.1f),
                                     Value(-0.0f),
                                     Value(std::numeric_limits<float>::quiet_NaN()),
                                     Value(-std::numeric_limits<float>::infinity()),
                                     Value(std::numeric_limits<float>::denorm_min()),
                                     Value(0.1),
                                     Value(1e300),
                                     Value(std::numeric_limits<double>::infinity()),
                                     string_value("héllo, wörld"),
                                     string_value(""),
                                     Value(Bytes{0x00, 0xff, 0x10}),
                                     Value(Bytes{})};
  for (const Value& v : values) {
    const std::string text = to_text(v);
    const Value back = parse_value(to_string(type_of(v)), text);
    EXPECT_EQ(back.index(), v.index()) << text;
    EXPECT_EQ(encode_value(back), encode_value(v)) << to_string(type_of(v)) << " " << text;
  }
}

TEST(SrupValue, TextFormExamples) {
  EXPECT_EQ(to_text(Value(21.5f)), "21.5");
  EXPECT_EQ(to_text(Value(0.1f)), "0.1");  // shortest text of the float, not of the double
  EXPECT_EQ(to_text(Value(std::int8_t{-128})), "-128");
  EXPECT_EQ(to_text(Value(std::uint8_t{200})), "200");  // a number, not a character
  EXPECT_EQ(to_text(Value(std::numeric_limits<double>::quiet_NaN())), "nan");
  EXPECT_EQ(to_text(Value(-std::numeric_limits<double>::infinity())), "-inf");
  EXPECT_EQ(to_text(Value(Bytes{0xde, 0xad})), "dead");
  EXPECT_EQ(to_text(Value(true)), "true");
  EXPECT_EQ(to_text(Value()), "");
  EXPECT_EQ(std::get<float>(parse_value("float32", "21.5")), 21.5f);
  EXPECT_EQ(std::get<std::int16_t>(parse_value("int16", "-40")), -40);
  EXPECT_EQ(std::get<bool>(parse_value("bool", "1")), true);
  EXPECT_EQ(std::get<Bytes>(parse_value("bytes", "DEAD")), (Bytes{0xde, 0xad}));
}

TEST(SrupValue, ParseValueRefusesWhatDoesNotFit) {
  const std::pair<const char*, const char*> bad[] = {
      {"int8", "128"},     {"int8", "-129"},
      {"uint8", "-1"},     {"uint8", "256"},
      {"int32", "1.5"},    {"int32", ""},
      {"int32", " 1"},     {"int32", "1 "},
      {"int32", "+1"},     {"uint64", "18446744073709551616"},
      {"float32", "1e40"}, {"float32", "abc"},
      {"float64", ""},     {"bool", "yes"},
      {"bytes", "abc"},    {"bytes", "zz"},
      {"none", "x"},       {"float", "1"},
      {"Int8", "1"},
  };
  for (const auto& [type, text] : bad) {
    EXPECT_THROW(parse_value(type, text), std::invalid_argument) << type << " '" << text << "'";
  }
  EXPECT_THROW(parse_value("string", std::string(kMaxValueBytes + 1, 'a')), std::invalid_argument);
  EXPECT_THROW(parse_value("bytes", std::string(2 * kMaxValueBytes + 2, 'a')),
               std::invalid_argument);
  EXPECT_NO_THROW(parse_value("bytes", std::string(2 * kMaxValueBytes, 'a')));
}

TEST(SrupValue, TypeNamesAreTheTagOrder) {
  for (std::uint8_t tag = 0; tag <= 0x0d; ++tag) {
    const auto t = static_cast<ValueType>(tag);
    EXPECT_EQ(value_type_by_name(to_string(t)), t);
  }
  EXPECT_EQ(to_string(ValueType::float32), "float32");
  EXPECT_EQ(to_string(ValueType::boolean), "bool");
  EXPECT_FALSE(value_type_by_name("unknown"));
}

}  // namespace
}  // namespace pqot::srup
