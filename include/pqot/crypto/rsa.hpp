// RSA over OpenSSL, for legacy use and comparison only: RSASSA-PKCS1-v1_5 and RSASSA-PSS
// signatures (RFC 8017 sections 8.1-8.2) and RSAES-OAEP encryption (section 7.1), all with
// SHA-256. Never offered by default: not quantum-safe, and large next to X25519 or ML-DSA.
//
// Keys: the public key is the DER SubjectPublicKeyInfo (rsaEncryption OID, RFC 8017 appendix
// A.1.1 inside RFC 5280's SPKI), the secret key the DER PKCS#8 PrivateKeyInfo (RFC 5208) of an
// RSAPrivateKey (appendix A.1.2). Both are checked on every use: an RSA key (not an RSA-PSS key),
// a modulus of exactly the suite's size, an odd public exponent of 3 to 64 bits; anything else
// throws Error{invalid_key}. Public keys must be canonical DER with nothing after them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::crypto {

/// Modulus sizes in bits: 2048 and 3072 (NIST SP 800-57 112- and 128-bit strength) and 7680
/// (192-bit strength, to compare with ML-DSA-65 / ML-KEM-768 at a matched classical level).
enum class RsaModulus { rsa_2048 = 2048, rsa_3072 = 3072, rsa_7680 = 7680 };

enum class RsaSignaturePadding {
  pkcs1_v1_5,  ///< RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 section 8.2), as the original SRUP
  pss,         ///< RSASSA-PSS, SHA-256, MGF1-SHA-256, 32-byte salt (RFC 8017 section 8.1)
};

/// public_key: DER SPKI; secret_key: DER PKCS#8 (wiped when dropped).
using RsaKeyPair = SignatureKeyPair;

/// The size of the DER SPKI of an RSA key with a `modulus_bits` modulus and e = 65537, the
/// exponent keygen() uses (RFC 8017 appendix A.1.1; the modulus INTEGER carries a leading zero).
std::size_t rsa_spki_size(RsaModulus modulus) noexcept;

/// "RSA-2048-PKCS1", "RSA-2048-PSS", "RSA-3072-PKCS1", ..., "RSA-7680-PSS".
///
/// Sizes: public_key_size() is rsa_spki_size(), the size of the keys keygen() makes; verify()
/// and check_public_key() also take keys with another valid exponent (their DER differs in
/// length), since only the modulus size names the suite. secret_key_size() is 0 (PKCS#8 DER has
/// no fixed size). signature_size() is the modulus size in bytes. No seed (keygen(seed) throws
/// Error{invalid_argument}), no rnd (a non-empty rnd throws Error{invalid_length}), no context (a
/// non-empty context throws Error{invalid_argument}). PSS draws its salt inside OpenSSL, so it
/// has no deterministic signing; PKCS#1 v1.5 signatures are always deterministic.
class RsaSignature final : public Signature {
 public:
  using Signature::keygen;
  using Signature::sign;

  RsaSignature(RsaModulus modulus, RsaSignaturePadding padding) noexcept;

  std::string_view name() const noexcept override;
  std::size_t public_key_size() const noexcept override { return rsa_spki_size(modulus_); }
  std::size_t secret_key_size() const noexcept override { return 0; }
  std::size_t signature_size() const noexcept override;
  std::size_t seed_size() const noexcept override { return 0; }
  std::size_t rnd_size() const noexcept override { return 0; }
  std::size_t max_context_size() const noexcept override { return 0; }
  bool legacy() const noexcept override { return true; }
  bool has_deterministic_signing() const noexcept override {
    return padding_ == RsaSignaturePadding::pkcs1_v1_5;
  }
  RsaModulus modulus() const noexcept { return modulus_; }
  RsaSignaturePadding padding() const noexcept { return padding_; }

  /// Always throws Error{invalid_argument}: RSA keys cannot be derived from a seed.
  SignatureKeyPair keygen(ByteView seed) const override;
  /// A fresh key with e = 65537 from OpenSSL's key generator.
  SignatureKeyPair keygen() const override;

