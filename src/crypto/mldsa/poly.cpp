// Coefficient-wise arithmetic, rounding (FIPS 204 section 7.4, Algorithms 35-40) and bit packing
// (section 7.1, Algorithms 16-19) of ML-DSA polynomials.
#include "poly.hpp"

#include <cstdlib>
#include <type_traits>

#include "reduce.hpp"

namespace pqot::crypto::mldsa {

void poly_add(Poly& r, const Poly& a, const Poly& b) noexcept {
  for (std::size_t i = 0; i < kN; ++i) r.c[i] = a.c[i] + b.c[i];
}

void poly_sub(Poly& r, const Poly& a, const Poly& b) noexcept {
  for (std::size_t i = 0; i < kN; ++i) r.c[i] = a.c[i] - b.c[i];
}

void poly_reduce(Poly& a) noexcept {
  for (auto& x : a.c) x = reduce32(x);
}

void poly_freeze(Poly& a) noexcept {
  for (auto& x : a.c) x = freeze(x);
}

void poly_shiftl(Poly& a) noexcept {
  for (auto& x : a.c) x *= (1 << kD);
}

// A reduce32 representative below (q-1)/8 in absolute value is the centered one, so the test
// below is ||a mod+- q||_inf >= bound (section 2.3).
bool poly_exceeds(const Poly& a, std::int32_t bound) noexcept {
  std::uint32_t over = 0;
  for (const std::int32_t x : a.c) {
    const std::int32_t abs = x - ((x >> 31) & (2 * x));         // |x| without a branch
    over |= static_cast<std::uint32_t>(bound - 1 - abs) >> 31;  // 1 iff abs >= bound
  }
  return over != 0;
}

// Algorithm 35: r0 = r mod+- 2^d in (-2^(d-1), 2^(d-1)], r1 = (r - r0) / 2^d.
void poly_power2round(Poly& a1, Poly& a0, const Poly& a) noexcept {
  for (std::size_t i = 0; i < kN; ++i) {
    const std::int32_t hi = (a.c[i] + (1 << (kD - 1)) - 1) >> kD;
    a1.c[i] = hi;
    a0.c[i] = a.c[i] - (hi << kD);
  }
}

namespace {

// Algorithm 36 on one coefficient r in [0, q): r0 = r mod+- 2 gamma2 in (-gamma2, gamma2],
// r1 = (r - r0) / (2 gamma2); the case r - r0 = q - 1 becomes r1 = 0, r0 - 1. Division by the
// constant 2 gamma2 compiles to a multiplication, and the special case is a mask.
inline void decompose(std::int32_t r, std::int32_t gamma2, std::int32_t& r1,
                      std::int32_t& r0) noexcept {
  const std::int32_t alpha = 2 * gamma2;
  const std::int32_t top = (kQ - 1) / alpha;
  std::int32_t hi = static_cast<std::int32_t>(static_cast<std::uint32_t>(r + gamma2 - 1) /
                                              static_cast<std::uint32_t>(alpha));
  std::int32_t lo = r - hi * alpha;
  // is_top = 1 iff hi == top (hi <= top, so hi ^ top is small and non-negative).
  const auto is_top = static_cast<std::int32_t>((static_cast<std::uint32_t>(hi ^ top) - 1) >> 31);
  hi -= is_top * top;
  lo -= is_top;
  r1 = hi;
  r0 = lo;
}

// The constant divisor lets the compiler replace the division; one instance per gamma2.
inline void decompose_any(std::int32_t r, std::int32_t gamma2, std::int32_t& r1,
                          std::int32_t& r0) noexcept {
  if (gamma2 == (kQ - 1) / 88) {
    decompose(r, (kQ - 1) / 88, r1, r0);
  } else {
    decompose(r, (kQ - 1) / 32, r1, r0);
  }
}

}  // namespace

void poly_decompose(Poly& a1, Poly& a0, const Poly& a, std::int32_t gamma2) noexcept {
  for (std::size_t i = 0; i < kN; ++i) decompose_any(a.c[i], gamma2, a1.c[i], a0.c[i]);
}

void poly_highbits(Poly& a1, const Poly& a, std::int32_t gamma2) noexcept {
  std::int32_t lo = 0;
  for (std::size_t i = 0; i < kN; ++i) decompose_any(a.c[i], gamma2, a1.c[i], lo);
}

int poly_make_hint(Poly& h, const Poly& r, const Poly& r_plus_z, std::int32_t gamma2) noexcept {
  int ones = 0;
  std::int32_t r1 = 0, v1 = 0, lo = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    decompose_any(r.c[i], gamma2, r1, lo);
    decompose_any(r_plus_z.c[i], gamma2, v1, lo);
    // [r1 != v1] as 0/1 without a branch
    const std::uint32_t diff = static_cast<std::uint32_t>(r1 ^ v1);
    const auto bit = static_cast<std::int32_t>((diff | (0u - diff)) >> 31);
    h.c[i] = bit;
    ones += bit;
  }
  return ones;
}

