// NTRU's deterministic public-key encryption (round-3 specification, DPKE: DPKE_Keygen,
// DPKE.Encrypt, DPKE.Decrypt; the reference's owcpa.c).
#pragma once

#include <cstdint>

#include "poly.hpp"

namespace pqot::crypto::ntru {

/// pk (public_key_bytes()) and the DPKE part of sk (owcpa_secret_key_bytes(): f, f^-1 mod 3,
/// h^-1 mod q) from sample_bytes() bytes. Returns 1 if the seed gave f = 0 or g = 0, a key that
/// cannot work (the reference does not look; random seeds do it with probability below 2^-800),
/// else 0; computed without a branch, and the only thing it says about the key.
unsigned owcpa_keypair(std::uint8_t* pk, std::uint8_t* sk, const std::uint8_t* seed,
                       const Params& p);
/// c = r h + Lift(m), r already mapped to Z_q (z3_to_zq).
void owcpa_encrypt(std::uint8_t* c, const Poly& r, const Poly& m, const std::uint8_t* pk,
                   const Params& p);
/// rm = (r, m) packed (owcpa_msg_bytes()); returns 0 if c is a valid encryption of them, else 1,
/// in constant time.
unsigned owcpa_decrypt(std::uint8_t* rm, const std::uint8_t* c, const std::uint8_t* sk,
                       const Params& p);

}  // namespace pqot::crypto::ntru
