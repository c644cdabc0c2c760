// ML-KEM (FIPS 203): module-lattice key encapsulation, parameter sets 512, 768 and 1024.
#pragma once

#include "pqot/crypto/kem.hpp"

namespace pqot::crypto {

enum class MlKemParameterSet { ml_kem_512 = 2, ml_kem_768 = 3, ml_kem_1024 = 4 };

/// ML-KEM of one parameter set. The deterministic `*_internal` functions are FIPS 203 section 6
/// (Algorithms 16-18); the Kem overrides add the input checks of section 7.
class MlKem final : public Kem {
 public:
  explicit MlKem(MlKemParameterSet set) noexcept;

  std::string_view name() const noexcept override;
  std::size_t public_key_size() const noexcept override;
  std::size_t secret_key_size() const noexcept override;
  std::size_t ciphertext_size() const noexcept override;
  std::size_t keygen_seed_size() const noexcept override { return 64; }
  std::size_t encaps_seed_size() const noexcept override { return 32; }

  /// seed = d || z (64 bytes).
  KemKeyPair generate_keypair(ByteView seed) const override;
  /// seed = m (32 bytes). Runs the type and modulus checks of FIPS 203 section 7.2 first.
  KemEncapsulation encapsulate(ByteView public_key, ByteView seed) const override;
  /// Runs the type and hash checks of section 7.3 first, then Algorithm 18 with implicit rejection.
  SecretBytes decapsulate(ByteView secret_key, ByteView ciphertext) const override;
  void check_public_key(ByteView public_key) const override;
  /// Section 7.3's checks of a decapsulation key: its length and the hash check (H(ek) matches).
  void check_secret_key(ByteView secret_key) const;

  /// Prepared keys: an encapsulation key holds t_hat, A^T and H(ek) (about 6 KB for ML-KEM-768);
  /// a decapsulation key also s_hat and z (wiped when freed).
  PreparedKemKeyPtr prepare_public_key(ByteView public_key) const override;
  PreparedKemKeyPtr prepare_secret_key(ByteView secret_key) const override;
  KemEncapsulation encapsulate_prepared(const PreparedKemKey& public_key,
                                        ByteView seed) const override;
  SecretBytes decapsulate_prepared(const PreparedKemKey& secret_key,
                                   ByteView ciphertext) const override;
  using Kem::encapsulate;
  using Kem::generate_keypair;

  /// Algorithm 16, ML-KEM.KeyGen_internal(d, z). d and z are 32 bytes each.
  KemKeyPair keygen_internal(ByteView d, ByteView z) const;
  /// Algorithm 17, ML-KEM.Encaps_internal(ek, m), with no input check.
  KemEncapsulation encaps_internal(ByteView public_key, ByteView m) const;
  /// Algorithm 18, ML-KEM.Decaps_internal(dk, c), with no input check.
  SecretBytes decaps_internal(ByteView secret_key, ByteView ciphertext) const;

  MlKemParameterSet parameter_set() const noexcept { return set_; }

 private:
  MlKemParameterSet set_;
};

}  // namespace pqot::crypto
