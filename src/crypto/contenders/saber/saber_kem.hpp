// Saber (NIST PQC round 3, not standardized): LightSaber, Saber, FireSaber, as the round-3
// specification ("SABER: Mod-LWR based KEM (Round 3 Submission)") and its reference
// implementation define them, byte for byte. A comparison contender only (contender_kem.hpp).
#pragma once

#include "pqot/crypto/kem.hpp"

namespace pqot::crypto::saber {

enum class Level { light_saber = 2, saber = 3, fire_saber = 4 };  // the value is l

class SaberKem final : public Kem {
 public:
  explicit SaberKem(Level level) noexcept : level_(level) {}

  std::string_view name() const noexcept override;
  std::size_t public_key_size() const noexcept override;
  std::size_t secret_key_size() const noexcept override;
  std::size_t ciphertext_size() const noexcept override;
  /// seed_A ‖ seed_s ‖ z, 32 bytes each, in the reference's three randombytes calls.
  std::size_t keygen_seed_size() const noexcept override { return 96; }
  /// The 32 bytes the reference draws before hashing them into m.
  std::size_t encaps_seed_size() const noexcept override { return 32; }
  std::vector<std::size_t> keygen_randombytes_calls() const override { return {32, 32, 32}; }
  bool contender() const noexcept override { return true; }

  KemKeyPair generate_keypair(ByteView seed) const override;
  KemEncapsulation encapsulate(ByteView public_key, ByteView seed) const override;
  SecretBytes decapsulate(ByteView secret_key, ByteView ciphertext) const override;
  void check_public_key(ByteView public_key) const override;
  using Kem::encapsulate;
  using Kem::generate_keypair;

 private:
  Level level_;
};

}  // namespace pqot::crypto::saber
