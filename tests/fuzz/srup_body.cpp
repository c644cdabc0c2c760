// libFuzzer target: the SRUP-PQ body decoders (docs/srup-pq.md section 2.7, step 11 of the
// receive order). Input: type byte ‖ suite byte ‖ body. Only srup::Refused may escape the decoder;
// whatever it accepts must re-encode to exactly the input (one spelling per body), and the encoder
// must not call an accepted body a sender bug.
#include <cstdint>
#include <cstdlib>

#include "pqot/srup/body.hpp"

using namespace pqot::srup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto type = message_type(data[0]);
  const auto suite = suite_info(data[1]);
  if (!type || !suite) return 0;
  const ByteView plain(data + 2, size - 2);
  Body body;
  try {
    body = decode_body(*type, suite->suite, plain);
  } catch (const Refused& r) {
    if (r.reason() != Refusal::bad_request) std::abort();  // step 11 refuses with BAD_REQUEST only
    return 0;
  }
  if (body.index() != body_index(*type)) std::abort();
  const Bytes again = encode_body(*type, suite->suite, body);
  if (again.size() != plain.size() || !std::equal(again.begin(), again.end(), plain.begin())) {
    std::abort();  // not canonical: two spellings of one body
  }
  return 0;
}
