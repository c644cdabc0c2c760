// ML-DSA-65+Ed25519: a hybrid signature that stays unforgeable while either component does.
//
// The construction is the composite ML-DSA of draft-ietf-lamps-pq-composite-sigs (revision 19,
// id-MLDSA65-Ed25519-SHA512, OID 1.3.6.1.5.5.7.6.48); docs/crypto.md, "The hybrid signature",
// gives every byte and the reasons where pqot departs from it.
#pragma once

#include <string_view>

#include "pqot/crypto/ed25519.hpp"
#include "pqot/crypto/mldsa.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::crypto {

/// Sizes: public key = ML-DSA-65 pk (1952) || Ed25519 pk (32); seed = xi (32) || Ed25519
/// private key (32), which is the draft's private-key encoding; secret key (the in-memory working
/// form, like ML-DSA's) = ML-DSA-65 skEncode (4032) || Ed25519 private key (32); signature =
/// ML-DSA-65 signature (3309) || Ed25519 signature (64).
///
/// Signing: M' = Prefix || Label || len(ctx) || ctx || SHA-512(M), then the ML-DSA-65 signature
/// of M' with context Label and the Ed25519 signature of M'. Valid only if both verify.
class MlDsa65Ed25519 final : public Signature {
 public:
  using Signature::keygen;
  using Signature::sign;

  /// The draft's fixed Prefix, the ASCII text "CompositeAlgorithmSignatures2025" (32 bytes).
  static constexpr std::string_view kPrefix = "CompositeAlgorithmSignatures2025";
  /// The domain-separation label of this combination (draft section 6).
  static constexpr std::string_view kLabel = "COMPSIG-MLDSA65-Ed25519-SHA512";

  std::string_view name() const noexcept override { return "ML-DSA-65+Ed25519"; }
  std::size_t public_key_size() const noexcept override;
  std::size_t secret_key_size() const noexcept override;
  std::size_t signature_size() const noexcept override;
  std::size_t seed_size() const noexcept override;
  std::size_t rnd_size() const noexcept override { return MlDsa::kRndSize; }
  std::size_t max_context_size() const noexcept override { return MlDsa::kMaxContextSize; }

  /// seed = xi || Ed25519 private key: ML-DSA.KeyGen_internal(xi) and the Ed25519 key pair.
  SignatureKeyPair keygen(ByteView seed) const override;
  /// `rnd` is ML-DSA's (32 bytes; all zero: deterministic). Ed25519 is deterministic anyway.
  Bytes sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const override;
  bool verify(ByteView public_key, ByteView msg, ByteView ctx,
              ByteView signature) const override;
  void check_public_key(ByteView public_key) const override;

  /// A prepared key is the two components' prepared keys.
  PreparedSignatureKeyPtr prepare_secret_key(ByteView secret_key) const override;
  PreparedSignatureKeyPtr prepare_public_key(ByteView public_key) const override;
  Bytes sign_prepared(const PreparedSignatureKey& secret_key, ByteView msg, ByteView ctx,
                      ByteView rnd) const override;
  bool verify_prepared(const PreparedSignatureKey& public_key, ByteView msg, ByteView ctx,
                       ByteView signature) const override;

  /// The message representative M' both components sign (exposed for the known-answer tests).
  static Bytes message_representative(ByteView msg, ByteView ctx);

 private:
  MlDsa ml_dsa_{MlDsaParameterSet::ml_dsa_65};
  Ed25519 ed25519_;
};

}  // namespace pqot::crypto
