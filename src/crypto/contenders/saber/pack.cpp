// One bit-stream packer for every width. The loop structure depends only on the width, which is
// public, never on the coefficients, so packing a secret (s, m) is constant time.
#include "pack.hpp"

#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::saber {

void pack_poly(std::uint8_t* out, const Poly& a, int width) noexcept {
  const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
  std::uint64_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    acc |= (a.c[i] & mask) << bits;
    bits += width;
    while (bits >= 8) {
      *out++ = static_cast<std::uint8_t>(acc);
      acc >>= 8;
      bits -= 8;
    }
  }
  // 256 * width is a multiple of 8: nothing is left in acc.
}

void unpack_poly(Poly& a, const std::uint8_t* in, int width) noexcept {
  const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
  std::uint64_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    while (bits < width) {
      acc |= std::uint64_t{*in++} << bits;
      bits += 8;
    }
    a.c[i] = static_cast<std::uint16_t>(acc & mask);
    acc >>= width;
    bits -= width;
  }
  secure_wipe(&acc, sizeof(acc));
}

}  // namespace pqot::crypto::saber
