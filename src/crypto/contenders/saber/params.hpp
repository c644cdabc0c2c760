// Saber parameters (round-3 specification, "Parameters" table: LightSaber, Saber, FireSaber) and
// the byte sizes derived from them, as the reference implementation lays them out.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pqot::crypto::saber {

inline constexpr int kN = 256;                           // polynomial degree: R = Z[x]/(x^256 + 1)
inline constexpr int kEq = 13;                           // q = 2^13
inline constexpr int kEp = 10;                           // p = 2^10
inline constexpr std::size_t kSeedBytes = 32;            // seed_A
inline constexpr std::size_t kNoiseSeedBytes = 32;       // seed_s, seed_s'
inline constexpr std::size_t kKeyBytes = 32;             // m, z, the shared secret
inline constexpr std::size_t kHashBytes = 32;            // SHA3-256 output
inline constexpr std::size_t kPolyBytes = kEq * kN / 8;  // 416: one polynomial mod q
inline constexpr std::size_t kPolyCompressedBytes = kEp * kN / 8;  // 320: one polynomial mod p

// Rounding constant h1 = 2^(eq-ep-1): added before every rounding q -> p.
inline constexpr std::uint16_t kH1 = 1u << (kEq - kEp - 1);

template <int L>
struct Params {
  static_assert(L == 2 || L == 3 || L == 4);
  static constexpr int l = L;
  static constexpr int mu = L == 2 ? 10 : (L == 3 ? 8 : 6);  // secret distribution beta_mu
  static constexpr int et = L == 2 ? 3 : (L == 3 ? 4 : 6);   // T = 2^et
  // h2 = 2^(ep-2) - 2^(ep-et-1) + 2^(eq-ep-1): the decryption rounding constant.
  static constexpr std::uint16_t h2 =
      (1u << (kEp - 2)) - (1u << (kEp - et - 1)) + (1u << (kEq - kEp - 1));

  static constexpr std::size_t kPolyVecBytes = kPolyBytes * L;                      // mod q
  static constexpr std::size_t kPolyVecCompressedBytes = kPolyCompressedBytes * L;  // mod p
  static constexpr std::size_t kPolyCoinBytes = static_cast<std::size_t>(mu) * kN / 8;
  static constexpr std::size_t kScaleBytes = static_cast<std::size_t>(et) * kN / 8;  // c_m

  static constexpr std::size_t kPkePkBytes = kPolyVecCompressedBytes + kSeedBytes;  // b ‖ seed_A
  static constexpr std::size_t kPkeSkBytes = kPolyVecBytes;                         // s mod q
  static constexpr std::size_t kCtBytes = kPolyVecCompressedBytes + kScaleBytes;    // b' ‖ c_m
  // KEM secret key: s ‖ pk ‖ SHA3-256(pk) ‖ z.
  static constexpr std::size_t kSkBytes = kPkeSkBytes + kPkePkBytes + kHashBytes + kKeyBytes;
};

static_assert(Params<2>::kPkePkBytes == 672 && Params<2>::kSkBytes == 1568 &&
              Params<2>::kCtBytes == 736);
static_assert(Params<3>::kPkePkBytes == 992 && Params<3>::kSkBytes == 2304 &&
              Params<3>::kCtBytes == 1088);
static_assert(Params<4>::kPkePkBytes == 1312 && Params<4>::kSkBytes == 3040 &&
              Params<4>::kCtBytes == 1472);

}  // namespace pqot::crypto::saber
