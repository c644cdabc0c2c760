// K-PKE, the CPA-secure encryption scheme under ML-KEM (FIPS 203 section 5, Algorithms 13-15).
// Internal to the ML-KEM implementation; parameterised by the module rank K.
#pragma once

#include <cstdint>

#include <array>

#include "params.hpp"
#include "poly.hpp"

namespace pqot::crypto::mlkem {

/// An encapsulation key decoded once for many encryptions: t_hat = ByteDecode_12(ek) and the
/// rows of A^T sampled from rho (Algorithm 14 lines 2-8).
template <int K>
struct ExpandedEk {
  PolyVec<K> t_hat;
  std::array<PolyVec<K>, K> a_transposed;  ///< row i: A^T[i][j] = SampleNTT(rho || i || j)
};

/// Lines 2-8 of Algorithm 14, for ek of Params<K>::kEkBytes bytes.
template <int K>
void expand_ek(ExpandedEk<K>& out, const std::uint8_t* ek) noexcept;

/// kpke_encrypt with the key already expanded: the same ciphertext for the same inputs.
template <int K>
void kpke_encrypt_expanded(std::uint8_t* ct, const ExpandedEk<K>& ek,
                           const std::uint8_t m[kSymBytes], const std::uint8_t r[kSymBytes]) noexcept;

/// kpke_decrypt with s_hat = ByteDecode_12(dk_PKE) already decoded.
template <int K>
void kpke_decrypt_decoded(std::uint8_t m[kSymBytes], const PolyVec<K>& s_hat,
                          const std::uint8_t* ct) noexcept;

/// Algorithm 13, K-PKE.KeyGen(d): ek (384k + 32 bytes) and dk_PKE (384k bytes).
template <int K>
void kpke_keygen(std::uint8_t* ek, std::uint8_t* dk_pke, const std::uint8_t d[kSymBytes]) noexcept;

/// Algorithm 14, K-PKE.Encrypt(ek, m, r): the ciphertext (32(du k + dv) bytes).
template <int K>
void kpke_encrypt(std::uint8_t* ct, const std::uint8_t* ek, const std::uint8_t m[kSymBytes],
                  const std::uint8_t r[kSymBytes]) noexcept;

/// Algorithm 15, K-PKE.Decrypt(dk_PKE, c): the 32-byte message.
template <int K>
void kpke_decrypt(std::uint8_t m[kSymBytes], const std::uint8_t* dk_pke,
                  const std::uint8_t* ct) noexcept;

}  // namespace pqot::crypto::mlkem
