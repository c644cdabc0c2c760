// The signature interface every signature scheme in pqot implements, beside the Kem interface.
//
// Suites: ML-DSA-44/65/87 (FIPS 204, our own code), Ed25519 (RFC 8032, OpenSSL), the hybrid
// ML-DSA-65+Ed25519 (docs/crypto.md, "The hybrid signature") and, for legacy and comparison only,
// RSA PKCS#1 v1.5 and RSA-PSS. Protocol code holds a `const Signature&` from signature_by_name().
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto {

struct SignatureKeyPair {
  Bytes public_key;
  SecretBytes secret_key;
};

/// A key decoded once for many operations (ML-DSA: A_hat and the NTT forms of its vectors;
/// Ed25519: OpenSSL's key object), made by Signature::prepare_secret_key or prepare_public_key and
/// usable only with the scheme that made it. Immutable once made: threads may share one. A secret
/// one wipes what it holds when destroyed. Protocol code uses SigningKey / VerifyingKey
/// (signing_key.hpp) rather than these directly.
class PreparedSignatureKey {
 public:
  virtual ~PreparedSignatureKey() = default;
};
using PreparedSignatureKeyPtr = std::shared_ptr<const PreparedSignatureKey>;

/// Errors: wrong-size keys, seeds or rnd throw Error{invalid_length}; a malformed key that has the
/// right size throws Error{invalid_key}; a context the scheme cannot carry (longer than
/// max_context_size()) or a deterministic request a scheme cannot honour throws
/// Error{invalid_argument}. verify() never throws for a bad signature: any signature that does not
/// verify, of any length, gives false. It throws only for a malformed public key or context.
class Signature {
 public:
  virtual ~Signature() = default;

  /// "ML-DSA-65", "Ed25519", "ML-DSA-65+Ed25519", "RSA-2048-PKCS1", ...
  virtual std::string_view name() const noexcept = 0;
  virtual std::size_t public_key_size() const noexcept = 0;
  /// 0 when the secret key has no fixed size (RSA: PKCS#8 DER).
  virtual std::size_t secret_key_size() const noexcept = 0;
  /// The size of every signature (RSA: the modulus size).
  virtual std::size_t signature_size() const noexcept = 0;
  /// Bytes of seed keygen(seed) takes; 0 when keys cannot be derived from a seed (RSA).
  virtual std::size_t seed_size() const noexcept = 0;
  /// Bytes of per-signature randomness sign(sk, msg, ctx, rnd) takes; 0 for schemes whose
  /// signatures are always deterministic (Ed25519, RSA PKCS#1 v1.5) or whose randomness only the
  /// underlying library draws (RSA-PSS).
  virtual std::size_t rnd_size() const noexcept = 0;
  /// Longest context the scheme accepts (255 for ML-DSA and the hybrid; 0 for Ed25519 and RSA).
  virtual std::size_t max_context_size() const noexcept = 0;
  /// True for RSA: kept for the original SRUP and for comparisons, never offered by default.
  virtual bool legacy() const noexcept { return false; }
  /// True when sign_deterministic() exists (all but RSA-PSS).
  virtual bool has_deterministic_signing() const noexcept { return true; }

  /// Deterministic key generation from seed_size() bytes.
  virtual SignatureKeyPair keygen(ByteView seed) const = 0;
  /// Key generation from the system's random source.
  virtual SignatureKeyPair keygen() const;

  /// Signs with the given randomness of rnd_size() bytes (all zero: the deterministic variant).
  virtual Bytes sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const = 0;
  /// Hedged signing: randomness from the system's random source.
  Bytes sign(ByteView secret_key, ByteView msg, ByteView ctx = {}) const;
  /// Deterministic signing; throws Error{invalid_argument} where has_deterministic_signing() is
  /// false.
  Bytes sign_deterministic(ByteView secret_key, ByteView msg, ByteView ctx = {}) const;

  virtual bool verify(ByteView public_key, ByteView msg, ByteView ctx,
                      ByteView signature) const = 0;
  /// Throws as verify() would for this public key; returns normally if it is acceptable.
  virtual void check_public_key(ByteView public_key) const = 0;

  /// The key decoded once, checked as sign() / verify() check it (same errors). The defaults
  /// keep a copy of the bytes (schemes with nothing worth caching: RSA).
  virtual PreparedSignatureKeyPtr prepare_secret_key(ByteView secret_key) const;
  virtual PreparedSignatureKeyPtr prepare_public_key(ByteView public_key) const;
  /// sign() and verify() with a prepared key: the same signatures and verdicts as with its bytes.
  /// A key another scheme (or the other kind: public for secret) prepared throws
  /// Error{invalid_argument}.
  virtual Bytes sign_prepared(const PreparedSignatureKey& secret_key, ByteView msg, ByteView ctx,
                              ByteView rnd) const;
  virtual bool verify_prepared(const PreparedSignatureKey& public_key, ByteView msg, ByteView ctx,
                               ByteView signature) const;
};

/// The scheme named `name` (exact match). Throws Error{unknown_algorithm}. The returned objects
/// are stateless singletons.
const Signature& signature_by_name(std::string_view name);
/// Every name signature_by_name accepts, in a stable order (the legacy RSA names last).
std::span<const std::string_view> signature_names() noexcept;
/// The names offered by default (no legacy scheme), strongest-recommended first.
std::span<const std::string_view> default_signature_names() noexcept;

}  // namespace pqot::crypto
