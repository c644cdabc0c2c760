// Modular reduction mod q = 3329 on signed 16-bit coefficients, without secret-dependent branches.
#pragma once

#include <cstdint>

#include "params.hpp"

namespace pqot::crypto::mlkem {

inline constexpr std::int16_t kQInv = -3327;  // q^-1 mod 2^16, as a signed value
inline constexpr std::int32_t kMont = (1 << 16) % kQ;  // R = 2^16 mod q = 2285

/// Montgomery reduction: for |a| < q * 2^15, returns a * 2^-16 mod q in (-q, q).
inline std::int16_t montgomery_reduce(std::int32_t a) noexcept {
  const auto t = static_cast<std::int16_t>(static_cast<std::int16_t>(a) * kQInv);
  return static_cast<std::int16_t>((a - static_cast<std::int32_t>(t) * kQ) >> 16);
}

/// a * b * 2^-16 mod q.
inline std::int16_t fqmul(std::int16_t a, std::int16_t b) noexcept {
  return montgomery_reduce(static_cast<std::int32_t>(a) * b);
}

/// Barrett reduction: the representative of a mod q in [-(q-1)/2, (q-1)/2].
inline std::int16_t barrett_reduce(std::int16_t a) noexcept {
  constexpr std::int32_t v = ((1 << 26) + kQ / 2) / kQ;  // round(2^26 / q) = 20159
  const std::int32_t t = ((v * a + (1 << 25)) >> 26) * kQ;
  return static_cast<std::int16_t>(a - t);
}

/// Maps a representative in (-q, q) to [0, q) with a mask instead of a branch.
inline std::uint16_t to_unsigned(std::int16_t a) noexcept {
  return static_cast<std::uint16_t>(a + ((a >> 15) & kQ));
}

}  // namespace pqot::crypto::mlkem
