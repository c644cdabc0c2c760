// docs/srup-pq.md sections 2.6 and 2.7: typed values on the wire and as text.
#include "pqot/srup/value.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "pqot/crypto/error.hpp"

namespace pqot::srup {

namespace {

// Tag order of section 2.6 is the variant order: type_of() is the index.
static_assert(std::variant_size_v<Value> == 14);
static_assert(std::is_same_v<std::variant_alternative_t<12, Value>, std::string>);
static_assert(std::is_same_v<std::variant_alternative_t<13, Value>, Bytes>);

constexpr std::array<std::string_view, 14> kValueTypeNames = {
    "none",   "bool",   "int8",   "int16",   "int32",   "int64",  "uint8",
    "uint16", "uint32", "uint64", "float32", "float64", "string", "bytes"};

// The one NaN each width carries (section 2.7): x86 makes 0/0 the negative NaN, so the encoder
// writes every NaN as this one and the decoder accepts no other.
constexpr std::uint32_t kNan32 = 0x7fc00000;
constexpr std::uint64_t kNan64 = 0x7ff8000000000000;

[[noreturn]] void bad_value(const std::string& what) {
  throw Refused(Refusal::bad_request, "typed value: " + what);
}

ByteView value_take(common::ByteReader& in, std::size_t n, const char* what) {
  if (n > in.remaining()) bad_value(std::string(what) + " runs past the end");
  return in.bytes(n);
}

std::uint64_t value_be(common::ByteReader& in, std::size_t n, const char* what) {
  std::uint64_t v = 0;
  for (std::uint8_t b : value_take(in, n, what)) v = v << 8 | b;
  return v;
}

void value_put(common::ByteWriter& out, std::uint64_t v, std::size_t n) {
  for (std::size_t i = n; i-- > 0;) out.u8(static_cast<std::uint8_t>(v >> (8 * i)));
}

template <class T>
Value decode_integer(common::ByteReader& in) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(value_be(in, sizeof(T), "integer")));
}

ByteView decode_counted(common::ByteReader& in, const char* what) {
  const std::size_t n = value_be(in, 2, what);
  if (n > kMaxValueBytes) bad_value(std::string(what) + " longer than 4,096 bytes");
  return value_take(in, n, what);
}

void encode_counted(common::ByteWriter& out, ByteView content, const char* what) {
  if (content.size() > kMaxValueBytes) {
    throw std::invalid_argument(std::string("SRUP-PQ: ") + what + " longer than 4,096 bytes");
  }
  out.u16(static_cast<std::uint16_t>(content.size()));
  out.bytes(content);
}

template <class T>
std::string float_text(T f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), f);
  return std::string(buf.data(), end);
}

template <class T>
Value parse_number(std::string_view text, std::string_view type_name) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw std::invalid_argument("not a valid " + std::string(type_name) + ": '" +
                                std::string(text) + "'");
  }
  return v;
}

}  // namespace

ValueType type_of(const Value& v) noexcept {
  return static_cast<ValueType>(v.index());
}

std::string_view to_string(ValueType t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < kValueTypeNames.size() ? kValueTypeNames[i] : "unknown";
}

std::optional<ValueType> value_type_by_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kValueTypeNames.size(); ++i) {
    if (kValueTypeNames[i] == name) return static_cast<ValueType>(i);
  }
  return std::nullopt;
}

bool is_valid_utf8(ByteView text) noexcept {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::uint8_t b = text[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    // RFC 3629 section 4: the lead byte fixes the length and the range of the first continuation
    // byte, which excludes overlong forms, surrogates and code points above U+10FFFF.
    std::size_t n = 0;
    std::uint8_t lo = 0x80;
    std::uint8_t hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) {
      n = 1;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      if (b == 0xe0) lo = 0xa0;
      if (b == 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      if (b == 0xf0) lo = 0x90;
      if (b == 0xf4) hi = 0x8f;
    } else {
      return false;  // a continuation byte, C0/C1 (overlong) or F5-FF
    }
    if (text.size() - i - 1 < n) return false;
    if (text[i + 1] < lo || text[i + 1] > hi) return false;
    for (std::size_t k = 2; k <= n; ++k) {
      if ((text[i + k] & 0xc0) != 0x80) return false;
    }
    i += n + 1;
  }
  return true;
}

void encode_value(common::ByteWriter& out, const Value& v) {
  if (v.valueless_by_exception()) throw std::invalid_argument("SRUP-PQ: valueless typed value");
  out.u8(static_cast<std::uint8_t>(v.index()));
  std::visit(
      [&out](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          // the tag alone
        } else if constexpr (std::is_same_v<T, bool>) {
          out.u8(x ? 1 : 0);
        } else if constexpr (std::is_integral_v<T>) {
          value_put(out, static_cast<std::make_unsigned_t<T>>(x), sizeof(T));
        } else if constexpr (std::is_same_v<T, float>) {
          out.u32(std::isnan(x) ? kNan32 : std::bit_cast<std::uint32_t>(x));
        } else if constexpr (std::is_same_v<T, double>) {
          out.u64(std::isnan(x) ? kNan64 : std::bit_cast<std::uint64_t>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          if (!is_valid_utf8(x)) throw std::invalid_argument("SRUP-PQ: string is not valid UTF-8");
          encode_counted(out, crypto::as_bytes(x), "string");
        } else {
          encode_counted(out, x, "bytes");
        }
      },
      v);
}

