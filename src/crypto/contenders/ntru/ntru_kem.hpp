// NTRU (NIST PQC round 3, not standardized): NTRU-HPS-2048-509, NTRU-HPS-2048-677,
// NTRU-HPS-4096-821 and NTRU-HRSS-701, as the round-3 specification ("NTRU Algorithm
// Specifications And Supporting Documentation", 2020-09-30) and its reference implementation
// define them, byte for byte. A comparison contender only (contender_kem.hpp).
#pragma once

#include "pqot/crypto/kem.hpp"

namespace pqot::crypto::ntru {

struct Params;

enum class ParameterSet { hps2048509, hps2048677, hps4096821, hrss701 };

class NtruKem final : public Kem {
 public:
  explicit NtruKem(ParameterSet set) noexcept;

  std::string_view name() const noexcept override;
  std::size_t public_key_size() const noexcept override;
  std::size_t secret_key_size() const noexcept override;
  std::size_t ciphertext_size() const noexcept override;
  /// The fg sample bytes, then the 32-byte PRF key: the reference's two randombytes calls.
  std::size_t keygen_seed_size() const noexcept override;
  /// The rm sample bytes: the reference's one randombytes call in encapsulation.
  std::size_t encaps_seed_size() const noexcept override;
  std::vector<std::size_t> keygen_randombytes_calls() const override;
  bool contender() const noexcept override { return true; }

  /// Throws Error{invalid_argument} for a seed that gives f = 0 or g = 0 (never a random one).
  KemKeyPair generate_keypair(ByteView seed) const override;
  KemEncapsulation encapsulate(ByteView public_key, ByteView seed) const override;
  SecretBytes decapsulate(ByteView secret_key, ByteView ciphertext) const override;
  /// The length, the padding bits of the last byte are zero (the reference ignores them; a key it
  /// wrote never sets them), and h != 0. Error{invalid_length} / Error{invalid_key}.
  void check_public_key(ByteView public_key) const override;
  using Kem::encapsulate;
  using Kem::generate_keypair;

 private:
  const Params& p_;
};

}  // namespace pqot::crypto::ntru
