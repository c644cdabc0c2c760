// The constants of ML-DSA's NTT (FIPS 204 section 7.5, Appendix B) in Montgomery form, shared by
// the portable code (ntt.cpp) and the AVX2 code (ntt_avx2.cpp) so that both use the same numbers.
#pragma once

#include <array>
#include <cstdint>

#include "params.hpp"

namespace pqot::crypto::mldsa::zetas {

constexpr int bitrev8(int i) {
  int r = 0;
  for (int b = 0; b < 8; ++b) r |= ((i >> b) & 1) << (7 - b);
  return r;
}

constexpr std::int64_t pow_mod(std::int64_t base, std::int64_t e) {
  std::int64_t r = 1;
  base %= kQ;
  while (e > 0) {
    if (e & 1) r = r * base % kQ;
    base = base * base % kQ;
    e >>= 1;
  }
  return r;
}

inline constexpr std::int64_t kMont = (std::int64_t{1} << 32) % kQ;  // 2^32 mod q

// zetas[m] = 2^32 * 1753^BitRev8(m) mod q, centered in (-q/2, q/2] (1753 is the 512th root of
// unity zeta of section 7.5; Appendix B lists the plain values).
constexpr std::array<std::int32_t, kN> make_zetas() {
  std::array<std::int32_t, kN> z{};
  for (int m = 0; m < kN; ++m) {
    std::int64_t v = kMont * pow_mod(1753, bitrev8(m)) % kQ;
    if (v > kQ / 2) v -= kQ;
    z[static_cast<std::size_t>(m)] = static_cast<std::int32_t>(v);
  }
  return z;
}

inline constexpr std::array<std::int32_t, kN> kZetas = make_zetas();
static_assert(pow_mod(1753, 256) == kQ - 1, "1753 is a primitive 512th root of unity mod q");
static_assert(pow_mod(1753, bitrev8(1)) == 4808194, "Appendix B: zetas[1]");

// 2^64 / 256 mod q: the f = 256^-1 of Algorithm 42 line 21 and the factor 2^32, through one
// montgomery_reduce.
inline constexpr std::int32_t kInvNttScale =
    static_cast<std::int32_t>(kMont * kMont % kQ * pow_mod(256, kQ - 2) % kQ);

// The last layer's -zetas[1] times that scale and times 2^-32, so that one montgomery_reduce does
// both the butterfly's multiplication and the scaling by f (Algorithm 42 line 21) of those lanes.
inline constexpr std::int32_t kInvNttScaledZeta = static_cast<std::int32_t>(
    (std::int64_t{kQ} - kZetas[1]) % kQ * kInvNttScale % kQ * pow_mod(kMont, kQ - 2) % kQ);

}  // namespace pqot::crypto::mldsa::zetas
