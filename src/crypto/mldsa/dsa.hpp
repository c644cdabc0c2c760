// The internal ML-DSA algorithms (FIPS 204 section 6, Algorithms 6-8), parameterised by the rank
// K of the matrix A, on fixed-size byte buffers (sizes in Params<K>). Internal to the ML-DSA
// implementation; include/pqot/crypto/mldsa.hpp is the checked API.
#pragma once

#include <cstdint>

#include "params.hpp"
#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto::mldsa {

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

/// tr = H(pk, 64) (Algorithm 6 line 9, Algorithm 8 line 6).
void public_key_hash(std::uint8_t tr[kCrhBytes], ByteView pk) noexcept;

/// mu = H(BytesToBits(tr) || M', 64) with M' = prefix || msg (Algorithm 7 line 6, Algorithm 8
/// line 7); for the pure mode prefix = 0 || |ctx| || ctx (Algorithms 2-3).
void message_representative(std::uint8_t mu[kCrhBytes], const std::uint8_t tr[kCrhBytes],
                            ByteView prefix, ByteView msg) noexcept;

}  // namespace pqot::crypto::mldsa
