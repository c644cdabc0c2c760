// Polynomials of R_q = Z_q[X]/(X^256 + 1) and vectors of them, with the FIPS 203 operations on
// them: NTT (Algorithms 9-12), encodings and compression (Algorithms 4-5, section 4.2.1) and
// sampling (Algorithms 7-8).
#pragma once

#include <array>
#include <cstdint>

#include "params.hpp"
#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto::mlkem {

struct Poly {
  alignas(32) std::array<std::int16_t, kN> c;
};

template <int K>
struct PolyVec {
  std::array<Poly, K> p;
};

// ---- ntt.cpp -----------------------------------------------------------------------------------
/// Algorithm 9, in place. Input |coefficients| < q; output |coefficients| < 8q (not reduced).
void ntt(Poly& a) noexcept;
/// Algorithm 10, in place, times the Montgomery factor 2^16 (which cancels the 2^-16 of
/// basemul). Output |coefficients| < q.
void invntt_tomont(Poly& a) noexcept;
/// For each degree-one factor i of b (NTT domain), b[2i+1] * gamma_i: the odd coefficient times
/// the factor's root, which every product with b needs. Computed once per vector element and reused
/// for all K rows of a matrix-vector product.
struct MulCache {
  std::array<std::int16_t, kN / 2> c;
};
void mulcache_compute(MulCache& cache, const Poly& b) noexcept;
/// r = sum_j a[j] o b[j] in the NTT domain (Algorithms 11-12), times 2^-16, accumulated in 32 bits
/// with one Montgomery reduction per coefficient. Requires |a| < 2^12, |b| <= q/2 and the caches
/// of b. Output |coefficients| < q.
template <int K>
void polyvec_basemul_acc_montgomery(Poly& r, const PolyVec<K>& a, const PolyVec<K>& b,
                                    const std::array<MulCache, K>& b_cache) noexcept;

// ---- poly.cpp ----------------------------------------------------------------------------------
void poly_reduce(Poly& a) noexcept;                      // centered representatives
void poly_tomont(Poly& a) noexcept;                      // times 2^16 mod q
void poly_add(Poly& r, const Poly& a) noexcept;          // r += a (no reduction)
void poly_sub(Poly& r, const Poly& a, const Poly& b) noexcept;  // r = a - b (no reduction)

/// ByteEncode_12 (Algorithm 5) of a reduced polynomial, 384 bytes.
void poly_to_bytes(std::uint8_t out[kPolyBytes], const Poly& a) noexcept;
/// ByteDecode_12 (Algorithm 6): coefficients in [0, 4096), not reduced mod q.
void poly_from_bytes(Poly& r, const std::uint8_t in[kPolyBytes]) noexcept;
/// True iff every 12-bit value of the encoding is below q (the modulus check, section 7.2).
bool poly_bytes_are_reduced(const std::uint8_t in[kPolyBytes]) noexcept;

/// ByteEncode_d(Compress_d(a)) for d in {1, 4, 5, 10, 11}; writes 32*d bytes.
void poly_compress(std::uint8_t* out, const Poly& a, int d) noexcept;
/// Decompress_d(ByteDecode_d(in)), reading 32*d bytes; coefficients in [0, q).
void poly_decompress(Poly& r, const std::uint8_t* in, int d) noexcept;
/// Decompress_1(ByteDecode_1(m)) for a 32-byte message.
void poly_from_msg(Poly& r, const std::uint8_t msg[kSymBytes]) noexcept;
/// ByteEncode_1(Compress_1(a)) into a 32-byte message.
void poly_to_msg(std::uint8_t msg[kSymBytes], const Poly& a) noexcept;

// ---- sampling.cpp ------------------------------------------------------------------------------
/// SampleNTT(rho || x || y) (Algorithm 7): rejection sampling from SHAKE128.
void sample_ntt(Poly& r, const std::uint8_t rho[kSymBytes], std::uint8_t x, std::uint8_t y) noexcept;
/// SamplePolyCBD_eta(PRF_eta(sigma, nonce)) (Algorithm 8 with the PRF of section 4.1), eta 2 or 3.
void sample_cbd(Poly& r, const std::uint8_t sigma[kSymBytes], std::uint8_t nonce, int eta) noexcept;

}  // namespace pqot::crypto::mlkem
