// Inversion in S_3 and S_q (poly.hpp), in constant time: Bernstein and Yang's "divstep" iteration
// ("Fast constant-time gcd computation and modular inversion", 2019, section 6), which the NTRU
// round-3 reference uses too (specification, section 1.9.3).
//
// Over a prime field F_p (p = 2 or 3) and with d = n - 1 = deg Phi_n: f starts as Phi_n reversed
// (x^d Phi_n(1/x), all ones) and g as x^(d-1) a(1/x) for a reduced mod Phi_n. Each of the 2d - 1
// steps swaps f and g (and negates delta) when delta > 0 and g(0) != 0, then replaces g by
// (g - (g(0)/f(0)) f)/x and increments delta. v and w track x^k f_k = ... + v g_0 and
// x^k g_k = ... + w g_0. At the end f is the constant f(0) (the gcd, non-zero since Phi_n is
// irreducible mod 2 and mod 3 for these n) and a^-1 = x^d v(1/x) / f(0) mod Phi_n.
#include <cstdint>

#include "poly.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::ntru {

namespace {

// 0xffff if x != 0 (x in {0, 1, 2}), else 0.
inline std::uint16_t nonzero_mask(std::uint16_t x) {
  return static_cast<std::uint16_t>(0 - ((x + 3u) >> 2));
}

template <unsigned P>
inline std::uint16_t reduce(std::uint16_t x) {
  if constexpr (P == 2) {
    return x & 1;
  } else {
    return mod3(x);
  }
}

// r = a^-1 mod (P, Phi_n), a with coefficients in {0, ..., P-1} and any a[n-1].
template <unsigned P>
void inverse_mod_phi(Poly& r, const Poly& a, std::size_t n) {
  const std::size_t d = n - 1;
  Poly f, g, v, w;
  for (std::size_t i = 0; i < n; ++i) f.c[i] = 1;
  // a mod Phi_n, reversed into g: g[d-1-i] = a[i] - a[n-1].
  for (std::size_t i = 0; i < d; ++i) {
    g.c[d - 1 - i] = reduce<P>(static_cast<std::uint16_t>(a.c[i] + (P - 1) * a.c[n - 1]));
  }
  w.c[0] = 1;
  std::int32_t delta = 1;

  for (std::size_t step = 0; step < 2 * d - 1; ++step) {
    // Swap when delta > 0 and g(0) != 0.
    const auto swap = static_cast<std::uint16_t>(static_cast<std::uint32_t>(-delta) >> 31) &
                      nonzero_mask(g.c[0]);
    const std::uint16_t swap_mask = static_cast<std::uint16_t>(0 - swap);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t t = swap_mask & (f.c[i] ^ g.c[i]);
      f.c[i] ^= t;
      g.c[i] ^= t;
      t = swap_mask & (v.c[i] ^ w.c[i]);
      v.c[i] ^= t;
      w.c[i] ^= t;
    }
    const std::int32_t swap32 = -static_cast<std::int32_t>(swap);
    delta ^= swap32 & (delta ^ -delta);
    delta += 1;

    // c = -g(0)/f(0); in F_3, 1/f(0) = f(0), and in F_2 f(0) = 1.
    const std::uint16_t c =
        P == 2 ? g.c[0] : mod3(static_cast<std::uint16_t>(2 * g.c[0] * f.c[0]));
    for (std::size_t i = 0; i < n; ++i) {
      w.c[i] = reduce<P>(static_cast<std::uint16_t>(w.c[i] + c * v.c[i]));
    }
    for (std::size_t i = d; i > 0; --i) v.c[i] = v.c[i - 1];  // v = x v
    v.c[0] = 0;
    // g = (g + c f) / x; its constant term is now zero.
    for (std::size_t i = 0; i < d; ++i) {
      g.c[i] = reduce<P>(static_cast<std::uint16_t>(g.c[i + 1] + c * f.c[i + 1]));
    }
    g.c[d] = 0;
  }

  // W(x) = x^d v(1/x), W[i] = v[d-i]; reduced mod Phi_n (W[i] -= W[d]) and divided by f(0).
  const std::uint16_t scale = f.c[0];
  const std::uint16_t top = v.c[0];
  for (std::size_t i = 0; i < d; ++i) {
    r.c[i] = reduce<P>(
        static_cast<std::uint16_t>((v.c[d - i] + (P - 1) * top) * (P == 2 ? 1 : scale)));
  }
  r.c[d] = 0;
}

}  // namespace

void inverse_s3(Poly& r, const Poly& a, const Params& p) { inverse_mod_phi<3>(r, a, p.n); }

void inverse_rq(Poly& r, const Poly& a, const Params& p) {
  const std::size_t n = p.n;
  Poly a2;
  for (std::size_t i = 0; i < n; ++i) a2.c[i] = a.c[i] & 1;
  inverse_mod_phi<2>(r, a2, n);
  // Newton: r <- r (2 - a r) doubles the number of correct low bits; four steps from 1 bit give
  // 16 >= log q (specification, section 1.9.4; the reference's poly_R2_inv_to_Rq_inv).
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
