// Modbus data points (docs/srmcpd-modbus.md, "Node mapping"): where a value lives on a device
// (table, address, count) and how its registers convert to and from a JSON value (type, word and
// byte order, scale and offset). Protocol-neutral (srmcpd's gateway maps points to SRMCP nodes;
// a SRUP-PQ device agent can read meters through the same points). Pure functions, no I/O.
// Register contents come from the network and are untrusted: every decode is total (any register
// values give a value of the point's kind, or "no value").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace pqot::modbus {

using Json = nlohmann::json;

/// The four Modbus data tables (function codes: coil 01/05/15, discrete input 02, holding register
/// 03/06/16, input register 04).
enum class Table { coil, discrete_input, holding_register, input_register };
/// "coil", "discrete_input", "holding", "input"
std::string_view table_name(Table t);
std::optional<Table> parse_table(std::string_view name);
inline bool is_bit_table(Table t) { return t == Table::coil || t == Table::discrete_input; }
inline bool is_writable(Table t) { return t == Table::coil || t == Table::holding_register; }

/// Data types of a point. Bit tables hold `boolean` only; registers hold any type (`boolean` on a
/// register is "register != 0").
enum class DataType { boolean, int16, uint16, int32, uint32, float32, float64, string };
/// "bool", "int16", "uint16", "int32", "uint32", "float32", "float64", "string"
std::string_view data_type_name(DataType t);
std::optional<DataType> parse_data_type(std::string_view name);

/// Word order of multi-register values and byte order inside each register. `big` is the Modbus
/// convention (most significant first); devices differ, so both are configurable.
enum class Order { big, little };

/// Most registers one request may read (FC03/04: 125) and most bits (FC01/02: 2000).
inline constexpr std::uint16_t kMaxReadRegisters = 125;
inline constexpr std::uint16_t kMaxReadBits = 2000;
/// A string point's length limit in registers (one read; 2 characters per register).
inline constexpr std::uint16_t kMaxStringRegisters = 120;

struct Point {
  Table table = Table::holding_register;
  std::uint16_t address = 0;  ///< first register or bit (0-based, as on the wire)
  std::uint16_t count = 1;    ///< registers (or bits) the point spans
  DataType type = DataType::uint16;
  Order word_order = Order::big;
  Order byte_order = Order::big;
  double scale = 1.0;   ///< value = raw * scale + offset (numeric types only)
  double offset = 0.0;
};

/// Registers a type spans (string: not fixed, 0).
std::uint16_t registers_of(DataType t);
/// What a point's values are: JSON booleans, strings, integers (unscaled integer types) or
/// numbers (floats and scaled integers).
enum class ValueKind { boolean, integer, real, string };
ValueKind value_kind(const Point& p);
/// True if `v` is a value of kind `k` (`real` accepts any JSON number).
bool value_matches(ValueKind k, const Json& v);
/// Why `p` is not a valid point ("" if it is): bit tables with non-bool types, a count that does
/// not match the type, a string length outside 1..kMaxStringRegisters, an address range beyond
/// 65535, a zero or non-finite scale, scale or offset on bool and string points.
std::string check(const Point& p);

/// The value of a register point from its `p.count` registers (span size must equal count);
/// nullopt if they hold no valid value (a float NaN or infinity, which JSON cannot carry).
std::optional<Json> decode_registers(const Point& p, std::span<const std::uint16_t> regs);
/// The value of a bit point.
Json decode_bit(bool bit);

/// The registers (or, for bit tables, one 0/1 entry) that store `value` (already of the point's
/// kind), or a message saying why it cannot be stored (out of the type's range, not ASCII, too
/// long for the string's registers).
using Encoded = std::variant<std::vector<std::uint16_t>, std::string>;
Encoded encode(const Point& p, const Json& value);

}  // namespace pqot::modbus
