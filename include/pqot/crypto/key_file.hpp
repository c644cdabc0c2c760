// Key files for signature keys: SubjectPublicKeyInfo (RFC 5280 section 4.1.2.7) and PKCS#8 /
// OneAsymmetricKey v1 (RFC 5208, RFC 5958) in DER or PEM (RFC 7468), for ML-DSA (RFC 9881),
// Ed25519 (RFC 8410), ML-DSA-65+Ed25519 (draft-ietf-lamps-pq-composite-sigs) and RSA (RFC 8017
// rsaEncryption). The byte layouts are in docs/crypto.md, "Key files".
#pragma once

#include <string>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::crypto {

/// Text that wipes its heap storage when released (private-key PEM). Key PEM texts are always
/// longer than the small-string buffer, so nothing is left outside the wiped heap block.
using SecretString = std::basic_string<char, std::char_traits<char>, WipingAllocator<char>>;

/// The largest key file the decoders read (DER or PEM), checked before anything is parsed or
/// allocated. RSA-16384 PKCS#8 PEM is about 13 KiB.
inline constexpr std::size_t kMaxKeyFileSize = 64 * 1024;

struct DecodedPublicKey {
  const Signature* alg = nullptr;
  Bytes public_key;  ///< in the Signature's own format (RSA: the SPKI DER itself)
};

struct DecodedPrivateKey {
  const Signature* alg = nullptr;
  SignatureKeyPair keys;
  /// What encode_private_key_der() takes back: the seed (ML-DSA: xi; Ed25519: the 32-byte
  /// private key; ML-DSA-65+Ed25519: xi || Ed25519 seed) or, for RSA, the PKCS#8 DER.
  SecretBytes private_material;
};

/// SubjectPublicKeyInfo DER of `public_key` (alg.public_key_size() bytes; RSA: SPKI DER, checked
/// and returned unchanged). Throws Error{invalid_length} for a wrong size, Error{unknown_algorithm}
/// for a scheme without a key file format, Error{invalid_argument} for PEM given as an RSA key,
/// and what decode_public_key() throws for a bad RSA key.
Bytes encode_public_key_der(const Signature& alg, ByteView public_key);
/// The same, armoured as "-----BEGIN PUBLIC KEY-----" with 64-character base64 lines.
std::string encode_public_key_pem(const Signature& alg, ByteView public_key);

/// PKCS#8 (version 0) DER holding `private_material`: the seed of alg.seed_size() bytes, or for
/// RSA the PKCS#8 DER itself (checked and returned unchanged). ML-DSA keys are written in the
/// seed form of RFC 9881; a key known only in expanded form cannot be written.
SecretBytes encode_private_key_der(const Signature& alg, ByteView private_material);
/// The same, armoured as "-----BEGIN PRIVATE KEY-----".
SecretString encode_private_key_pem(const Signature& alg, ByteView private_material);

/// Reads a public key file, PEM (when it starts with "-----BEGIN") or DER. The algorithm comes
/// from the OID; an rsaEncryption key maps to "RSA-<bits>-PKCS1" unless `expected` names another
/// RSA suite of the same modulus size. With `expected`, a key of any other algorithm is refused.
/// Errors: Error{invalid_encoding} for malformed PEM or DER (non-canonical, truncated, trailing
/// bytes, parameters present, unused bits) and unknown OIDs; Error{invalid_key} for a key of the
/// wrong size, one the scheme rejects, or one that is not `expected`; Error{unknown_algorithm}
/// when the OID is known but this build has no such Signature.
DecodedPublicKey decode_public_key(ByteView der_or_pem, const Signature* expected = nullptr);

/// Reads a private key file and regenerates the key pair from its seed (alg.keygen(seed)).
/// ML-DSA files may hold the seed or both seed and expanded key (which must be the one the seed
/// generates); the expanded-key-only form is refused with Error{invalid_key}, since pqot keeps
/// seeds. Errors as decode_public_key().
DecodedPrivateKey decode_private_key(ByteView der_or_pem, const Signature* expected = nullptr);

}  // namespace pqot::crypto
