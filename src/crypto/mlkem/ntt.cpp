// The number-theoretic transform of FIPS 203 section 4.3 (Algorithms 9-12), with Montgomery
// arithmetic: zeta^BitRev7(i) is stored times 2^16 so that fqmul() yields the plain product.
#include <array>

#include "poly.hpp"
#include "reduce.hpp"

namespace pqot::crypto::mlkem {

namespace {

constexpr int bitrev7(int i) {
  int r = 0;
  for (int b = 0; b < 7; ++b) r |= ((i >> b) & 1) << (6 - b);
  return r;
}

constexpr std::int32_t pow_mod(std::int32_t base, int e) {
  std::int64_t r = 1;
  for (int i = 0; i < e; ++i) r = r * base % kQ;
  return static_cast<std::int32_t>(r);
}

// zetas[i] = 2^16 * 17^BitRev7(i) mod q, centered in (-q/2, q/2] (17 is the 256th root of unity).
constexpr std::array<std::int16_t, 128> make_zetas() {
  std::array<std::int16_t, 128> z{};
  for (int i = 0; i < 128; ++i) {
    std::int32_t v = static_cast<std::int32_t>(
        static_cast<std::int64_t>(kMont) * pow_mod(17, bitrev7(i)) % kQ);
    if (v > kQ / 2) v -= kQ;
    z[static_cast<std::size_t>(i)] = static_cast<std::int16_t>(v);
  }
  return z;
}

constexpr std::array<std::int16_t, 128> kZetas = make_zetas();
static_assert(kZetas[0] == -1044 && kZetas[1] == -758, "2^16 and 2^16 * 17^64 mod q, centered");

// 2^32 / 128 mod q: the 1/128 of the inverse NTT and the factor 2^16, applied through one fqmul.
constexpr std::int16_t kInvNttScale = [] {
  std::int64_t inv128 = pow_mod(128, kQ - 2);  // Fermat inverse
  return static_cast<std::int16_t>(static_cast<std::int64_t>(kMont) * kMont % kQ * inv128 % kQ);
}();
static_assert(kInvNttScale == 1441);

}  // namespace

void ntt(Poly& a) noexcept {
  auto& r = a.c;
  std::size_t k = 1;
  for (std::size_t len = 128; len >= 2; len >>= 1) {
    for (std::size_t start = 0; start < kN; start += 2 * len) {
      const std::int16_t zeta = kZetas[k++];
      for (std::size_t j = start; j < start + len; ++j) {
        const std::int16_t t = fqmul(zeta, r[j + len]);
        r[j + len] = static_cast<std::int16_t>(r[j] - t);
        r[j] = static_cast<std::int16_t>(r[j] + t);
      }
    }
  }
}

// Gentleman-Sande butterflies with the zetas in reverse order: (b - a) * zeta^BitRev7(k) equals
// (a - b) * zeta^-BitRev7(k') for the mirrored index, so no second table is needed.
void invntt_tomont(Poly& a) noexcept {
  auto& r = a.c;
  std::size_t k = 127;
  for (std::size_t len = 2; len <= 128; len <<= 1) {
    for (std::size_t start = 0; start < kN; start += 2 * len) {
      const std::int16_t zeta = kZetas[k--];
      for (std::size_t j = start; j < start + len; ++j) {
        const std::int16_t t = r[j];
        r[j] = barrett_reduce(static_cast<std::int16_t>(t + r[j + len]));
        r[j + len] = fqmul(zeta, static_cast<std::int16_t>(r[j + len] - t));
      }
    }
  }
  for (auto& x : r) x = fqmul(x, kInvNttScale);
}

namespace {
// Algorithm 12, BaseCaseMultiply: (a0 + a1 X)(b0 + b1 X) mod (X^2 - zeta).
inline void basemul_pair(std::int16_t r[2], const std::int16_t a[2], const std::int16_t b[2],
                         std::int16_t zeta) noexcept {
  r[0] = static_cast<std::int16_t>(fqmul(fqmul(a[1], b[1]), zeta) + fqmul(a[0], b[0]));
  r[1] = static_cast<std::int16_t>(fqmul(a[0], b[1]) + fqmul(a[1], b[0]));
}
}  // namespace

// Algorithm 11, MultiplyNTTs: 128 degree-one products, the i-th modulo X^2 - zeta^(2BitRev7(i)+1),
// which for the pair (4i, 4i+2) is +zetas[64+i] and -zetas[64+i].
void basemul_montgomery(Poly& r, const Poly& a, const Poly& b) noexcept {
  for (std::size_t i = 0; i < kN / 4; ++i) {
    const std::int16_t zeta = kZetas[64 + i];
    basemul_pair(&r.c[4 * i], &a.c[4 * i], &b.c[4 * i], zeta);
    basemul_pair(&r.c[4 * i + 2], &a.c[4 * i + 2], &b.c[4 * i + 2],
                 static_cast<std::int16_t>(-zeta));
  }
}

void basemul_montgomery_acc(Poly& r, const Poly& a, const Poly& b) noexcept {
  Poly t;
  basemul_montgomery(t, a, b);
  poly_add(r, t);
}

}  // namespace pqot::crypto::mlkem
