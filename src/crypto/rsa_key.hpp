// RSA key encodings shared by the signature and OAEP wrappers: import and check of DER SPKI
// public keys and DER PKCS#8 secret keys, key generation and export (include/pqot/crypto/rsa.hpp
// says what is accepted).
#pragma once

#include <openssl/evp.h>

#include <string_view>

#include "openssl_util.hpp"
#include "pqot/crypto/rsa.hpp"

namespace pqot::crypto::rsa {

using Pkey = ossl::Ptr<EVP_PKEY, EVP_PKEY_free>;
using PkeyCtx = ossl::Ptr<EVP_PKEY_CTX, EVP_PKEY_CTX_free>;

inline std::size_t modulus_bytes(RsaModulus m) noexcept {
  return static_cast<std::size_t>(m) / 8;
}

/// The public key of a DER SPKI; throws Error{invalid_key} (naming `alg`) unless it is canonical
/// DER of an rsaEncryption key with the suite's modulus size and an acceptable exponent.
Pkey import_public_key(ByteView spki_der, RsaModulus modulus, std::string_view alg);
/// The key of a DER PKCS#8 PrivateKeyInfo, with the same checks.
Pkey import_secret_key(ByteView pkcs8_der, RsaModulus modulus, std::string_view alg);
/// A fresh key of the given size with e = 65537, exported as DER SPKI and PKCS#8.
RsaKeyPair generate(RsaModulus modulus);

}  // namespace pqot::crypto::rsa
