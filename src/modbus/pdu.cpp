// Modbus TCP framing and the PDUs of FC01-06 and FC16 (pdu.hpp). Section numbers are those of
// the Modbus Application Protocol Specification V1.1b3 and the Messaging on TCP/IP Guide V1.0b.
#include "pqot/modbus/pdu.hpp"

#include <algorithm>
#include <cassert>

#include "pqot/common/byte_io.hpp"

namespace pqot::modbus {

namespace {

std::uint8_t read_function(Table t) {
  switch (t) {
    case Table::coil: return 0x01;
    case Table::discrete_input: return 0x02;
    case Table::holding_register: return 0x03;
    case Table::input_register: return 0x04;
  }
  return 0x03;
}

Answer malformed(std::string why) {
  Answer a;
  a.why = std::move(why);
  return a;
}

// Section 7: an exception answer is the function code with its high bit set and one code byte.
// Returns the answer if `pdu` is an exception to `function` (or malformed as one), else nullopt.
std::optional<Answer> exception_of(std::uint8_t function, std::span<const std::uint8_t> pdu) {
  if (pdu.empty()) return malformed("empty PDU");
  if (pdu[0] == function) return std::nullopt;
  if (pdu[0] != (function | 0x80)) {
    return malformed("function " + std::to_string(pdu[0]) + " answers function " + std::to_string(function));
  }
  if (pdu.size() != 2 || pdu[1] == 0) return malformed("exception answer of " + std::to_string(pdu.size()) + " bytes");
  Answer a;
  a.kind = Answer::Kind::exception;
  a.exception_code = pdu[1];
  return a;
}

}  // namespace

std::optional<MbapHeader> parse_mbap_header(std::span<const std::uint8_t> header) {
  if (header.size() != kMbapHeaderSize) return std::nullopt;
  common::ByteReader r(header);
  MbapHeader h;
  h.transaction_id = r.u16();
  const std::uint16_t protocol = r.u16();
  const std::uint16_t length = r.u16();
  h.unit = r.u8();
  // Guide 3.1.3: protocol 0 is Modbus; the length counts the unit id and the PDU.
  if (protocol != 0 || length < 2 || length > kMaxPduSize + 1) return std::nullopt;
  h.pdu_size = static_cast<std::uint16_t>(length - 1);
  return h;
}

std::vector<std::uint8_t> frame_request(std::uint16_t transaction_id, std::uint8_t unit,
                                        std::span<const std::uint8_t> pdu) {
  assert(!pdu.empty() && pdu.size() <= kMaxPduSize);
  std::vector<std::uint8_t> out;
  out.reserve(kMbapHeaderSize + pdu.size());
  common::ByteWriter w(out);
  w.u16(transaction_id);
  w.u16(0);
  w.u16(static_cast<std::uint16_t>(pdu.size() + 1));
  w.u8(unit);
  w.bytes(pdu);
  return out;
}

// 6.1-6.4: function, starting address, quantity.
std::vector<std::uint8_t> read_request(Table table, std::uint16_t start, std::uint16_t count) {
  assert(count >= 1 && count <= (is_bit_table(table) ? kMaxReadBits : kMaxReadRegisters));
  std::vector<std::uint8_t> out;
  common::ByteWriter w(out);
  w.u8(read_function(table));
  w.u16(start);
  w.u16(count);
  return out;
}

std::vector<std::uint8_t> write_request(Table table, std::uint16_t address, std::span<const std::uint16_t> regs) {
  assert(is_writable(table) && !regs.empty() && regs.size() <= kMaxWriteRegisters);
  std::vector<std::uint8_t> out;
  common::ByteWriter w(out);
  if (table == Table::coil) {  // 6.5: FC05, ON is 0xFF00, OFF 0x0000
    w.u8(0x05);
    w.u16(address);
    w.u16(regs[0] != 0 ? 0xFF00 : 0x0000);
  } else if (regs.size() == 1) {  // 6.6: FC06
    w.u8(0x06);
    w.u16(address);
    w.u16(regs[0]);
  } else {  // 6.12: FC16, address, quantity, byte count, values
    w.u8(0x10);
    w.u16(address);
    w.u16(static_cast<std::uint16_t>(regs.size()));
    w.u8(static_cast<std::uint8_t>(regs.size() * 2));
    for (const std::uint16_t v : regs) w.u16(v);
  }
  return out;
}

// 6.1-6.4 responses: function, byte count, data. Bits are packed LSB first from the start address.
Answer decode_read_response(Table table, std::uint16_t count, std::span<const std::uint8_t> pdu) {
  if (auto e = exception_of(read_function(table), pdu)) return std::move(*e);
  const bool bits = is_bit_table(table);
  const std::size_t want = bits ? (count + 7u) / 8u : 2u * count;
  if (pdu.size() < 2 || pdu[1] != want || pdu.size() != 2 + want) {
    return malformed("read of " + std::to_string(count) + " answered with " + std::to_string(pdu.size()) +
                     " PDU bytes");
  }
  Answer a;
  a.kind = Answer::Kind::ok;
  const auto data = pdu.subspan(2);
  if (bits) {
    a.bits.resize(count);
    for (std::size_t i = 0; i < count; ++i) a.bits[i] = static_cast<std::uint8_t>((data[i / 8] >> (i % 8)) & 1u);
  } else {
    common::ByteReader r(data);
    a.regs.resize(count);
    for (auto& v : a.regs) v = r.u16();
  }
  return a;
}

Answer decode_write_response(std::span<const std::uint8_t> request, std::span<const std::uint8_t> pdu) {
  assert(request.size() >= 5);
  if (auto e = exception_of(request[0], pdu)) return std::move(*e);
  // FC05/06 (6.5, 6.6): the answer is the request; FC16 (6.12): function, address, quantity.
  const std::size_t echoed = request[0] == 0x10 ? 5 : request.size();
  if (pdu.size() != echoed || !std::equal(pdu.begin(), pdu.end(), request.begin())) {
    return malformed("write answer does not echo the request");
  }
  Answer a;
  a.kind = Answer::Kind::ok;
  return a;
}

}  // namespace pqot::modbus
