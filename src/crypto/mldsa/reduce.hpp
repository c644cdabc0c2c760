// Modular reduction mod q = 8380417 on signed 32-bit coefficients, without secret-dependent
// branches (the arithmetic behind FIPS 204 section 7.5 and the rounding of section 7.4).
#pragma once

#include <cstdint>

#include "params.hpp"

namespace pqot::crypto::mldsa {

inline constexpr std::int32_t kQInv = 58728449;  // q^-1 mod 2^32
static_assert(static_cast<std::uint32_t>(kQ) * static_cast<std::uint32_t>(kQInv) == 1u);

/// Montgomery reduction: for |a| < q * 2^31, returns a * 2^-32 mod q in (-q, q).
inline std::int32_t montgomery_reduce(std::int64_t a) noexcept {
  // q through an empty asm: the compiler otherwise spells t * q as shifts and subtractions
  // (q = 2^23 - 2^13 + 1), five instructions more than one multiplication in the NTT's inner loops.
  std::int64_t q = kQ;
  __asm__("" : "+r"(q));
  const auto t =
      static_cast<std::int32_t>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(kQInv));
  return static_cast<std::int32_t>((a - static_cast<std::int64_t>(t) * q) >> 32);
}

/// For a <= 2^31 - 2^22 - 1, a representative of a mod q in [-6283009, 6283007].
inline std::int32_t reduce32(std::int32_t a) noexcept {
  const std::int32_t t = (a + (1 << 22)) >> 23;
  return a - t * kQ;
}

/// Adds q to a negative a (a mask, not a branch): (-q, q) -> [0, q).
inline std::int32_t caddq(std::int32_t a) noexcept {
  return a + ((a >> 31) & kQ);
}

/// The representative in [0, q) of any a accepted by reduce32.
inline std::int32_t freeze(std::int32_t a) noexcept {
  return caddq(reduce32(a));
}

}  // namespace pqot::crypto::mldsa
