// The OS-seeded CSPRNG (OpenSSL's DRBG). Throws Error{internal} if it cannot deliver.
#pragma once

#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto {

/// Fills `out` with bytes for public values (nonces, tokens, salts).
void random_bytes(MutableByteView out);
/// Fills `out` with bytes for secret values (keys, seeds); OpenSSL's private DRBG.
void random_secret_bytes(MutableByteView out);
/// A uniformly random 64-bit value for public uses (seeds of non-cryptographic generators, ids).
std::uint64_t random_u64();

}  // namespace pqot::crypto
