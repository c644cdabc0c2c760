// Polynomials of Saber: 256 coefficients in uint16_t, i.e. modulo 2^16. Since q = 2^13, p = 2^10
// and T = 2^et all divide 2^16, arithmetic mod 2^16 is correct mod each of them at once; the
// packing functions keep only the low bits that a modulus asks for.
#pragma once

#include <array>
#include <cstdint>

#include "params.hpp"

namespace pqot::crypto::saber {

struct Poly {
  std::array<std::uint16_t, kN> c;
};

template <int L>
struct PolyVec {
  std::array<Poly, L> p;
};

template <int L>
using PolyMatrix = std::array<PolyVec<L>, L>;

}  // namespace pqot::crypto::saber