// Algorithm 40. Verification only: h and r are public, so plain branches are fine.
void poly_use_hint(Poly& r1, const Poly& r, const Poly& h, std::int32_t gamma2) noexcept {
  const std::int32_t m = (kQ - 1) / (2 * gamma2);
  for (std::size_t i = 0; i < kN; ++i) {
    std::int32_t hi = 0, lo = 0;
    decompose_any(r.c[i], gamma2, hi, lo);
    if (h.c[i] != 0) hi = lo > 0 ? (hi + 1) % m : (hi - 1 + m) % m;
    r1.c[i] = hi;
  }
}

namespace {

// Little-endian bit stream of 256 values of Bits bits each (section 7.1: IntegerToBits, then
// BitsToBytes), 32 * Bits bytes; value(i) gives the i-th value. No temporary copy of the
// coefficients, which may be secret. Bits is a template parameter so that the compiler knows the
// byte pattern of the inner loops (with_bits picks the instance).
template <int Bits, class F>
void pack_bits(std::uint8_t* out, F&& value) noexcept {
  std::uint64_t acc = 0;
  int held = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    acc |= static_cast<std::uint64_t>(value(i)) << held;
    held += Bits;
    while (held >= 8) {
      *out++ = static_cast<std::uint8_t>(acc);
      acc >>= 8;
      held -= 8;
    }
  }
}

// The inverse: store(i, v) receives the i-th Bits-bit value.
template <int Bits, class F>
void unpack_bits(const std::uint8_t* in, F&& store) noexcept {
  constexpr std::uint64_t mask = (std::uint64_t{1} << Bits) - 1;
  std::uint64_t acc = 0;
  int held = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    while (held < Bits) {
      acc |= static_cast<std::uint64_t>(*in++) << held;
      held += 8;
    }
    store(i, static_cast<std::int32_t>(acc & mask));
    acc >>= Bits;
    held -= Bits;
  }
}

// Calls f(std::integral_constant<int, bits>{}) for the widths FIPS 204 uses: 3 and 4 (eta),
// 4 and 6 (w1), 10 (t1), 13 (t0), 18 and 20 (z).
template <class F>
void with_bits(int bits, F&& f) noexcept {
  switch (bits) {
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 6:
      return f(std::integral_constant<int, 6>{});
    case 10:
      return f(std::integral_constant<int, 10>{});
    case 13:
      return f(std::integral_constant<int, 13>{});
    case 18:
      return f(std::integral_constant<int, 18>{});
    case 20:
      return f(std::integral_constant<int, 20>{});
    default:
      std::abort();  // no other width occurs in FIPS 204; a caller passing one is a bug
  }
}

}  // namespace

void poly_pack_simple(std::uint8_t* out, const Poly& a, int bits) noexcept {
  with_bits(bits, [&](auto b) {
    pack_bits<b()>(out, [&](std::size_t i) { return static_cast<std::uint32_t>(a.c[i]); });
  });
}

void poly_unpack_simple(Poly& r, const std::uint8_t* in, int bits) noexcept {
  with_bits(bits, [&](auto b) {
    unpack_bits<b()>(in, [&](std::size_t i, std::int32_t v) { r.c[i] = v; });
  });
}

void poly_pack(std::uint8_t* out, const Poly& w, std::int32_t b, int bits) noexcept {
  with_bits(bits, [&](auto n) {
    pack_bits<n()>(out, [&](std::size_t i) { return static_cast<std::uint32_t>(b - w.c[i]); });
  });
}

void poly_unpack(Poly& w, const std::uint8_t* in, std::int32_t b, int bits) noexcept {
  with_bits(bits, [&](auto n) {
    unpack_bits<n()>(in, [&](std::size_t i, std::int32_t v) { w.c[i] = b - v; });
  });
}

}  // namespace pqot::crypto::mldsa
