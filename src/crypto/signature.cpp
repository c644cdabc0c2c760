// The signature registry and the entry points shared by every Signature.
#include "pqot/crypto/signature.hpp"

#include <array>
#include <string>

#include "pqot/crypto/ed25519.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/hybrid_signature.hpp"
#include "pqot/crypto/mldsa.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/rsa.hpp"

namespace pqot::crypto {

SignatureKeyPair Signature::keygen() const {
  if (seed_size() == 0) {
    throw Error(ErrorCode::internal, std::string(name()) + " must override keygen()");
  }
  SecretBytes seed(seed_size());
  random_secret_bytes(seed);
  return keygen(seed);
}

Bytes Signature::sign(ByteView secret_key, ByteView msg, ByteView ctx) const {
  SecretBytes rnd(rnd_size());
  random_secret_bytes(rnd);
  return sign(secret_key, msg, ctx, rnd);
}

Bytes Signature::sign_deterministic(ByteView secret_key, ByteView msg, ByteView ctx) const {
  if (!has_deterministic_signing()) {
    throw Error(ErrorCode::invalid_argument,
                std::string(name()) + " has no deterministic signing (its randomness is drawn "
                                      "inside the library)");
  }
  const Bytes zero(rnd_size(), 0);
  return sign(secret_key, msg, ctx, zero);
}

namespace {

// The default prepared key: the bytes, for schemes with nothing worth decoding ahead.
class PreparedBytes final : public PreparedSignatureKey {
 public:
  PreparedBytes(const Signature& owner, bool secret, ByteView bytes)
      : owner_(&owner), secret_(secret), bytes_(bytes.begin(), bytes.end()) {}
  ByteView bytes_for(const Signature& alg, bool secret) const {
    if (&alg != owner_ || secret != secret_) {
      throw Error(ErrorCode::invalid_argument, std::string(alg.name()) + ": a " +
                                                   (secret ? "secret" : "public") +
                                                   " key this scheme did not prepare");
    }
    return bytes_;
  }

 private:
  const Signature* owner_;
  bool secret_;
  SecretBytes bytes_;
};

ByteView prepared_bytes(const Signature& alg, const PreparedSignatureKey& key, bool secret) {
  const auto* p = dynamic_cast<const PreparedBytes*>(&key);
  if (p == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                std::string(alg.name()) + ": a key this scheme did not prepare");
  }
  return p->bytes_for(alg, secret);
}

}  // namespace

PreparedSignatureKeyPtr Signature::prepare_secret_key(ByteView secret_key) const {
  if (secret_key_size() != 0 && secret_key.size() != secret_key_size()) {
    throw Error(ErrorCode::invalid_length,
                std::string(name()) + ": secret key must be " + std::to_string(secret_key_size()) +
                    " bytes, got " + std::to_string(secret_key.size()));
  }
  return std::make_shared<const PreparedBytes>(*this, true, secret_key);
}

PreparedSignatureKeyPtr Signature::prepare_public_key(ByteView public_key) const {
  check_public_key(public_key);
  return std::make_shared<const PreparedBytes>(*this, false, public_key);
}

Bytes Signature::sign_prepared(const PreparedSignatureKey& secret_key, ByteView msg, ByteView ctx,
                               ByteView rnd) const {
  return sign(prepared_bytes(*this, secret_key, true), msg, ctx, rnd);
}

bool Signature::verify_prepared(const PreparedSignatureKey& public_key, ByteView msg,
                                ByteView ctx, ByteView signature) const {
  return verify(prepared_bytes(*this, public_key, false), msg, ctx, signature);
}

namespace {
constexpr std::array<std::string_view, 11> kNames = {
    "ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "Ed25519", "ML-DSA-65+Ed25519",
    // legacy (RSA), last and never in kDefaultNames
    "RSA-2048-PKCS1", "RSA-2048-PSS", "RSA-3072-PKCS1", "RSA-3072-PSS", "RSA-7680-PKCS1",
    "RSA-7680-PSS"};
// Only post-quantum choices are offered by default: Ed25519 alone is there by name, for comparison
// and for the hybrid, and RSA only for the original SRUP.
constexpr std::array<std::string_view, 4> kDefaultNames = {"ML-DSA-65", "ML-DSA-65+Ed25519",
                                                           "ML-DSA-44", "ML-DSA-87"};
}  // namespace

std::span<const std::string_view> signature_names() noexcept { return kNames; }
std::span<const std::string_view> default_signature_names() noexcept { return kDefaultNames; }

const Signature& signature_by_name(std::string_view name) {
  static const MlDsa ml_dsa_44(MlDsaParameterSet::ml_dsa_44);
  static const MlDsa ml_dsa_65(MlDsaParameterSet::ml_dsa_65);
  static const MlDsa ml_dsa_87(MlDsaParameterSet::ml_dsa_87);
  static const Ed25519 ed25519;
  static const MlDsa65Ed25519 ml_dsa_65_ed25519;
  if (name == "ML-DSA-44") return ml_dsa_44;
  if (name == "ML-DSA-65") return ml_dsa_65;
  if (name == "ML-DSA-87") return ml_dsa_87;
  if (name == "Ed25519") return ed25519;
  if (name == "ML-DSA-65+Ed25519") return ml_dsa_65_ed25519;
  static const RsaSignature rsa[] = {
      {RsaModulus::rsa_2048, RsaSignaturePadding::pkcs1_v1_5},
      {RsaModulus::rsa_2048, RsaSignaturePadding::pss},
      {RsaModulus::rsa_3072, RsaSignaturePadding::pkcs1_v1_5},
      {RsaModulus::rsa_3072, RsaSignaturePadding::pss},
      {RsaModulus::rsa_7680, RsaSignaturePadding::pkcs1_v1_5},
      {RsaModulus::rsa_7680, RsaSignaturePadding::pss}};
  for (const RsaSignature& s : rsa) {
    if (s.name() == name) return s;
  }
  std::string known;
  for (auto n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  throw Error(ErrorCode::unknown_algorithm,
              "unknown signature algorithm '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace pqot::crypto
