// KEM keys decoded once and used for many encapsulations or decapsulations (the KEM side of
// signing_key.hpp): SRUP-PQ seals to the same recipient and opens with the same key again and
// again. Same ciphertexts and secrets as Kem::encapsulate / decapsulate with the key's bytes.
#pragma once

#include "pqot/crypto/kem.hpp"

namespace pqot::crypto {

/// A recipient's public key prepared for `kem`. Cheap to copy; empty when default-constructed.
class EncapsulationKey {
 public:
  EncapsulationKey() = default;
  /// Throws as kem.check_public_key() would.
  EncapsulationKey(const Kem& kem, ByteView public_key);

  explicit operator bool() const noexcept { return key_ != nullptr; }
  const Kem& kem() const;  ///< throws std::logic_error when empty

  /// With randomness from the OS CSPRNG.
  KemEncapsulation encapsulate() const;
  /// Deterministic, from encaps_seed_size() bytes.
  KemEncapsulation encapsulate(ByteView seed) const;

 private:
  const Kem* kem_ = nullptr;
  PreparedKemKeyPtr key_;
};

/// One's own secret key prepared for `kem`. Cheap to copy; empty when default-constructed.
class DecapsulationKey {
 public:
  DecapsulationKey() = default;
  /// Throws as kem.decapsulate() would for this key.
  DecapsulationKey(const Kem& kem, ByteView secret_key);

  explicit operator bool() const noexcept { return key_ != nullptr; }
  const Kem& kem() const;  ///< throws std::logic_error when empty

  SecretBytes decapsulate(ByteView ciphertext) const;

 private:
  const Kem* kem_ = nullptr;
  PreparedKemKeyPtr key_;
};

}  // namespace pqot::crypto