  /// RSASSA-PKCS1-V1_5-SIGN (section 8.2.1) or RSASSA-PSS-SIGN (section 8.1.1) of msg.
  Bytes sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const override;
  /// RSASSA-PKCS1-V1_5-VERIFY (8.2.2, by re-encoding and comparing) or RSASSA-PSS-VERIFY (8.1.2,
  /// salt of exactly 32 bytes). False for every signature that does not verify, of any length.
  bool verify(ByteView public_key, ByteView msg, ByteView ctx, ByteView signature) const override;
  void check_public_key(ByteView public_key) const override;

 private:
  RsaModulus modulus_;
  RsaSignaturePadding padding_;
};

/// An RSA-OAEP key imported and checked once (the checks of rsa.hpp's header), for many
/// encrypt() / decrypt() calls: with OpenSSL 3, importing the DER key on every call costs about
/// a millisecond here, far more than the public-key operation itself (docs/benchmarks.md,
/// "Payload encryption"). Immutable; threads may share one. A secret one frees its OpenSSL key,
/// which clears it.
class RsaOaepKey {
 public:
  ~RsaOaepKey();
  RsaOaepKey(RsaOaepKey&&) noexcept;
  RsaOaepKey& operator=(RsaOaepKey&&) noexcept;
  RsaOaepKey(const RsaOaepKey&) = delete;
  RsaOaepKey& operator=(const RsaOaepKey&) = delete;
  RsaModulus modulus() const noexcept;
  bool secret() const noexcept;

 private:
  friend class RsaOaep;
  struct Impl;
  explicit RsaOaepKey(std::unique_ptr<Impl> impl) noexcept;
  std::unique_ptr<Impl> impl_;
};

/// RSAES-OAEP (RFC 8017 section 7.1) with SHA-256 and MGF1-SHA-256: "RSA-2048-OAEP",
/// "RSA-3072-OAEP", "RSA-7680-OAEP". Keys as for RsaSignature. Not a Kem: it encrypts a
/// payload directly, to be compared with the KEMs for payload encryption.
class RsaOaep {
 public:
  explicit RsaOaep(RsaModulus modulus) noexcept : modulus_(modulus) {}

  std::string_view name() const noexcept;
  std::size_t public_key_size() const noexcept { return rsa_spki_size(modulus_); }
  std::size_t ciphertext_size() const noexcept;
  /// k - 2 hLen - 2 (section 7.1.1 step 1b): 190, 318 and 894 bytes.
  std::size_t max_plaintext_size() const noexcept;
  RsaModulus modulus() const noexcept { return modulus_; }

  /// A fresh key with e = 65537.
  RsaKeyPair keygen() const;
  /// RSAES-OAEP-ENCRYPT (section 7.1.1) with a random seed. A plaintext longer than
  /// max_plaintext_size() throws Error{invalid_length}; a bad public key Error{invalid_key}.
  Bytes encrypt(ByteView public_key, ByteView plaintext, ByteView label = {}) const;
  /// RSAES-OAEP-DECRYPT (section 7.1.2). std::nullopt for every ciphertext that does not decrypt
  /// (wrong length, not below n, bad padding, other label), with no hint which check failed;
  /// throws only for a malformed secret key (Error{invalid_key}).
  std::optional<SecretBytes> decrypt(ByteView secret_key, ByteView ciphertext,
                                     ByteView label = {}) const;
  void check_public_key(ByteView public_key) const;

  /// The key imported once, with the checks (and errors) of encrypt() / decrypt().
  RsaOaepKey prepare_public_key(ByteView public_key) const;
  RsaOaepKey prepare_secret_key(ByteView secret_key) const;
  /// As encrypt() / decrypt() above, the same ciphertexts and results. encrypt() takes either
  /// kind of prepared key (a secret key holds the public one), decrypt() a secret one only; a key
  /// of another modulus, or a public key given to decrypt(), throws Error{invalid_argument}.
  Bytes encrypt(const RsaOaepKey& public_key, ByteView plaintext, ByteView label = {}) const;
  std::optional<SecretBytes> decrypt(const RsaOaepKey& secret_key, ByteView ciphertext,
                                     ByteView label = {}) const;

 private:
  RsaModulus modulus_;
};

/// The OAEP suite named `name` (exact match); throws Error{unknown_algorithm}.
const RsaOaep& rsa_oaep_by_name(std::string_view name);

}  // namespace pqot::crypto
