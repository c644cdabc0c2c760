// Modbus data points: register layouts and value conversion (docs/srmcpd-modbus.md).
#include "pqot/modbus/point.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <limits>

namespace pqot::modbus {

std::string_view table_name(Table t) {
  switch (t) {
    case Table::coil: return "coil";
    case Table::discrete_input: return "discrete_input";
    case Table::holding_register: return "holding";
    case Table::input_register: return "input";
  }
  return "holding";
}

std::optional<Table> parse_table(std::string_view name) {
  for (Table t : {Table::coil, Table::discrete_input, Table::holding_register, Table::input_register}) {
    if (table_name(t) == name) return t;
  }
  return std::nullopt;
}

std::string_view data_type_name(DataType t) {
  switch (t) {
    case DataType::boolean: return "bool";
    case DataType::int16: return "int16";
    case DataType::uint16: return "uint16";
    case DataType::int32: return "int32";
    case DataType::uint32: return "uint32";
    case DataType::float32: return "float32";
    case DataType::float64: return "float64";
    case DataType::string: return "string";
  }
  return "uint16";
}

std::optional<DataType> parse_data_type(std::string_view name) {
  for (DataType t : {DataType::boolean, DataType::int16, DataType::uint16, DataType::int32, DataType::uint32,
                     DataType::float32, DataType::float64, DataType::string}) {
    if (data_type_name(t) == name) return t;
  }
  return std::nullopt;
}

std::uint16_t registers_of(DataType t) {
  switch (t) {
    case DataType::boolean:
    case DataType::int16:
    case DataType::uint16: return 1;
    case DataType::int32:
    case DataType::uint32:
    case DataType::float32: return 2;
    case DataType::float64: return 4;
    case DataType::string: return 0;
  }
  return 1;
}

namespace {

bool is_integer(DataType t) {
  return t == DataType::int16 || t == DataType::uint16 || t == DataType::int32 || t == DataType::uint32;
}
bool is_scaled(const Point& p) { return p.scale != 1.0 || p.offset != 0.0; }

// The raw bits of a multi-register value, most significant byte first, whatever the device's
// word and byte order.
std::uint64_t assemble(const Point& p, std::span<const std::uint16_t> regs) {
  std::uint64_t v = 0;
  const std::size_t n = regs.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::uint16_t r = p.word_order == Order::big ? regs[i] : regs[n - 1 - i];
    if (p.byte_order == Order::little) r = static_cast<std::uint16_t>((r >> 8) | (r << 8));
    v = (v << 16) | r;
  }
  return v;
}

std::vector<std::uint16_t> disassemble(const Point& p, std::uint64_t v, std::size_t n) {
  std::vector<std::uint16_t> regs(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto r = static_cast<std::uint16_t>(v >> (16 * (n - 1 - i)));  // i-th most significant word
    if (p.byte_order == Order::little) r = static_cast<std::uint16_t>((r >> 8) | (r << 8));
    regs[p.word_order == Order::big ? i : n - 1 - i] = r;
  }
  return regs;
}

std::pair<double, double> integer_range(DataType t) {
  switch (t) {
    case DataType::int16: return {-32768.0, 32767.0};
    case DataType::uint16: return {0.0, 65535.0};
    case DataType::int32: return {-2147483648.0, 2147483647.0};
    default: return {0.0, 4294967295.0};
  }
}

// The double that prints like the float: 230.54f is shown as 230.54, not 230.5399932861328.
double widen(float f) {
  if (!std::isfinite(f)) return f;
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  double d = f;
  if (ec == std::errc{}) std::from_chars(buf, end, d);
  return d;
}

// A scaled value without the noise of binary arithmetic: 2012 × 0.1 is 201.20000000000002 as a
// double; 15 significant digits (all a double carries exactly) give 201.2.
double tidy(double v) {
  if (!std::isfinite(v)) return v;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return std::strtod(buf, nullptr);
}

}  // namespace

ValueKind value_kind(const Point& p) {
  switch (p.type) {
    case DataType::boolean: return ValueKind::boolean;
    case DataType::string: return ValueKind::string;
    case DataType::float32:
    case DataType::float64: return ValueKind::real;
    default: return is_scaled(p) ? ValueKind::real : ValueKind::integer;
  }
}

bool value_matches(ValueKind k, const Json& v) {
  switch (k) {
    case ValueKind::boolean: return v.is_boolean();
    case ValueKind::integer: return v.is_number_integer();
    case ValueKind::real: return v.is_number();
    case ValueKind::string: return v.is_string();
  }
  return false;
}

std::string check(const Point& p) {
  if (is_bit_table(p.table) && p.type != DataType::boolean) {
    return "a " + std::string(table_name(p.table)) + " holds bool only, not " + std::string(data_type_name(p.type));
  }
  if (p.type == DataType::string) {
    if (p.count < 1 || p.count > kMaxStringRegisters) {
      return "a string spans 1.." + std::to_string(kMaxStringRegisters) + " registers (count), not " +
             std::to_string(p.count);
    }
  } else if (is_bit_table(p.table)) {
    if (p.count != 1) return "a bit point has count 1";
  } else if (p.count != registers_of(p.type)) {
    return "type " + std::string(data_type_name(p.type)) + " spans " + std::to_string(registers_of(p.type)) +
           " register(s), not " + std::to_string(p.count);
  }
  if (static_cast<std::uint32_t>(p.address) + p.count - 1 > 65535) {
    return "address " + std::to_string(p.address) + " + count " + std::to_string(p.count) + " goes beyond 65535";
  }
  if (!std::isfinite(p.scale) || p.scale == 0.0) return "scale must be finite and not 0";
  if (!std::isfinite(p.offset)) return "offset must be finite";
  if ((p.type == DataType::boolean || p.type == DataType::string) && is_scaled(p)) {
    return "scale and offset apply to numeric types only";
  }
  return "";
}

