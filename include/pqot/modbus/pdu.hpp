// Modbus TCP as a client speaks it: the MBAP header (Modbus Messaging on TCP/IP Implementation
// Guide V1.0b, 3.1.3) and the request and response PDUs of FC01/02/03/04/05/06/16 (Modbus
// Application Protocol V1.1b3, 6.1-6.6 and 6.12; exceptions, 7). Pure functions, no I/O: srmcpd's
// gateway frames and checks with them; they are fuzzed (tests/fuzz/modbus_pdu.cpp). Every answer
// comes from a device and is untrusted: each decode checks every length against the request it
// answers, and anything else is `malformed`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pqot/modbus/point.hpp"

namespace pqot::modbus {

/// transaction id (2) | protocol id (2, = 0) | length (2: unit id + PDU) | unit id (1)
inline constexpr std::size_t kMbapHeaderSize = 7;
/// The largest PDU (Application Protocol 4.1: a 256-byte serial ADU less address and CRC).
inline constexpr std::size_t kMaxPduSize = 253;
/// Most registers one FC16 may write (Application Protocol 6.12).
inline constexpr std::uint16_t kMaxWriteRegisters = 123;

struct MbapHeader {
  std::uint16_t transaction_id = 0;
  std::uint8_t unit = 0;
  std::uint16_t pdu_size = 0;  ///< the length field less the unit id: 1..kMaxPduSize
};

/// The header of an answer (exactly kMbapHeaderSize bytes); nullopt unless the protocol id is 0
/// and the length announces 1..kMaxPduSize PDU bytes. Nothing is read before this check, so a
/// peer's length never sizes a buffer.
std::optional<MbapHeader> parse_mbap_header(std::span<const std::uint8_t> header);

/// One request as sent: header and PDU.
std::vector<std::uint8_t> frame_request(std::uint16_t transaction_id, std::uint8_t unit,
                                        std::span<const std::uint8_t> pdu);

/// FC01 (coil), FC02 (discrete input), FC03 (holding), FC04 (input) over [start, start + count).
/// Requires 1 <= count <= kMaxReadBits (bit tables) or kMaxReadRegisters.
std::vector<std::uint8_t> read_request(Table table, std::uint16_t start, std::uint16_t count);
/// FC05 for a coil (`regs[0] != 0` is ON), FC06 for one register, FC16 for several
/// (1..kMaxWriteRegisters). Requires a writable table and regs.size() == 1 on coils.
std::vector<std::uint8_t> write_request(Table table, std::uint16_t address, std::span<const std::uint16_t> regs);

/// What a response PDU says about the request it answers.
struct Answer {
  enum class Kind { ok, exception, malformed };
  Kind kind = Kind::malformed;
  std::uint8_t exception_code = 0;  ///< kind == exception: the device's code (1..255 as sent)
  std::vector<std::uint16_t> regs;  ///< a register read: `count` registers
  std::vector<std::uint8_t> bits;   ///< a bit read: `count` entries, 0 or 1
  std::string why;                  ///< kind == malformed: what did not match, for the log
};

/// The answer to read_request(table, start, count): the function code or its exception form,
/// a byte count that is exactly what `count` needs, and nothing after the data.
Answer decode_read_response(Table table, std::uint16_t count, std::span<const std::uint8_t> pdu);
/// The answer to a write request: FC05 and FC06 echo the request, FC16 its address and quantity.
Answer decode_write_response(std::span<const std::uint8_t> request, std::span<const std::uint8_t> pdu);

}  // namespace pqot::modbus
