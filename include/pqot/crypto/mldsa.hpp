// ML-DSA (FIPS 204): module-lattice signatures, parameter sets ML-DSA-44, ML-DSA-65 and ML-DSA-87.
#pragma once

#include <cstddef>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::crypto {

/// The value is the rank k of the matrix A.
enum class MlDsaParameterSet { ml_dsa_44 = 4, ml_dsa_65 = 6, ml_dsa_87 = 8 };

/// public_key: pkEncode (FIPS 204 Algorithm 22); secret_key: skEncode (Algorithm 24).
using MlDsaKeyPair = SignatureKeyPair;

/// ML-DSA of one parameter set: the pure-mode ML-DSA.Sign / ML-DSA.Verify (Algorithms 2-3) over
/// the deterministic internal functions of section 6 (Algorithms 6-8). HashML-DSA is not offered.
///
/// Errors: wrong-size keys, seeds, rnd or mu, and contexts over 255 bytes throw
/// pqot::crypto::Error (invalid_length, or invalid_argument for the context). verify() returns
/// false for every signature that does not verify, including one of the wrong length.
class MlDsa final : public Signature {
 public:
  using Signature::keygen;
  using Signature::sign;

  static constexpr std::size_t kSeedSize = 32;         ///< xi
  static constexpr std::size_t kRndSize = 32;          ///< rnd of Algorithm 7
  static constexpr std::size_t kMuSize = 64;           ///< the message representative mu
  static constexpr std::size_t kMaxContextSize = 255;  ///< Algorithms 2-3

  explicit MlDsa(MlDsaParameterSet set) noexcept;

  std::string_view name() const noexcept override;  ///< "ML-DSA-44", "ML-DSA-65", "ML-DSA-87"
  std::size_t public_key_size() const noexcept override;
  std::size_t secret_key_size() const noexcept override;
  std::size_t signature_size() const noexcept override;
  std::size_t seed_size() const noexcept override { return kSeedSize; }
  std::size_t rnd_size() const noexcept override { return kRndSize; }
  std::size_t max_context_size() const noexcept override { return kMaxContextSize; }
  MlDsaParameterSet parameter_set() const noexcept { return set_; }

  /// Algorithm 6, ML-DSA.KeyGen_internal(xi); xi is 32 bytes.
  MlDsaKeyPair keygen_internal(ByteView xi) const;
  /// The same as keygen_internal(seed); keygen() (Algorithm 1, ML-DSA.KeyGen) draws xi from the
  /// system's random source.
  SignatureKeyPair keygen(ByteView seed) const override { return keygen_internal(seed); }

  /// Algorithm 2, ML-DSA.Sign, with M' = 0 || |ctx| || ctx || msg and the given 32-byte rnd
  /// (all zero: the deterministic variant).
  /// sign(sk, msg, ctx) is the hedged variant (rnd from the system's random source),
  /// sign_deterministic(sk, msg, ctx) the deterministic one (rnd = 32 zero bytes).
  Bytes sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const override;
  /// Algorithm 3, ML-DSA.Verify.
  bool verify(ByteView public_key, ByteView msg, ByteView ctx,
              ByteView signature) const override;
  /// Only the length: every pkEncode of the right length decodes (t1 takes all 10-bit values).
  void check_public_key(ByteView public_key) const override;

  /// Prepared keys (Signature::prepare_secret_key): a secret key holds A_hat, NTT(s1), NTT(s2),
  /// NTT(t0), K and tr (lines 1-5 of Algorithm 7, done once; about 48 KB for ML-DSA-65, wiped
  /// when freed); a public key holds A_hat, NTT(t1 2^d) and tr = H(pk) (about 37 KB).
  PreparedSignatureKeyPtr prepare_secret_key(ByteView secret_key) const override;
  PreparedSignatureKeyPtr prepare_public_key(ByteView public_key) const override;
  Bytes sign_prepared(const PreparedSignatureKey& secret_key, ByteView msg, ByteView ctx,
                      ByteView rnd) const override;
  bool verify_prepared(const PreparedSignatureKey& public_key, ByteView msg, ByteView ctx,
                       ByteView signature) const override;

  /// Algorithm 7, ML-DSA.Sign_internal(sk, M', rnd), M' as bytes.
  Bytes sign_internal(ByteView secret_key, ByteView m_prime, ByteView rnd) const;
  /// Algorithm 8, ML-DSA.Verify_internal(pk, M', sigma).
  bool verify_internal(ByteView public_key, ByteView m_prime, ByteView signature) const;

  /// External mu: Algorithm 7 from line 7 on, for a 64-byte mu computed elsewhere.
  Bytes sign_mu(ByteView secret_key, ByteView mu, ByteView rnd) const;
  /// External mu: Algorithm 8 with line 7 replaced by the given mu.
  bool verify_mu(ByteView public_key, ByteView mu, ByteView signature) const;
  /// mu = H(H(pk, 64) || 0 || |ctx| || ctx || msg, 64), what sign_mu / verify_mu expect for the
  /// pure mode.
  Bytes message_representative(ByteView public_key, ByteView msg, ByteView ctx = {}) const;

 private:
  MlDsaParameterSet set_;
};

}  // namespace pqot::crypto
