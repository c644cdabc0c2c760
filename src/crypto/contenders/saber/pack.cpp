// The bit-stream packer. Eight coefficients of w bits fill exactly w bytes, so both directions
// work on groups of eight; for each width Saber uses the group is unrolled with constant shifts.
// The loop structure depends only on the width, which is public, never on the coefficients, so
// packing a secret (s, m) is constant time.
#include "pack.hpp"

#include <cstring>

namespace pqot::crypto::saber {

namespace {

constexpr std::size_t kGroups = kN / 8;

template <int W>
void pack_width(std::uint8_t* out, const Poly& a) noexcept {
  constexpr std::uint32_t mask = (1u << W) - 1;
  std::memset(out, 0, kGroups * W);
  for (std::size_t g = 0; g < kGroups; ++g) {
    std::uint8_t* p = out + g * W;
    for (int t = 0; t < 8; ++t) {
      const int bit = t * W;
      const int byte = bit / 8;
      const int shift = bit % 8;
      const std::uint32_t x = (a.c[8 * g + static_cast<std::size_t>(t)] & mask) << shift;
      for (int k = 0; k < (shift + W + 7) / 8; ++k) {
        p[byte + k] = static_cast<std::uint8_t>(p[byte + k] | (x >> (8 * k)));
      }
    }
  }
}

template <int W>
void unpack_width(Poly& a, const std::uint8_t* in) noexcept {
  constexpr std::uint32_t mask = (1u << W) - 1;
  for (std::size_t g = 0; g < kGroups; ++g) {
    const std::uint8_t* p = in + g * W;
    for (int t = 0; t < 8; ++t) {
      const int bit = t * W;
      const int byte = bit / 8;
      const int shift = bit % 8;
      std::uint32_t x = 0;
      for (int k = 0; k < (shift + W + 7) / 8; ++k) x |= std::uint32_t{p[byte + k]} << (8 * k);
      a.c[8 * g + static_cast<std::size_t>(t)] = static_cast<std::uint16_t>((x >> shift) & mask);
    }
  }
}

// Calls f.template operator()<W>() for the widths Saber uses; false for any other width.
template <class F>
bool with_width(int width, F&& f) {
  switch (width) {
    case 1:
      f.template operator()<1>();
      return true;
    case 3:
      f.template operator()<3>();
      return true;
    case 4:
      f.template operator()<4>();
      return true;
    case 6:
      f.template operator()<6>();
      return true;
    case 10:
      f.template operator()<10>();
      return true;
    case 13:
      f.template operator()<13>();
      return true;
    default:
      return false;
  }
}

}  // namespace

void pack_poly(std::uint8_t* out, const Poly& a, int width) noexcept {
  if (with_width(width, [&]<int W>() { pack_width<W>(out, a); })) return;
  // Any other width (1..16): the same stream, one coefficient at a time.
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
}

void unpack_poly(Poly& a, const std::uint8_t* in, int width) noexcept {
  if (with_width(width, [&]<int W>() { unpack_width<W>(a, in); })) return;
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
}

}  // namespace pqot::crypto::saber
