// Polynomials of R_q = Z_q[X]/(X^256 + 1) for ML-DSA and the FIPS 204 operations on them: the NTT
// (section 7.5, Algorithms 41-42), rounding (section 7.4, Algorithms 35-40), the bit packing of
// section 7.1 (Algorithms 16-21, 28) and sampling (section 7.3, Algorithms 29-34).
#pragma once

#include <array>
#include <cstdint>

#include "params.hpp"

namespace pqot::crypto::mldsa {

struct Poly {
  alignas(32) std::array<std::int32_t, kN> c;
};

template <int N>
struct PolyVec {
  std::array<Poly, N> p;
};

// ---- ntt.cpp (portable) and ntt_avx2.cpp (AVX2), chosen per call: ../simd.hpp -----------------
/// Algorithm 41, in place. Input |coefficients| < q; output |coefficients| < 9q.
void ntt(Poly& a) noexcept;
/// Algorithm 42, in place, times the Montgomery factor 2^32 (which cancels the 2^-32 of
/// poly_pointwise). Input |coefficients| < q (reduce32 output, or poly_pointwise output as in
/// times_challenge); output |coefficients| < q.
void invntt_tomont(Poly& a) noexcept;
/// r = a o b * 2^-32 in the NTT domain (Algorithm 45, MultiplyNTT, in Montgomery form).
/// Requires |a|, |b| < 9q; output in (-q, q).
void poly_pointwise(Poly& r, const Poly& a, const Poly& b) noexcept;
/// r = sum_j a[j] o b[j] * 2^-32 (the inner product of a row of A_hat with a vector, Algorithm 45
/// summed), accumulated in 64 bits with one Montgomery reduction per coefficient. Requires
/// |a| < q, |b| < 9q and n <= 7 (|sum| < 63 q^2 < q 2^31); output in (-q, q).
void poly_dot(Poly& r, const Poly* a, const Poly* b, std::size_t n) noexcept;

// ---- poly.cpp ----------------------------------------------------------------------------------
void poly_add(Poly& r, const Poly& a, const Poly& b) noexcept;  // r = a + b (no reduction)
void poly_sub(Poly& r, const Poly& a, const Poly& b) noexcept;  // r = a - b (no reduction)
void poly_reduce(Poly& a) noexcept;                             // reduce32 on each coefficient
void poly_freeze(Poly& a) noexcept;                             // representatives in [0, q)
void poly_shiftl(Poly& a) noexcept;                             // times 2^d
/// True iff some coefficient (reduce32 output) has |a_i| >= bound; bound <= (q-1)/8. Runs in
/// constant time; the caller declassifies the answer.
bool poly_exceeds(const Poly& a, std::int32_t bound) noexcept;

/// Algorithm 35, Power2Round, for a in [0, q): a1 (high) and a0 = a - a1 2^d in (-2^12, 2^12].
void poly_power2round(Poly& a1, Poly& a0, const Poly& a) noexcept;
/// Algorithm 36, Decompose, for a in [0, q) and 2 gamma2 = alpha.
void poly_decompose(Poly& a1, Poly& a0, const Poly& a, std::int32_t gamma2) noexcept;
/// Algorithm 37, HighBits, for a in [0, q).
void poly_highbits(Poly& a1, const Poly& a, std::int32_t gamma2) noexcept;
/// Algorithm 39, MakeHint, coefficient-wise: h_i = [HighBits(r_i) != HighBits(r_i + z_i)], given
/// r_i and r_i + z_i already in [0, q). Returns the number of ones.
int poly_make_hint(Poly& h, const Poly& r, const Poly& r_plus_z, std::int32_t gamma2) noexcept;
/// Algorithm 40, UseHint, coefficient-wise, for r in [0, q) and h in {0, 1}. Public inputs only.
void poly_use_hint(Poly& r1, const Poly& r, const Poly& h, std::int32_t gamma2) noexcept;

/// SimpleBitPack (Algorithm 16): 256 coefficients in [0, 2^bits), 32 * bits bytes.
void poly_pack_simple(std::uint8_t* out, const Poly& a, int bits) noexcept;
/// SimpleBitUnpack (Algorithm 18).
void poly_unpack_simple(Poly& r, const std::uint8_t* in, int bits) noexcept;
/// BitPack(w, a, b) (Algorithm 17): stores b - w_i in `bits` = bitlen(a + b) bits.
void poly_pack(std::uint8_t* out, const Poly& w, std::int32_t b, int bits) noexcept;
/// BitUnpack(v, a, b) (Algorithm 19): w_i = b - (bits-bit value).
void poly_unpack(Poly& w, const std::uint8_t* in, std::int32_t b, int bits) noexcept;

// ---- sampling.cpp ------------------------------------------------------------------------------
/// RejNTTPoly(rho || s || r) (Algorithm 30), the entry A[r][s] of ExpandA (Algorithm 32).
void sample_ntt(Poly& a, const std::uint8_t rho[kSeedBytes], std::uint8_t s,
                std::uint8_t r) noexcept;
/// RejBoundedPoly(rho' || IntegerToBytes(nonce, 2)) (Algorithm 31), one entry of ExpandS
/// (Algorithm 33), for eta 2 or 4.
void sample_eta(Poly& a, const std::uint8_t rho_prime[kCrhBytes], std::uint16_t nonce,
                int eta) noexcept;
/// One entry of ExpandMask (Algorithm 34): BitUnpack(H(rho'' || IntegerToBytes(nonce, 2)),
/// gamma1 - 1, gamma1), with z_bits = 1 + bitlen(gamma1 - 1).
void sample_mask(Poly& y, const std::uint8_t rho2[kCrhBytes], std::uint16_t nonce,
                 std::int32_t gamma1, int z_bits) noexcept;
/// SampleInBall(c~) (Algorithm 29): tau coefficients +-1, the rest 0.
void sample_in_ball(Poly& c, const std::uint8_t* c_tilde, std::size_t c_tilde_len,
                    int tau) noexcept;

// ---- sampling_x4.cpp: four entries at once over ../keccak_x4.hpp ------------------------------
/// Four sample_ntt calls in one: a[k] = RejNTTPoly(rho || s[k] || r[k]). first_blocks (1-5, the
/// SHAKE128 blocks squeezed before the first refill) changes only the speed; tests lower it so that
/// the rarely taken refill path runs.
void sample_ntt_x4(Poly* const a[4], const std::uint8_t rho[kSeedBytes], const std::uint8_t s[4],
                   const std::uint8_t r[4], std::size_t first_blocks = 5) noexcept;
/// Four sample_mask calls in one: y[k] from nonce[k].
void sample_mask_x4(Poly* const y[4], const std::uint8_t rho2[kCrhBytes],
                    const std::uint16_t nonce[4], std::int32_t gamma1, int z_bits) noexcept;

}  // namespace pqot::crypto::mldsa