std::optional<Json> decode_registers(const Point& p, std::span<const std::uint16_t> regs) {
  const std::uint64_t raw = assemble(p, regs.first(std::min<std::size_t>(regs.size(), 4)));
  double number = 0.0;
  switch (p.type) {
    case DataType::boolean: return Json(raw != 0);
    case DataType::string: {
      // Printable ASCII up to the first NUL; anything else from the device becomes '?', so the
      // value is always valid UTF-8 JSON text.
      std::string s;
      for (std::uint16_t r : regs) {
        if (p.byte_order == Order::little) r = static_cast<std::uint16_t>((r >> 8) | (r << 8));
        for (const auto c : {static_cast<unsigned char>(r >> 8), static_cast<unsigned char>(r & 0xff)}) {
          if (c == 0) return Json(std::move(s));
          s.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
        }
      }
      return Json(std::move(s));
    }
    case DataType::int16: number = static_cast<std::int16_t>(raw); break;
    case DataType::uint16: number = static_cast<std::uint16_t>(raw); break;
    case DataType::int32: number = static_cast<std::int32_t>(raw); break;
    case DataType::uint32: number = static_cast<std::uint32_t>(raw); break;
    case DataType::float32: number = widen(std::bit_cast<float>(static_cast<std::uint32_t>(raw))); break;
    case DataType::float64: number = std::bit_cast<double>(raw); break;
  }
  if (is_integer(p.type) && !is_scaled(p)) return Json(static_cast<std::int64_t>(number));
  // Unscaled floats pass through untouched (-0.0 + 0.0 would be +0.0: found by fuzz_modbus_point).
  const double v = is_scaled(p) ? tidy(number * p.scale + p.offset) : number;
  if (!std::isfinite(v)) return std::nullopt;
  return Json(v);
}

Json decode_bit(bool bit) { return Json(bit); }

Encoded encode(const Point& p, const Json& value) {
  if (is_bit_table(p.table)) {
    if (!value.is_boolean()) return std::string("a bool is needed");
    return std::vector<std::uint16_t>{value.get<bool>() ? std::uint16_t{1} : std::uint16_t{0}};
  }
  switch (p.type) {
    case DataType::boolean:
      if (!value.is_boolean()) return std::string("a bool is needed");
      return std::vector<std::uint16_t>{value.get<bool>() ? std::uint16_t{1} : std::uint16_t{0}};
    case DataType::string: {
      if (!value.is_string()) return std::string("a string is needed");
      const auto& s = value.get_ref<const std::string&>();
      if (s.size() > 2u * p.count) {
        return "at most " + std::to_string(2 * p.count) + " characters fit in " + std::to_string(p.count) +
               " registers";
      }
      std::vector<std::uint16_t> regs(p.count, 0);
      for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c >= 0x7f) return std::string("only printable ASCII characters can be stored");
        regs[i / 2] |= static_cast<std::uint16_t>(i % 2 == 0 ? c << 8 : c);
      }
      if (p.byte_order == Order::little) {
        for (auto& r : regs) r = static_cast<std::uint16_t>((r >> 8) | (r << 8));
      }
      return regs;
    }
    default: break;
  }
  if (!value.is_number()) return std::string("a number is needed");
  const double raw = (value.get<double>() - p.offset) / p.scale;
  if (!std::isfinite(raw)) return std::string("the value is out of range");
  const std::size_t n = registers_of(p.type);
  if (p.type == DataType::float32) {
    // Up to half a step above FLT_MAX still rounds to FLT_MAX (the shortest decimal of FLT_MAX,
    // 3.4028235e38, is such a value); beyond that the float would be infinite.
    constexpr double kLimit = 3.4028235677973366e38;
    if (std::abs(raw) >= kLimit) return std::string("the value is out of float32 range");
    constexpr double kMax = std::numeric_limits<float>::max();
    return disassemble(p, std::bit_cast<std::uint32_t>(static_cast<float>(std::clamp(raw, -kMax, kMax))), n);
  }
  if (p.type == DataType::float64) return disassemble(p, std::bit_cast<std::uint64_t>(raw), n);
  // Unscaled integers arrive as int64 and are exact; scaled ones are rounded to the nearest step.
  const double r = is_scaled(p) ? std::nearbyint(raw) : raw;
  const auto [lo, hi] = integer_range(p.type);
  if (r < lo || r > hi) {
    return "the value is out of range for " + std::string(data_type_name(p.type)) + (is_scaled(p) ? " after scaling" : "");
  }
  const auto bits = static_cast<std::uint64_t>(static_cast<std::int64_t>(r)) & (n == 1 ? 0xffffu : 0xffffffffu);
  return disassemble(p, bits, n);
}

}  // namespace pqot::modbus
