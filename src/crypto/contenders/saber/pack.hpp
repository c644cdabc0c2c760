// The bit-string conversions of Saber (round-3 specification, "Bit-string conversions":
// POLq2BS / BS2POLq at 13 bits, POLp2BS / BS2POLp at 10 bits, POLT2BS / BS2POLT at et bits,
// POLmsg2BS / BS2POLmsg at 1 bit). All of them are one little-endian bit stream: coefficient i
// takes bits [i*w, (i+1)*w), least significant bit first, and byte k holds stream bits [8k, 8k+8).
#pragma once

#include <cstddef>
#include <cstdint>

#include "poly.hpp"

namespace pqot::crypto::saber {

/// Writes the low `width` bits (1..16; unrolled for 1, 3, 4, 6, 10, 13) of each coefficient:
/// 32 * width bytes.
void pack_poly(std::uint8_t* out, const Poly& a, int width) noexcept;

/// Reads 32 * width bytes into coefficients in [0, 2^width).
void unpack_poly(Poly& a, const std::uint8_t* in, int width) noexcept;

template <int L>
void pack_polyvec(std::uint8_t* out, const PolyVec<L>& v, int width) noexcept {
  for (std::size_t i = 0; i < L; ++i)
    pack_poly(out + 32 * static_cast<std::size_t>(width) * i, v.p[i], width);
}

template <int L>
void unpack_polyvec(PolyVec<L>& v, const std::uint8_t* in, int width) noexcept {
  for (std::size_t i = 0; i < L; ++i)
    unpack_poly(v.p[i], in + 32 * static_cast<std::size_t>(width) * i, width);
}

}  // namespace pqot::crypto::saber
