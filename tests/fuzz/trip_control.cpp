// Fuzzes TRIP's control decoders (docs/trip.md §3, §4): the frame reader over a byte stream and
// each body decoder. Refusals are ControlError; what is accepted encodes back to the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "pqot/trip/control.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pqot::trip;
  const std::span<const std::uint8_t> in(data, size);
  const auto same = [&](const pqot::crypto::Bytes& out) {
    if (out.size() != size || !std::equal(out.begin(), out.end(), data)) std::abort();
  };
  try {
    same(encode(decode_client_hello(in)));
  } catch (const ControlError&) {
  }
  try {
    same(encode(decode_server_hello(in)));
  } catch (const ControlError&) {
  }
  try {
    same(encode(decode_close(in)));
  } catch (const ControlError&) {
  }
  FrameReader r;
  try {
    for (std::size_t at = 0; at < size; at += 7) {
      r.feed(in.subspan(at, std::min<std::size_t>(7, size - at)));
      while (auto f = r.next()) {
        if (f->body.size() > kMaxControlBody) std::abort();
      }
    }
  } catch (const ControlError&) {
  }
  return 0;
}
