// libFuzzer target: Modbus point conversion (docs/srmcpd-modbus.md) on registers from a device,
// which are untrusted. Any registers must decode to a value of the point's kind or to "no value";
// exact types must survive encode(decode(registers)); encode never fails on a decoded value.
#include <cstdint>
#include <cstdlib>

#include "pqot/modbus/point.hpp"

using namespace pqot::modbus;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  Point p;
  p.table = (data[0] & 1) ? Table::holding_register : Table::input_register;
  p.type = static_cast<DataType>(data[1] % 8);
  p.word_order = (data[2] & 1) ? Order::little : Order::big;
  p.byte_order = (data[2] & 2) ? Order::little : Order::big;
  if (data[2] & 4) {
    static constexpr double kScales[] = {0.1, 0.01, 10.0, -1.0, 1e-9};
    p.scale = kScales[(data[2] >> 3) % 5];
    p.offset = (data[2] & 0x80) ? -273.15 : 0.0;
  }
  p.count = p.type == DataType::string ? static_cast<std::uint16_t>(1 + data[3] % kMaxStringRegisters)
                                       : registers_of(p.type);
  const bool scaled = p.scale != 1.0 || p.offset != 0.0;
  if (!check(p).empty()) {
    if (!(scaled && (p.type == DataType::boolean || p.type == DataType::string))) std::abort();
    return 0;
  }
  std::vector<std::uint16_t> regs(p.count, 0);
  for (std::size_t i = 0; i < regs.size() && 4 + 2 * i + 1 < size; ++i) {
    regs[i] = static_cast<std::uint16_t>(data[4 + 2 * i] << 8 | data[5 + 2 * i]);
  }
  const auto v = decode_registers(p, regs);
  if (!v) return 0;
  if (!value_matches(value_kind(p), *v)) std::abort();
  (void)v->dump();  // valid JSON text (strings are ASCII by construction)
  const Encoded back = encode(p, *v);
  const auto* out = std::get_if<std::vector<std::uint16_t>>(&back);
  const bool exact = !scaled && p.type != DataType::boolean && p.type != DataType::string;
  if (exact) {
    // Integers and floats round-trip bit for bit (NaN and infinities have no value).
    if (!out || *out != regs) std::abort();
  }
  if (p.type == DataType::string && !out) std::abort();  // what was read can be written back
  return 0;
}
