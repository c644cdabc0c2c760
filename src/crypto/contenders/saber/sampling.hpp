// The samplers of Saber (round-3 specification, "GenMatrix" and "GenSecret"): the public matrix A
// from seed_A and the secret vectors from their noise seeds, both through SHAKE128.
#pragma once

#include <cstdint>

#include "params.hpp"
#include "poly.hpp"

namespace pqot::crypto::saber {

/// beta_mu: coefficient j from bits [j*mu, (j+1)*mu) of `buf` (32 * mu bytes), the number of ones
/// in its low mu/2 bits minus the number in its high mu/2 bits (mod 2^16). Constant time.
void sample_cbd(Poly& s, const std::uint8_t* buf, int mu) noexcept;

/// GenMatrix: SHAKE128(seed_A) to l*l*416 bytes; A[i][j] is the 13-bit polynomial at
/// offset (i*l + j) * 416.
template <int L>
void gen_matrix(PolyMatrix<L>& a, const std::uint8_t seed_a[kSeedBytes]) noexcept;

/// GenSecret: SHAKE128(seed) to l * 32 * mu bytes; s[i] = beta_mu of the i-th 32 * mu bytes.
template <int L>
void gen_secret(PolyVec<L>& s, const std::uint8_t seed[kNoiseSeedBytes]) noexcept;

}  // namespace pqot::crypto::saber
