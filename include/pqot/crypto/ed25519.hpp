// Ed25519 (RFC 8032, pure EdDSA over edwards25519) through OpenSSL.
#pragma once

#include "pqot/crypto/signature.hpp"

namespace pqot::crypto {

/// Ed25519 as a Signature: the public key is the 32-byte encoded point A, the secret key and the
/// seed are both the 32-byte RFC 8032 private key k, a signature is 64 bytes (R || S).
///
/// OpenSSL 3.0 has no Ed25519ctx (RFC 8032 section 5.1, dom2 with a context), so a non-empty
/// context throws Error{invalid_argument} rather than being dropped silently. Signatures are
/// deterministic by construction (rnd_size() is 0). Verification is OpenSSL's: it refuses S >= L
/// and public keys that do not decode to a point.
class Ed25519 final : public Signature {
 public:
  using Signature::keygen;
  using Signature::sign;
  static constexpr std::size_t kPublicKeySize = 32;
  static constexpr std::size_t kSecretKeySize = 32;
  static constexpr std::size_t kSignatureSize = 64;

  std::string_view name() const noexcept override { return "Ed25519"; }
  std::size_t public_key_size() const noexcept override { return kPublicKeySize; }
  std::size_t secret_key_size() const noexcept override { return kSecretKeySize; }
  std::size_t signature_size() const noexcept override { return kSignatureSize; }
  std::size_t seed_size() const noexcept override { return kSecretKeySize; }
  std::size_t rnd_size() const noexcept override { return 0; }
  std::size_t max_context_size() const noexcept override { return 0; }

  /// The key pair of the private key `seed` (RFC 8032 section 5.1.5).
  SignatureKeyPair keygen(ByteView seed) const override;
  /// RFC 8032 section 5.1.6; `rnd` must be empty.
  Bytes sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const override;
  /// RFC 8032 section 5.1.7.
  bool verify(ByteView public_key, ByteView msg, ByteView ctx,
              ByteView signature) const override;
  /// Only the length: whether the point decodes is found by verify(), which then returns false.
  void check_public_key(ByteView public_key) const override;

  /// Prepared keys hold OpenSSL's key object, so that it is decoded once, not per signature.
  PreparedSignatureKeyPtr prepare_secret_key(ByteView secret_key) const override;
  PreparedSignatureKeyPtr prepare_public_key(ByteView public_key) const override;
  Bytes sign_prepared(const PreparedSignatureKey& secret_key, ByteView msg, ByteView ctx,
                      ByteView rnd) const override;
  bool verify_prepared(const PreparedSignatureKey& public_key, ByteView msg, ByteView ctx,
                       ByteView signature) const override;
};

}  // namespace pqot::crypto
