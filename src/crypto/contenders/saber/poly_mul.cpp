// Karatsuba multiplication in Z_(2^16)[x], then the reduction mod x^256 + 1. Karatsuba needs no
// division, so it is exact mod 2^16 (unlike Toom-Cook, which loses bits to its divisions by 2).
#include "poly_mul.hpp"

#include <cstddef>

#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::saber {

namespace {

using u16 = std::uint16_t;

constexpr std::size_t kBase = 32;  // below this, schoolbook (its inner loop vectorises)

// r[0 .. 2N-1) = a * b for a, b of N coefficients; r[2N-1] is set to 0.
template <std::size_t N>
void mul_schoolbook(u16* __restrict r, const u16* __restrict a, const u16* __restrict b) noexcept {
  for (std::size_t i = 0; i < 2 * N; ++i) r[i] = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const std::uint32_t ai = a[i];  // u16 * u16 would promote to int and could overflow
    for (std::size_t j = 0; j < N; ++j) r[i + j] = static_cast<u16>(r[i + j] + ai * b[j]);
  }
}

// Scratch that mul_karatsuba<N> needs: 2N for its own sums and middle product, then its children's.
template <std::size_t N>
constexpr std::size_t scratch_size() {
  if constexpr (N <= kBase) {
    return 0;
  } else {
    return 2 * N + scratch_size<N / 2>();
  }
}

// r[0 .. 2N) = a * b: one Karatsuba level, a = a0 + x^H a1, b = b0 + x^H b1 with H = N/2,
// a*b = z0 + x^H ((a0+a1)(b0+b1) - z0 - z2) + x^N z2. Temporaries live in `scratch` so that the
// caller can wipe them all at once.
template <std::size_t N>
void mul_karatsuba(u16* __restrict r, const u16* __restrict a, const u16* __restrict b,
                   u16* __restrict scratch) noexcept {
  if constexpr (N <= kBase) {
    (void)scratch;
    mul_schoolbook<N>(r, a, b);
  } else {
    constexpr std::size_t H = N / 2;
    u16* sa = scratch;
    u16* sb = scratch + H;
    u16* z1 = scratch + N;
    u16* rest = scratch + 2 * N;
    for (std::size_t i = 0; i < H; ++i) {
      sa[i] = static_cast<u16>(a[i] + a[i + H]);
      sb[i] = static_cast<u16>(b[i] + b[i + H]);
    }
    mul_karatsuba<H>(r, a, b, rest);              // z0 in r[0 .. N)
    mul_karatsuba<H>(r + N, a + H, b + H, rest);  // z2 in r[N .. 2N)
    mul_karatsuba<H>(z1, sa, sb, rest);
    for (std::size_t i = 0; i < N; ++i) z1[i] = static_cast<u16>(z1[i] - r[i] - r[N + i]);
    for (std::size_t i = 0; i < N; ++i) r[H + i] = static_cast<u16>(r[H + i] + z1[i]);
  }
}

}  // namespace

void poly_mul_acc(Poly& acc, const Poly& a, const Poly& b) noexcept {
  u16 prod[2 * kN];
  u16 scratch[scratch_size<kN>()];
  mul_karatsuba<kN>(prod, a.c.data(), b.c.data(), scratch);
  // x^256 = -1: coefficient i + 256 folds into i with a minus sign.
  for (std::size_t i = 0; i < kN; ++i) {
    acc.c[i] = static_cast<u16>(acc.c[i] + prod[i] - prod[i + kN]);
  }
  // One factor is secret (s or s'), so its partial products are too.
  secure_wipe(prod, sizeof(prod));
  secure_wipe(scratch, sizeof(scratch));
}

void poly_mul_acc_schoolbook(Poly& acc, const Poly& a, const Poly& b) noexcept {
  for (std::size_t i = 0; i < kN; ++i) {
    for (std::size_t j = 0; j < kN; ++j) {
      const auto t = static_cast<u16>(std::uint32_t{a.c[i]} * b.c[j]);
      const std::size_t k = i + j;
      if (k < kN) {
        acc.c[k] = static_cast<u16>(acc.c[k] + t);
      } else {
        acc.c[k - kN] = static_cast<u16>(acc.c[k - kN] - t);
      }
    }
  }
}

}  // namespace pqot::crypto::saber
