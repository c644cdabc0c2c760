// ML-KEM parameters (FIPS 203, section 8, Table 2) and the sizes derived from them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pqot::crypto::mlkem {

inline constexpr int kN = 256;       // polynomial degree
inline constexpr int kQ = 3329;      // modulus q
inline constexpr std::size_t kSymBytes = 32;
inline constexpr std::size_t kPolyBytes = 384;  // ByteEncode_12 of one polynomial

template <int K>
struct Params {
  static_assert(K == 2 || K == 3 || K == 4);
  static constexpr int k = K;
  static constexpr int eta1 = K == 2 ? 3 : 2;
  static constexpr int eta2 = 2;
  static constexpr int du = K == 4 ? 11 : 10;
  static constexpr int dv = K == 4 ? 5 : 4;

  static constexpr std::size_t kPolyVecBytes = kPolyBytes * K;
  static constexpr std::size_t kEkBytes = kPolyVecBytes + kSymBytes;            // 384k + 32
  static constexpr std::size_t kDkPkeBytes = kPolyVecBytes;                      // 384k
  static constexpr std::size_t kDkBytes = kDkPkeBytes + kEkBytes + 2 * kSymBytes;  // 768k + 96
  static constexpr std::size_t kCtUBytes = 32 * du * K;
  static constexpr std::size_t kCtVBytes = 32 * dv;
  static constexpr std::size_t kCtBytes = kCtUBytes + kCtVBytes;                 // 32(du k + dv)
};

}  // namespace pqot::crypto::mlkem
