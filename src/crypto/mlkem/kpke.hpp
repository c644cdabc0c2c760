// K-PKE, the CPA-secure encryption scheme under ML-KEM (FIPS 203 section 5, Algorithms 13-15).
// Internal to the ML-KEM implementation; parameterised by the module rank K.
#pragma once

#include <cstdint>

#include "params.hpp"

namespace pqot::crypto::mlkem {

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
