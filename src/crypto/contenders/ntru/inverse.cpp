// Inversion in S_3 and S_q (poly.hpp), in constant time: Bernstein and Yang's "divstep" iteration
// ("Fast constant-time gcd computation and modular inversion", 2019, section 6), which the NTRU
// round-3 reference uses too (specification, the inverses in S_3 and S_q).
//
// Over a prime field F_p (p = 2 or 3) and with d = n - 1 = deg Phi_n: f starts as Phi_n reversed
// (x^d Phi_n(1/x), all ones) and g as x^(d-1) a(1/x) for a reduced mod Phi_n. Each of the 2d - 1
// steps swaps f and g (and negates delta) when delta > 0 and g(0) != 0, then replaces g by
// (g - (g(0)/f(0)) f)/x and increments delta. v and w track x^k f_k = ... + v g_0 and
// x^k g_k = ... + w g_0. At the end f is the constant f(0) (the gcd, non-zero since Phi_n is
// irreducible mod 2 and mod 3 for these n) and a^-1 = x^d v(1/x) / f(0) mod Phi_n. v never has
// a coefficient beyond x^d.
//
// The polynomials are bit-sliced, coefficient i in bit i of 64-bit words: one plane over F_2; two
// over F_3, "plus" and "minus", the value being +1, -1 or 0. A step is then a few word operations
// per 64 coefficients rather than one reduction per coefficient (about fifteen times fewer
// instructions than coefficient arrays).
#include <array>
#include <cstdint>

#include "poly.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::ntru {

namespace {

constexpr std::size_t kWords = (kMaxN + 63) / 64;
using Plane = std::array<std::uint64_t, kWords>;

// Wipes a set of planes when it leaves scope.
template <std::size_t Count>
struct Planes {
  std::array<Plane, Count> p{};
  ~Planes() { secure_wipe(p.data(), sizeof(p)); }
};

inline std::uint64_t mask_of(std::uint64_t bit) { return 0 - (bit & 1); }

// x = x / X (drop coefficient 0) and x = X x (coefficient d+1 and above stay zero).
inline void shift_down(Plane& x, std::size_t words) {
  for (std::size_t i = 0; i + 1 < words; ++i) x[i] = (x[i] >> 1) | (x[i + 1] << 63);
  x[words - 1] >>= 1;
}
inline void shift_up(Plane& x, std::size_t words) {
  for (std::size_t i = words - 1; i > 0; --i) x[i] = (x[i] << 1) | (x[i - 1] >> 63);
  x[0] <<= 1;
}

inline void cswap(Plane& a, Plane& b, std::uint64_t mask, std::size_t words) {
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint64_t t = mask & (a[i] ^ b[i]);
    a[i] ^= t;
    b[i] ^= t;
  }
}

// (xp, xm) += c (yp, ym) over F_3, c given by the masks cp (c = 1) and cm (c = -1).
inline void add_scaled3(Plane& xp, Plane& xm, const Plane& yp, const Plane& ym, std::uint64_t cp,
                        std::uint64_t cm, std::size_t words) {
  for (std::size_t i = 0; i < words; ++i) {
    const std::uint64_t sp = (cp & yp[i]) | (cm & ym[i]);  // c y, plus plane
    const std::uint64_t sm = (cp & ym[i]) | (cm & yp[i]);  // c y, minus plane
    const std::uint64_t zx = ~(xp[i] | xm[i]);
    const std::uint64_t zs = ~(sp | sm);
    const std::uint64_t rp = (xp[i] & zs) | (zx & sp) | (xm[i] & sm);
    const std::uint64_t rm = (xm[i] & zs) | (zx & sm) | (xp[i] & sp);
    xp[i] = rp;
    xm[i] = rm;
  }
}

// The step's swap condition as a mask: delta > 0 and g(0) != 0; delta updated.
inline std::uint64_t divstep_swap(std::int32_t& delta, std::uint64_t g0_nonzero) {
  const std::uint64_t positive = static_cast<std::uint32_t>(-delta) >> 31;
  const std::uint64_t swap = mask_of(positive & g0_nonzero);
  const auto swap32 = static_cast<std::int32_t>(swap);
  delta ^= swap32 & (delta ^ -delta);
  delta += 1;
  return swap;
}

}  // namespace

