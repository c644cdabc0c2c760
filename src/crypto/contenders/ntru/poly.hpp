// NTRU's polynomial arithmetic (round-3 specification, its rings and the maps between them; names as the reference
// implementation's poly.c). A Poly holds n coefficients as uint16_t; the rings are
//   R_q = Z_q[x]/(x^n - 1),  S_q = Z_q[x]/Phi_n,  S_3 = Z_3[x]/Phi_n,  Phi_n = 1 + x + ... + x^(n-1).
// q divides 2^16, so R_q arithmetic runs modulo 2^16 and is reduced mod q only where the
// reference reduces (packing, the S_3 maps); the results are the reference's bit for bit.
// Every function is constant time in the coefficient values.
#pragma once

#include <array>
#include <cstdint>

#include "params.hpp"

namespace pqot::crypto::ntru {

struct Poly {
  alignas(32) std::array<std::uint16_t, kPolyLength> c{};
  Poly() = default;
  Poly(const Poly&) = default;
  Poly& operator=(const Poly&) = default;
  ~Poly();  // wipes: most polynomials here are secret
};

/// a mod 3, for any 16-bit a, without a branch or a division instruction.
inline std::uint16_t mod3(std::uint16_t a) {
  const std::uint32_t quotient = (static_cast<std::uint32_t>(a) * 43691u) >> 17;  // floor(a/3)
  return static_cast<std::uint16_t>(a - 3 * quotient);
}

/// r = a * b in R_q (cyclic convolution, coefficients mod 2^16). r may not alias a or b.
void mul_rq(Poly& r, const Poly& a, const Poly& b, std::size_t n);
/// r = a * b in S_q: mul_rq, then reduction mod Phi_n (r[i] -= r[n-1]).
void mul_sq(Poly& r, const Poly& a, const Poly& b, std::size_t n);
/// r = a * b in S_3 (a, b with coefficients in {0,1,2}): mul_rq, mod q, then mod (3, Phi_n).
void mul_s3(Poly& r, const Poly& a, const Poly& b, const Params& p);

/// Reduces r mod (3, Phi_n): r[i] = (r[i] + 2 r[n-1]) mod 3, leaving r[n-1] = 0.
void mod_3_phi(Poly& r, std::size_t n);
/// Reduces r mod Phi_n over Z_q: r[i] -= r[n-1].
void mod_q_phi(Poly& r, std::size_t n);
/// r = a mod (3, Phi_n), reading a's coefficients as representatives in [-q/2, q/2).
void rq_to_s3(Poly& r, const Poly& a, const Params& p);
/// {0, 1, 2} -> {0, 1, q-1}: a ternary polynomial as an element of Z_q.
void z3_to_zq(Poly& r, const Params& p);
/// {0, 1, q-1} (mod q) -> {0, 1, 2}.
void trinary_zq_to_z3(Poly& r, const Params& p);
/// r = Lift(m) (specification, "Lift"): m itself, as an element of Z_q, for HPS; (x-1) times the
/// canonical S_3 representative of m/(x-1) for HRSS. m has coefficients in {0, 1, 2}.
void lift(Poly& r, const Poly& m, const Params& p);

/// r = a^-1 in S_3 (a with coefficients in {0,1,2}); r[n-1] = 0. Phi_n is irreducible mod 3
/// for every parameter set, so every a != 0 mod (3, Phi_n) has an inverse.
void inverse_s3(Poly& r, const Poly& a, const Params& p);
/// r = a^-1 in S_q, as the reference computes it: the inverse mod (2, Phi_n), lifted to 2^16 by
/// Newton iteration in R_q. Only r mod (q, Phi_n) is meaningful.
void inverse_rq(Poly& r, const Poly& a, const Params& p);

}  // namespace pqot::crypto::ntru
