// X-Wing: the hybrid X25519 + ML-KEM-768 KEM of draft-connolly-cfrg-xwing-kem.
//
// The shared secret is SHA3-256(ss_M || ss_X || ct_X || pk_X || "\.//^\"), so it stays secret as
// long as either ML-KEM-768 or X25519 does (docs/crypto.md, "X-Wing").
#pragma once

#include "pqot/crypto/kem.hpp"

namespace pqot::crypto {

class XWing final : public Kem {
 public:
  static constexpr std::size_t kPublicKeySize = 1184 + 32;
  static constexpr std::size_t kSecretKeySize = 32;
  static constexpr std::size_t kCiphertextSize = 1088 + 32;

  std::string_view name() const noexcept override { return "X-Wing"; }
  std::size_t public_key_size() const noexcept override { return kPublicKeySize; }
  std::size_t secret_key_size() const noexcept override { return kSecretKeySize; }
  std::size_t ciphertext_size() const noexcept override { return kCiphertextSize; }
  std::size_t keygen_seed_size() const noexcept override { return 32; }
  std::size_t encaps_seed_size() const noexcept override { return 64; }

  /// seed = the 32-byte decapsulation key itself (the draft's GenerateKeyPairDerand).
  KemKeyPair generate_keypair(ByteView seed) const override;
  /// seed = m (32 bytes, ML-KEM) || ek_X (32 bytes, X25519 ephemeral key).
  KemEncapsulation encapsulate(ByteView public_key, ByteView seed) const override;
  SecretBytes decapsulate(ByteView secret_key, ByteView ciphertext) const override;
  void check_public_key(ByteView public_key) const override;

  /// Prepared keys: an encapsulation key holds ML-KEM-768's prepared key and pk_X; a decapsulation
  /// key the expanded ML-KEM-768 key prepared and the X25519 private key with its public key, so
  /// that decapsulation no longer re-derives both from the 32-byte seed each time.
  PreparedKemKeyPtr prepare_public_key(ByteView public_key) const override;
  PreparedKemKeyPtr prepare_secret_key(ByteView secret_key) const override;
  KemEncapsulation encapsulate_prepared(const PreparedKemKey& public_key,
                                        ByteView seed) const override;
  SecretBytes decapsulate_prepared(const PreparedKemKey& secret_key,
                                   ByteView ciphertext) const override;
  using Kem::encapsulate;
  using Kem::generate_keypair;
};

}  // namespace pqot::crypto
