// Multiplication in R_q = Z_(2^16)[x]/(x^256 + 1), the one costly operation of Saber (round-3
// specification, "Polynomial multiplication" among the implementation notes). Every method that is
// exact mod 2^16 gives the same bytes, so the fast multiplier is tested against the schoolbook one.
#pragma once

#include "poly.hpp"

namespace pqot::crypto::saber {

/// acc += a * b in Z_(2^16)[x]/(x^256 + 1): Karatsuba down to 32-coefficient schoolbook blocks.
/// Constant time: no branch or index depends on the coefficients.
void poly_mul_acc(Poly& acc, const Poly& a, const Poly& b) noexcept;

/// acc += a * b by the negacyclic schoolbook method: the plain definition, for tests.
void poly_mul_acc_schoolbook(Poly& acc, const Poly& a, const Poly& b) noexcept;

}  // namespace pqot::crypto::saber
