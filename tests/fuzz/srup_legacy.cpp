// libFuzzer target: the original SRUP version-5 envelope decoder (docs/srup-legacy.md).
// Input: the untrusted envelope. A LegacyError is the only allowed refusal; whatever decodes must
// re-encode to exactly the input (the format has one encoding per envelope), and the signed bytes
// cut from the wire must equal those serialized from the decoded fields.
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "pqot/srup/legacy.hpp"

using namespace pqot::srup::legacy;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ByteView wire(data, size);
  LegacyEnvelope e;
  try {
    e = decode(wire);
  } catch (const LegacyError&) {
    return 0;  // refusing bad input is the expected outcome
  }
  if (e.type != type_of(e.body) || e.signature.size() != kSignatureSize) std::abort();
  const Bytes again = encode(e);
  if (again.size() != size || !std::equal(again.begin(), again.end(), data)) std::abort();
  if (signed_bytes(wire) != signed_bytes(e)) std::abort();
  return 0;
}
