// libFuzzer target: the SRMCP v2 frame path of a receiver (docs/srmcp.md §3, §8.2, §9): pre-header,
// frame header, segment, reassembly and message header, on untrusted bytes. Every input must end in
// a result or a ProtocolError; nothing may be allocated beyond the limits.
#include <cstdint>
#include <cstdlib>

#include "pqot/srmcp/reassembly.hpp"
#include "pqot/srmcp/wire.hpp"

using namespace pqot::srmcp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Limits limits;
  limits.max_frame_body = 4096;
  limits.max_message = 8192;
  limits.max_reassemblies = 4;
  const ByteView in(data, size);
  try {
    if (size < kPreHeaderSize + kFrameHeaderSize) return 0;
    const auto pre = parse_pre_header(std::span<const std::uint8_t, kPreHeaderSize>(data, kPreHeaderSize), limits);
    if (pre.body_len > limits.max_frame_body) std::abort();  // must have been refused
    (void)parse_frame_header(std::span<const std::uint8_t, kFrameHeaderSize>(data + kPreHeaderSize, kFrameHeaderSize));
    // Treat the rest as a sequence of decrypted segment plaintexts, each prefixed by a u16 length.
    Reassembler reassembler(limits);
    ByteView rest = in.subspan(kPreHeaderSize + kFrameHeaderSize);
    while (rest.size() >= 2) {
      const std::size_t n = std::min<std::size_t>((rest[0] << 8 | rest[1]), rest.size() - 2);
      const ByteView plain = rest.subspan(2, n);
      rest = rest.subspan(2 + n);
      try {
        const Segment seg = parse_segment(plain, limits);
        if (seg.header.total > limits.max_message) std::abort();
        if (auto whole = reassembler.add(seg)) {
          if (whole->size() != seg.header.total) std::abort();
          (void)parse_message_header(*whole);
        }
      } catch (const ProtocolError& e) {
        if (e.action() != Action::drop) std::abort();  // segment problems never close the link
      }
      if (reassembler.pending() > limits.max_reassemblies) std::abort();
    }
  } catch (const ProtocolError&) {
  }
  return 0;
}
