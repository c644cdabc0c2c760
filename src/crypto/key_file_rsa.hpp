// The RSA part of key files: rsaEncryption (RFC 8017 Appendix C) SubjectPublicKeyInfo and
// PKCS#8, checked by OpenSSL. Internal to src/crypto (key_file.cpp): only src/crypto includes
// OpenSSL.
#pragma once

#include <cstddef>
#include <functional>

#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto::rsa_key_file {

/// The modulus size in bits of the RSA key in `spki` (a whole SubjectPublicKeyInfo).
/// Error{invalid_key} when OpenSSL cannot read an RSA key from it; Error{invalid_encoding} when
/// it is not canonical DER (OpenSSL's re-encoding differs).
std::size_t public_key_bits(ByteView spki);

struct PrivateKeyInfo {
  std::size_t bits = 0;
  Bytes public_key;  ///< SubjectPublicKeyInfo DER of the matching public key
};

/// Reads the RSA key in `pkcs8` (a whole PrivateKeyInfo), checks it is canonical DER, calls
/// `accept_bits(modulus bits)` (which throws for a size or algorithm the caller will not take),
/// and only then checks that its parts fit together (n = p q and the CRT values), by a few
/// multiplications. (OpenSSL's pairwise check also tests p and q for primality: 8.5 s for a
/// 7680-bit key, and an attacker's file could make it far longer.) Derives the public key.
/// Errors as public_key_bits().
PrivateKeyInfo private_key_info(ByteView pkcs8,
                                const std::function<void(std::size_t)>& accept_bits);

}  // namespace pqot::crypto::rsa_key_file
