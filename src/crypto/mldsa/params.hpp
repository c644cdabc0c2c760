// ML-DSA parameters (FIPS 204, section 4, Table 1) and the encoding sizes derived from them
// (pkEncode, skEncode and sigEncode, Algorithms 22, 24 and 26).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pqot::crypto::mldsa {

inline constexpr int kN = 256;                    // polynomial degree
inline constexpr std::int32_t kQ = 8380417;       // modulus q = 2^23 - 2^13 + 1
inline constexpr int kD = 13;                     // dropped bits of t
inline constexpr std::size_t kSeedBytes = 32;     // xi, rho, K, rnd
inline constexpr std::size_t kCrhBytes = 64;      // rho', tr, mu, rho''
inline constexpr std::size_t kT1PolyBytes = 320;  // SimpleBitPack of t1: 10 bits per coefficient
inline constexpr std::size_t kT0PolyBytes = 416;  // BitPack of t0: 13 bits per coefficient

/// One parameter set, selected by the rank k of the matrix A (4, 6, 8 for ML-DSA-44, -65, -87).
template <int K>
struct Params {
  static_assert(K == 4 || K == 6 || K == 8);
  static constexpr int k = K;
  static constexpr int l = K == 4 ? 4 : K == 6 ? 5 : 7;
  static constexpr int eta = K == 6 ? 4 : 2;
  static constexpr int tau = K == 4 ? 39 : K == 6 ? 49 : 60;
  static constexpr int lambda = K == 4 ? 128 : K == 6 ? 192 : 256;
  static constexpr std::int32_t gamma1 = K == 4 ? (1 << 17) : (1 << 19);
  static constexpr std::int32_t gamma2 = K == 4 ? (kQ - 1) / 88 : (kQ - 1) / 32;
  static constexpr std::int32_t beta = tau * eta;
  static constexpr int omega = K == 4 ? 80 : K == 6 ? 55 : 75;

  static constexpr int eta_bits = eta == 2 ? 3 : 4;  // bitlen(2 eta)
  static constexpr int z_bits = K == 4 ? 18 : 20;    // 1 + bitlen(gamma1 - 1)
  static constexpr int w1_bits = K == 4 ? 6 : 4;     // bitlen((q-1)/(2 gamma2) - 1)
  static constexpr std::size_t kCTildeBytes = lambda / 4;
  static constexpr std::size_t kEtaPolyBytes = 32 * eta_bits;
  static constexpr std::size_t kZPolyBytes = 32 * z_bits;
  static constexpr std::size_t kW1PolyBytes = 32 * w1_bits;

  static constexpr std::size_t kPkBytes = kSeedBytes + K * kT1PolyBytes;
  static constexpr std::size_t kSkBytes =
      2 * kSeedBytes + kCrhBytes + (l + K) * kEtaPolyBytes + K * kT0PolyBytes;
  static constexpr std::size_t kSigBytes = kCTildeBytes + l * kZPolyBytes + omega + K;
};

static_assert(Params<4>::kPkBytes == 1312 && Params<4>::kSkBytes == 2560 &&
              Params<4>::kSigBytes == 2420);
static_assert(Params<6>::kPkBytes == 1952 && Params<6>::kSkBytes == 4032 &&
              Params<6>::kSigBytes == 3309);
static_assert(Params<8>::kPkBytes == 2592 && Params<8>::kSkBytes == 4896 &&
              Params<8>::kSigBytes == 4627);
static_assert(Params<4>::beta == 78 && Params<6>::beta == 196 && Params<8>::beta == 120);

}  // namespace pqot::crypto::mldsa
