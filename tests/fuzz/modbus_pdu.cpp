// libFuzzer target: the Modbus TCP answers srmcpd's gateway reads from devices
// (include/pqot/modbus/pdu.hpp). The first bytes choose the request (table, count, write values);
// the rest is the device's answer: a header that must bound its length, and a PDU that must be
// refused unless it fits the request exactly.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "pqot/modbus/pdu.hpp"

using namespace pqot::modbus;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::span<const std::uint8_t> in(data, size);
  const auto table = static_cast<Table>(in[0] % 4);
  const std::uint16_t limit = is_bit_table(table) ? kMaxReadBits : kMaxReadRegisters;
  const auto count = static_cast<std::uint16_t>(1 + ((in[1] << 8) | in[2]) % limit);
  const auto answer = in.subspan(3);

  if (answer.size() >= kMbapHeaderSize) {
    if (const auto h = parse_mbap_header(answer.first(kMbapHeaderSize))) {
      if (h->pdu_size < 1 || h->pdu_size > kMaxPduSize) std::abort();
    }
  }
  const Answer r = decode_read_response(table, count, answer);
  if (r.kind == Answer::Kind::ok) {
    const std::size_t got = is_bit_table(table) ? r.bits.size() : r.regs.size();
    if (got != count || answer.size() > kMaxPduSize) std::abort();
    for (const auto b : r.bits) {
      if (b > 1) std::abort();
    }
  }
  if (r.kind == Answer::Kind::exception && (answer.size() != 2 || r.exception_code == 0)) std::abort();

  if (is_writable(table)) {
    const std::size_t n = table == Table::coil ? 1 : 1 + in[1] % kMaxWriteRegisters;
    const std::vector<std::uint16_t> regs(n, static_cast<std::uint16_t>(in[2]));
    const auto request = write_request(table, count, regs);
    const Answer w = decode_write_response(request, answer);
    if (w.kind == Answer::Kind::ok && answer.size() > request.size()) std::abort();
  }
  return 0;
}
