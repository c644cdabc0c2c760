// libFuzzer target: the SRUP-PQ v1 envelope parser (docs/srup-pq.md, steps 1-2 of the receive
// order). Only srup::Refused may escape; whatever parses must re-encode to exactly its header
// bytes, and its fields must lie inside the input in order.
#include <cstdint>
#include <cstdlib>

#include "pqot/srup/envelope.hpp"

using namespace pqot::srup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView wire(data, size);
  EnvelopeView v;
  try {
    v = parse_envelope(wire);
  } catch (const Refused&) {
    return 0;
  }
  const std::size_t body_length = v.body.size();
  const Bytes header = encode_header(v.header, body_length);
  if (header.size() != v.header_bytes.size() ||
      !std::equal(header.begin(), header.end(), v.header_bytes.begin())) {
    std::abort();  // not canonical: two spellings of one header
  }
  const std::uint8_t* end = data + size;
  for (const ByteView part : {v.kem_ciphertext, v.body, v.signature}) {
    if (!part.empty() && (part.data() < data || part.data() + part.size() > end)) std::abort();
  }
  return 0;
}
