// Keys decoded once and used for many signatures or verifications: the fast path for protocol
// code that signs or verifies with the same key again and again (SRUP-PQ's own identity, its
// enrolled peers). Same signatures and verdicts as Signature::sign / verify with the key's bytes.
#pragma once

#include "pqot/crypto/signature.hpp"

namespace pqot::crypto {

/// A secret key prepared for `alg` (Signature::prepare_secret_key). Cheap to copy (shared,
/// immutable state); empty when default-constructed.
class SigningKey {
 public:
  SigningKey() = default;
  /// Throws as alg.sign() would for this key.
  SigningKey(const Signature& alg, ByteView secret_key);

  explicit operator bool() const noexcept { return key_ != nullptr; }
  const Signature& algorithm() const;  ///< throws std::logic_error when empty

  /// Hedged signing: rnd_size() bytes from the system's random source.
  Bytes sign(ByteView msg, ByteView ctx = {}) const;
  /// With the given randomness (Signature::sign's rnd).
  Bytes sign(ByteView msg, ByteView ctx, ByteView rnd) const;

 private:
  const Signature* alg_ = nullptr;
  PreparedSignatureKeyPtr key_;
};

/// A public key prepared for `alg` (Signature::prepare_public_key). Cheap to copy; empty when
/// default-constructed.
class VerifyingKey {
 public:
  VerifyingKey() = default;
  /// Throws as alg.check_public_key() would.
  VerifyingKey(const Signature& alg, ByteView public_key);

  explicit operator bool() const noexcept { return key_ != nullptr; }
  const Signature& algorithm() const;  ///< throws std::logic_error when empty

  /// As Signature::verify: false for any signature that does not verify.
  bool verify(ByteView msg, ByteView ctx, ByteView signature) const;

 private:
  const Signature* alg_ = nullptr;
  PreparedSignatureKeyPtr key_;
};

}  // namespace pqot::crypto
