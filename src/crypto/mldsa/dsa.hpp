// The internal ML-DSA algorithms (FIPS 204 section 6, Algorithms 6-8), parameterised by the rank
// K of the matrix A, on fixed-size byte buffers (sizes in Params<K>). Internal to the ML-DSA
// implementation; include/pqot/crypto/mldsa.hpp is the checked API.
#pragma once

#include <array>
#include <cstdint>

#include "params.hpp"
#include "poly.hpp"
#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto::mldsa {

template <int K>
using Vecl = PolyVec<Params<K>::l>;
template <int K>
using Veck = PolyVec<K>;

/// A_hat, K rows of l entries in the NTT domain (ExpandA, Algorithm 32).
template <int K>
struct Matrix {
  std::array<Vecl<K>, K> row;
};

/// A secret key decoded once for many signatures: what Algorithm 7 computes in lines 1-5 before
/// it looks at the message (skDecode, the NTT forms of s1, s2, t0, and A_hat = ExpandA(rho)).
/// Holds secrets: the owner wipes it (secure_wipe of the whole object).
template <int K>
struct ExpandedSecretKey {
  Matrix<K> a;
  Vecl<K> s1_hat;
  Veck<K> s2_hat;
  Veck<K> t0_hat;
  std::uint8_t key[kSeedBytes];  ///< K of skDecode, the seed of rho''
  std::uint8_t tr[kCrhBytes];
};

/// A public key decoded once for many verifications: A_hat = ExpandA(rho), NTT(t1 2^d) and
/// tr = H(pk, 64) (Algorithm 8 lines 1, 5, 6 and the part of line 9 that does not depend on the
/// signature).
template <int K>
struct ExpandedPublicKey {
  Matrix<K> a;
  Veck<K> t1_hat;
  std::uint8_t tr[kCrhBytes];
};

/// Algorithm 6, ML-DSA.KeyGen_internal(xi): pk (pkEncode, Algorithm 22) and sk (skEncode,
/// Algorithm 24).
template <int K>
void keygen_internal(std::uint8_t* pk, std::uint8_t* sk,
                     const std::uint8_t xi[kSeedBytes]) noexcept;

/// Algorithm 7, ML-DSA.Sign_internal, from line 7 on: the message representative mu is given
/// (line 6 is message_representative). Writes sigEncode (Algorithm 26). Returns false only if the
/// counter kappa would leave the two bytes of ExpandMask's IntegerToBytes(kappa + r, 2), which
/// takes thousands of rejected attempts (probability far below 2^-1000).
template <int K>
bool sign_internal_mu(std::uint8_t* sig, const std::uint8_t* sk, const std::uint8_t mu[kCrhBytes],
                      const std::uint8_t rnd[kSeedBytes]) noexcept;

/// Algorithm 8, ML-DSA.Verify_internal, with mu given (line 7 is message_representative).
template <int K>
bool verify_internal_mu(const std::uint8_t* pk, const std::uint8_t mu[kCrhBytes],
                        const std::uint8_t* sig) noexcept;

/// Lines 1-5 of Algorithm 7 for the secret key `sk` (skEncode of Params<K>::kSkBytes bytes).
template <int K>
void expand_secret_key(ExpandedSecretKey<K>& out, const std::uint8_t* sk) noexcept;
/// sign_internal_mu with the key already expanded: the same signature for the same inputs.
template <int K>
bool sign_expanded_mu(std::uint8_t* sig, const ExpandedSecretKey<K>& sk,
                      const std::uint8_t mu[kCrhBytes], const std::uint8_t rnd[kSeedBytes]) noexcept;
/// The signature-independent part of Algorithm 8 for `pk` (Params<K>::kPkBytes bytes).
template <int K>
void expand_public_key(ExpandedPublicKey<K>& out, const std::uint8_t* pk) noexcept;
/// verify_internal_mu with the key already expanded: the same verdict for the same inputs.
template <int K>
bool verify_expanded_mu(const ExpandedPublicKey<K>& pk, const std::uint8_t mu[kCrhBytes],
                        const std::uint8_t* sig) noexcept;

/// tr = H(pk, 64) (Algorithm 6 line 9, Algorithm 8 line 6).
void public_key_hash(std::uint8_t tr[kCrhBytes], ByteView pk) noexcept;

/// mu = H(BytesToBits(tr) || M', 64) with M' = prefix || msg (Algorithm 7 line 6, Algorithm 8
/// line 7); for the pure mode prefix = 0 || |ctx| || ctx (Algorithms 2-3).
void message_representative(std::uint8_t mu[kCrhBytes], const std::uint8_t tr[kCrhBytes],
                            ByteView prefix, ByteView msg) noexcept;

}  // namespace pqot::crypto::mldsa
