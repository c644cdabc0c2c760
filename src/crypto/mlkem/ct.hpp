// Constant-time helpers for ML-KEM, and the valgrind hook that marks derived public values.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../declassify.hpp"

namespace pqot::crypto::mlkem {

// What ML-KEM declassifies: the matrix seed rho and the result of the dk hash check.
using crypto::declassify;

/// Hides a value from the optimiser so that mask arithmetic is not turned back into a branch.
template <class T>
inline T value_barrier(T v) noexcept {
  __asm__("" : "+r"(v));
  return v;
}

/// 0xff if a and b (same length) differ, 0x00 if equal; constant time.
inline std::uint8_t ct_differ_mask(const std::uint8_t* a, const std::uint8_t* b,
                                   std::size_t n) noexcept {
  std::uint64_t diff = 0;
  for (std::size_t i = 0; i < n; ++i) diff |= static_cast<std::uint64_t>(a[i] ^ b[i]);
  diff = value_barrier(diff);
  // (diff | -diff) has its top bit set exactly when diff != 0.
  return static_cast<std::uint8_t>(0 - ((diff | (0 - diff)) >> 63));
}

/// dst = mask ? src : dst, byte-wise; mask is 0x00 or 0xff.
inline void ct_select(std::uint8_t* dst, const std::uint8_t* src, std::size_t n,
                      std::uint8_t mask) noexcept {
  mask = value_barrier(mask);
  for (std::size_t i = 0; i < n; ++i) dst[i] ^= mask & (dst[i] ^ src[i]);
}

}  // namespace pqot::crypto::mlkem
