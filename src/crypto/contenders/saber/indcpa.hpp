// Saber.PKE, the CPA-secure encryption under the KEM (round-3 specification, Saber.PKE.KeyGen,
// Saber.PKE.Enc, Saber.PKE.Dec), parameterised by the module rank L. Internal to the Saber KEM.
#pragma once

#include <cstdint>

#include "params.hpp"

namespace pqot::crypto::saber {

/// Saber.PKE.KeyGen with its two random inputs given: pk = b (10-bit) ‖ seed_A, sk = s (13-bit).
/// seed_A is hashed once with SHAKE128 first, as the reference does, so that pk never shows the
/// raw output of the random generator.
template <int L>
void pke_keygen(std::uint8_t* pk, std::uint8_t* sk, const std::uint8_t seed_a[kSeedBytes],
                const std::uint8_t seed_s[kNoiseSeedBytes]) noexcept;

/// Saber.PKE.Enc(pk, m; seed_s'): ct = b' (10-bit) ‖ c_m (et-bit).
template <int L>
void pke_encrypt(std::uint8_t* ct, const std::uint8_t m[kKeyBytes],
                 const std::uint8_t seed_sp[kNoiseSeedBytes], const std::uint8_t* pk) noexcept;

/// Saber.PKE.Dec(sk, ct): the 32-byte message.
template <int L>
void pke_decrypt(std::uint8_t m[kKeyBytes], const std::uint8_t* sk,
                 const std::uint8_t* ct) noexcept;

}  // namespace pqot::crypto::saber
