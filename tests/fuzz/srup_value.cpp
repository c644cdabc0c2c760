// libFuzzer target: SRUP-PQ typed values (docs/srup-pq.md sections 2.6-2.7) on the wire and as
// text. Whatever decodes must re-encode to the input, and its text form (to_text, the `srup`
// tool's) must parse back to the same bytes. Only srup::Refused may escape the decoder.
#include <cstdint>
#include <cstdlib>

#include "pqot/srup/value.hpp"

using namespace pqot::srup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView wire(data, size);
  Value v;
  try {
    v = decode_value(wire);
  } catch (const Refused& r) {
    if (r.reason() != Refusal::bad_request) std::abort();
    return 0;
  }
  const Bytes again = encode_value(v);
  if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
  const Value parsed = parse_value(to_string(type_of(v)), to_text(v));
  if (encode_value(parsed) != again) std::abort();  // the text form loses nothing
  return 0;
}