void inverse_s3(Poly& r, const Poly& a, const Params& p) {
  const std::size_t n = p.n, d = n - 1, words = (n + 63) / 64;
  Planes<8> s;
  auto& [fp, fm, gp, gm, vp, vm, wp, wm] = s.p;
  for (std::size_t i = 0; i < n; ++i) fp[i / 64] |= std::uint64_t{1} << (i % 64);
  // g[d-1-i] = a[i] - a[n-1] mod 3, as bits.
  for (std::size_t i = 0; i < d; ++i) {
    const std::uint16_t c = mod3(static_cast<std::uint16_t>(a.c[i] + 2 * mod3(a.c[n - 1])));
    const std::size_t k = d - 1 - i;
    gp[k / 64] |= std::uint64_t{c & 1u} << (k % 64);
    gm[k / 64] |= static_cast<std::uint64_t>(c >> 1) << (k % 64);
  }
  wp[0] = 1;
  std::int32_t delta = 1;

  for (std::size_t step = 0; step < 2 * d - 1; ++step) {
    const std::uint64_t swap = divstep_swap(delta, (gp[0] | gm[0]) & 1);
    cswap(fp, gp, swap, words);
    cswap(fm, gm, swap, words);
    cswap(vp, wp, swap, words);
    cswap(vm, wm, swap, words);
    // c = -g(0)/f(0) = -g(0) f(0): "minus" when g(0) f(0) = +1.
    const std::uint64_t prod_plus = (gp[0] & fp[0]) | (gm[0] & fm[0]);
    const std::uint64_t prod_minus = (gp[0] & fm[0]) | (gm[0] & fp[0]);
    const std::uint64_t cp = mask_of(prod_minus), cm = mask_of(prod_plus);
    add_scaled3(wp, wm, vp, vm, cp, cm, words);
    shift_up(vp, words);
    shift_up(vm, words);
    add_scaled3(gp, gm, fp, fm, cp, cm, words);
    shift_down(gp, words);
    shift_down(gm, words);
  }

  // r[i] = (v[d-i] - v[0]) f(0) mod 3; 1/f(0) = f(0).
  auto coefficient = [&](std::size_t j) {
    return static_cast<std::uint16_t>(((vp[j / 64] >> (j % 64)) & 1) |
                                      (((vm[j / 64] >> (j % 64)) & 1) << 1));
  };
  const std::uint16_t scale = static_cast<std::uint16_t>((fp[0] & 1) | ((fm[0] & 1) << 1));
  const std::uint16_t top = coefficient(0);
  for (std::size_t i = 0; i < d; ++i) {
    r.c[i] = mod3(static_cast<std::uint16_t>((coefficient(d - i) + 2 * top) * scale));
  }
  r.c[d] = 0;
}

namespace {

// a^-1 mod (2, Phi_n) into r, coefficients 0 or 1.
void inverse_s2(Poly& r, const Poly& a, std::size_t n) {
  const std::size_t d = n - 1, words = (n + 63) / 64;
  Planes<4> s;
  auto& [f, g, v, w] = s.p;
  for (std::size_t i = 0; i < n; ++i) f[i / 64] |= std::uint64_t{1} << (i % 64);
  for (std::size_t i = 0; i < d; ++i) {
    const std::uint64_t c = (a.c[i] ^ a.c[n - 1]) & 1u;
    const std::size_t k = d - 1 - i;
    g[k / 64] |= c << (k % 64);
  }
  w[0] = 1;
  std::int32_t delta = 1;
  for (std::size_t step = 0; step < 2 * d - 1; ++step) {
    const std::uint64_t swap = divstep_swap(delta, g[0] & 1);
    cswap(f, g, swap, words);
    cswap(v, w, swap, words);
    const std::uint64_t c = mask_of(g[0]);  // f(0) = 1 over F_2
    for (std::size_t i = 0; i < words; ++i) {
      w[i] ^= c & v[i];
      g[i] ^= c & f[i];
    }
    shift_up(v, words);
    shift_down(g, words);
  }
  const std::uint64_t top = v[0] & 1;
  for (std::size_t i = 0; i < d; ++i) {
    const std::size_t j = d - i;
    r.c[i] = static_cast<std::uint16_t>(((v[j / 64] >> (j % 64)) ^ top) & 1);
  }
  r.c[d] = 0;
}

}  // namespace

void inverse_rq(Poly& r, const Poly& a, const Params& p) {
  const std::size_t n = p.n;
  inverse_s2(r, a, n);
  // Newton: r <- r (2 - a r) doubles the number of correct low bits; four steps from 1 bit give
  // 16 >= log q (the reference's poly_R2_inv_to_Rq_inv).
  Poly minus_a, t, s;
  for (std::size_t i = 0; i < n; ++i) minus_a.c[i] = static_cast<std::uint16_t>(0 - a.c[i]);
  for (int round = 0; round < 4; ++round) {
    mul_rq(t, r, minus_a, n);
    t.c[0] = static_cast<std::uint16_t>(t.c[0] + 2);
    mul_rq(s, t, r, n);
    r = s;
  }
}

}  // namespace pqot::crypto::ntru