Value decode_value(common::ByteReader& in) {
  const std::uint8_t tag = static_cast<std::uint8_t>(value_be(in, 1, "tag"));
  switch (static_cast<ValueType>(tag)) {
    case ValueType::none:
      return std::monostate{};
    case ValueType::boolean: {
      const auto b = value_be(in, 1, "bool");
      if (b > 1) bad_value("bool other than 0 or 1");
      return b == 1;
    }
    case ValueType::int8:
      return decode_integer<std::int8_t>(in);
    case ValueType::int16:
      return decode_integer<std::int16_t>(in);
    case ValueType::int32:
      return decode_integer<std::int32_t>(in);
    case ValueType::int64:
      return decode_integer<std::int64_t>(in);
    case ValueType::uint8:
      return decode_integer<std::uint8_t>(in);
    case ValueType::uint16:
      return decode_integer<std::uint16_t>(in);
    case ValueType::uint32:
      return decode_integer<std::uint32_t>(in);
    case ValueType::uint64:
      return decode_integer<std::uint64_t>(in);
    case ValueType::float32: {
      const auto bits = static_cast<std::uint32_t>(value_be(in, 4, "float32"));
      const float f = std::bit_cast<float>(bits);
      if (std::isnan(f) && bits != kNan32) bad_value("float32 NaN other than 7fc00000");
      return f;
    }
    case ValueType::float64: {
      const std::uint64_t bits = value_be(in, 8, "float64");
      const double d = std::bit_cast<double>(bits);
      if (std::isnan(d) && bits != kNan64) bad_value("float64 NaN other than 7ff8000000000000");
      return d;
    }
    case ValueType::string: {
      const ByteView s = decode_counted(in, "string");
      if (!is_valid_utf8(s)) bad_value("string is not valid UTF-8");
      return std::string(s.begin(), s.end());
    }
    case ValueType::bytes: {
      const ByteView b = decode_counted(in, "bytes");
      return Bytes(b.begin(), b.end());
    }
  }
  bad_value("unknown tag");
}

Bytes encode_value(const Value& v) {
  Bytes out;
  common::ByteWriter w(out);
  encode_value(w, v);
  return out;
}

Value decode_value(ByteView wire) {
  common::ByteReader in(wire);
  Value v = decode_value(in);
  if (!in.empty()) bad_value("bytes after the value");
  return v;
}

std::string to_text(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return {};
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_integral_v<T>) {
          // via a wide type: int8 and uint8 are characters to the stream operators
          if constexpr (std::is_signed_v<T>)
            return std::to_string(static_cast<long long>(x));
          else
            return std::to_string(static_cast<unsigned long long>(x));
        } else if constexpr (std::is_floating_point_v<T>) {
          return float_text(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else {
          return crypto::to_hex(x);
        }
      },
      v);
}

Value parse_value(std::string_view type_name, std::string_view text) {
  const auto type = value_type_by_name(type_name);
  if (!type) throw std::invalid_argument("unknown value type '" + std::string(type_name) + "'");
  switch (*type) {
    case ValueType::none:
      if (!text.empty()) throw std::invalid_argument("a none value takes no text");
      return std::monostate{};
    case ValueType::boolean:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      throw std::invalid_argument("a bool is true, false, 1 or 0");
    case ValueType::int8:
      return parse_number<std::int8_t>(text, type_name);
    case ValueType::int16:
      return parse_number<std::int16_t>(text, type_name);
    case ValueType::int32:
      return parse_number<std::int32_t>(text, type_name);
    case ValueType::int64:
      return parse_number<std::int64_t>(text, type_name);
    case ValueType::uint8:
      return parse_number<std::uint8_t>(text, type_name);
    case ValueType::uint16:
      return parse_number<std::uint16_t>(text, type_name);
    case ValueType::uint32:
      return parse_number<std::uint32_t>(text, type_name);
    case ValueType::uint64:
      return parse_number<std::uint64_t>(text, type_name);
    case ValueType::float32:
      return parse_number<float>(text, type_name);
    case ValueType::float64:
      return parse_number<double>(text, type_name);
    case ValueType::string:
      if (text.size() > kMaxValueBytes) throw std::invalid_argument("string over 4,096 bytes");
      if (!is_valid_utf8(text)) throw std::invalid_argument("string is not valid UTF-8");
      return string_value(text);
    case ValueType::bytes: {
      if (text.size() > 2 * kMaxValueBytes) throw std::invalid_argument("bytes over 4,096");
      try {
        return crypto::from_hex(text);
      } catch (const crypto::Error& e) {
        throw std::invalid_argument(std::string("bytes: ") + e.what());
      }
    }
  }
  throw std::invalid_argument("unknown value type");
}

}  // namespace pqot::srup
