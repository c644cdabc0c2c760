// SRUP-PQ typed values (docs/srup-pq.md, section 2.6; layouts in 2.7): a tag byte and its content.
// Carried by Action arguments, Data values and telemetry readings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "pqot/common/byte_io.hpp"
#include "pqot/crypto/bytes.hpp"
#include "pqot/srup/refusal.hpp"

namespace pqot::srup {

using crypto::Bytes;
using crypto::ByteView;

/// The wire tags of section 2.6; the variant index of Value equals the tag.
enum class ValueType : std::uint8_t {
  none = 0x00,
  boolean = 0x01,
  int8 = 0x02,
  int16 = 0x03,
  int32 = 0x04,
  int64 = 0x05,
  uint8 = 0x06,
  uint16 = 0x07,
  uint32 = 0x08,
  uint64 = 0x09,
  float32 = 0x0A,
  float64 = 0x0B,
  string = 0x0C,
  bytes = 0x0D,
};

/// Alternatives in tag order. Construction from a C++ value picks the alternative of exactly that
/// type (std::int16_t{5} -> int16, 5 -> int32, 21.5f -> float32, std::string -> string,
/// Bytes -> bytes); a string literal becomes a string (not a bool) and a plain `char` does not
/// compile. When in doubt use the named constructors below (tests/unit/srup_value_test.cpp pins
/// down which alternative each literal gives).
using Value = std::variant<std::monostate, bool, std::int8_t, std::int16_t, std::int32_t,
                           std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t, std::uint64_t,
                           float, double, std::string, Bytes>;

/// Longest string or bytes content (section 2.3).
inline constexpr std::size_t kMaxValueBytes = 4096;

inline Value string_value(std::string_view text) {
  return Value(std::in_place_index<12>, text);
}
inline Value bytes_value(ByteView bytes) {
  return Value(std::in_place_index<13>, bytes.begin(), bytes.end());
}

ValueType type_of(const Value& v) noexcept;
/// "none", "bool", "int8" .. "uint64", "float32", "float64", "string", "bytes".
std::string_view to_string(ValueType t) noexcept;
std::optional<ValueType> value_type_by_name(std::string_view name) noexcept;

/// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates (U+D800-DFFF), nothing above
/// U+10FFFF, no truncated sequence.
bool is_valid_utf8(ByteView text) noexcept;
inline bool is_valid_utf8(std::string_view text) noexcept {
  return is_valid_utf8(crypto::as_bytes(text));
}

/// Appends tag and content. Every NaN is written as the quiet NaN 7fc00000 / 7ff8000000000000
/// (one spelling per value). Throws std::invalid_argument for a string or bytes over 4,096 bytes
/// or a string that is not valid UTF-8 (a sender bug).
void encode_value(common::ByteWriter& out, const Value& v);
/// Reads one value. Throws Refused{bad_request} for an unknown tag, a bool other than 0 or 1, a
/// NaN other than the quiet NaN above, an over-long or truncated content, or invalid UTF-8.
Value decode_value(common::ByteReader& in);

/// Whole-buffer forms: the value's bytes, and a value that must use every byte of `wire`.
Bytes encode_value(const Value& v);
Value decode_value(ByteView wire);

/// The text form (the `srup` tool, JSON output): none "", bool "true"/"false", integers in
/// decimal, floats the shortest decimal that reads back to the same value ("nan", "inf", "-inf"),
/// strings as they are (raw UTF-8, not escaped: the caller escapes for its output), bytes in
/// lower-case hex. parse_value(to_string(type_of(v)), to_text(v)) == v for every valid v.
std::string to_text(const Value& v);

/// The value of type `type_name` (section 2.6 names as above) written as `text` in the form
/// to_text writes (bool also "1"/"0"). Throws std::invalid_argument naming what is wrong: an
/// unknown type, a number that does not parse or does not fit, a string that is not valid UTF-8,
/// content over 4,096 bytes, bad hex, text given for none.
Value parse_value(std::string_view type_name, std::string_view text);

}  // namespace pqot::srup
