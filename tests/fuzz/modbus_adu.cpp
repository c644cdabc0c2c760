// libFuzzer target: the device simulator's Modbus TCP request framing (apps/pqot-modbus-sim/mbap.hpp)
// fed in arbitrary chunks: it must never write past its buffer, never accept a request longer than
// an ADU, and report bad headers.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "../../apps/pqot-modbus-sim/mbap.hpp"

using pqot::modbus_sim::AduReader;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  AduReader reader;
  std::size_t at = 0;
  std::size_t step = 1;
  while (at < size) {
    auto chunk = reader.next_chunk();
    if (chunk.empty()) std::abort();
    // Chunk sizes vary with the data, like TCP segments.
    const std::size_t n = std::min({chunk.size(), size - at, step});
    std::memcpy(chunk.data(), data + at, n);
    at += n;
    step = 1 + data[at - 1] % 17;
    switch (reader.advance(n)) {
      case AduReader::Status::incomplete:
        break;
      case AduReader::Status::complete: {
        const auto adu = reader.adu();
        if (adu.size() < pqot::modbus_sim::kMbapHeaderLength + 1 || adu.size() > pqot::modbus_sim::kMaxAduLength) {
          std::abort();
        }
        if (adu[2] != 0 || adu[3] != 0) std::abort();  // protocol id 0 only
        reader.reset();
        break;
      }
      case AduReader::Status::bad_header:
        reader.reset();
        break;
    }
  }
  return 0;
}
