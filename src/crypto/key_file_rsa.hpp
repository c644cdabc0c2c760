// The RSA part of key files: rsaEncryption (RFC 8017 Appendix C) SubjectPublicKeyInfo and
// PKCS#8, checked by OpenSSL. Internal to src/crypto (key_file.cpp): only src/crypto includes
// OpenSSL.
#pragma once

#include <cstddef>

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

/// Reads the RSA key in `pkcs8` (a whole PrivateKeyInfo), checks it is canonical DER and that
/// its parts fit together (OpenSSL's pairwise check), and derives the public key. Errors as
/// public_key_bits().
PrivateKeyInfo private_key_info(ByteView pkcs8);

}  // namespace pqot::crypto::rsa_key_file
