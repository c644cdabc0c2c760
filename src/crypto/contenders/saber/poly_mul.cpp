// Karatsuba multiplication in Z_(2^16)[x], then the reduction mod x^256 + 1. Karatsuba needs no
// division, so it is exact mod 2^16 (unlike Toom-Cook, which loses bits to its divisions by 2).
#include "poly_mul.hpp"

#include <cstddef>
#include <cstring>

#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::saber {

namespace {

using u16 = std::uint16_t;

// Eight uint16 lanes (GCC/Clang vector extension): SSE2 on x86-64, NEON on AArch64, and plain
// scalar code elsewhere. Lane arithmetic wraps mod 2^16 as the scheme wants.
typedef std::uint16_t Lanes __attribute__((vector_size(16)));
constexpr std::size_t kLanes = sizeof(Lanes) / sizeof(u16);

constexpr std::size_t kBase = 32;  // Karatsuba stops here and the schoolbook kernel takes over

// Scratch that mul_karatsuba<N> needs: the padded copy of b at the bottom, and above it 2N per
// level for the sums and the middle product.
template <std::size_t N>
constexpr std::size_t scratch_size() {
  if constexpr (N <= kBase) {
    return 3 * N;
  } else {
    return 2 * N + scratch_size<N / 2>();
  }
}

// r[0 .. 2N) = a * b (r[2N-1] = 0) by the schoolbook method, computed output-wise: the lanes of
// accumulator k hold r[8k .. 8k+8), and step i adds a[i] * b[8k+t-i] to lane t, reading b from a
// zero-padded copy so that every step is the same full-width multiply-add. The accumulators stay
// in registers, where writing r[i+j] += a[i]*b[j] row by row would store and reload overlapping
// memory on every row.
template <std::size_t N>
void mul_schoolbook(u16* __restrict r, const u16* __restrict a, const u16* __restrict b,
                    u16* __restrict padded) noexcept {
  constexpr std::size_t kBlocks = 2 * N / kLanes;
  // padded[N + m] = b[m] for 0 <= m < N, and 0 for the other m in [-N, 2N).
  std::memset(padded, 0, N * sizeof(u16));
  std::memcpy(padded + N, b, N * sizeof(u16));
  std::memset(padded + 2 * N, 0, N * sizeof(u16));
  Lanes acc[kBlocks] = {};
  for (std::size_t i = 0; i < N; ++i) {
    const Lanes ai = Lanes{} + a[i];
    for (std::size_t k = 0; k < kBlocks; ++k) {
      Lanes x;
      std::memcpy(&x, padded + N + kLanes * k - i, sizeof(x));
      acc[k] += ai * x;
    }
  }
  // The accumulators fit in vector registers (8 of them at N = 32), so there is no stack copy to
  // wipe; r and the padded copy are in the caller's buffers, which poly_mul_acc wipes.
  std::memcpy(r, acc, sizeof(acc));
}

// r[0 .. 2N) = a * b: one Karatsuba level, a = a0 + x^H a1, b = b0 + x^H b1 with H = N/2,
// a*b = z0 + x^H ((a0+a1)(b0+b1) - z0 - z2) + x^N z2. Temporaries live in `scratch` so that the
// caller can wipe them all at once.
template <std::size_t N>
void mul_karatsuba(u16* __restrict r, const u16* __restrict a, const u16* __restrict b,
                   u16* __restrict scratch) noexcept {
  if constexpr (N <= kBase) {
    mul_schoolbook<N>(r, a, b, scratch);
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
