// ML-DSA-65+Ed25519 (draft-ietf-lamps-pq-composite-sigs-19, sections 2.2 and 4): both component
// signatures over one message representative, both required.
#include "pqot/crypto/hybrid_signature.hpp"

#include <string>

#include "pqot/crypto/error.hpp"
#include "size_check.hpp"
#include "pqot/crypto/hash.hpp"

namespace pqot::crypto {

namespace {

constexpr std::size_t kMlDsaPk = 1952, kMlDsaSk = 4032, kMlDsaSig = 3309;

void append(Bytes& out, ByteView data) { out.insert(out.end(), data.begin(), data.end()); }

}  // namespace

std::size_t MlDsa65Ed25519::public_key_size() const noexcept {
  return kMlDsaPk + Ed25519::kPublicKeySize;
}
std::size_t MlDsa65Ed25519::secret_key_size() const noexcept {
  return kMlDsaSk + Ed25519::kSecretKeySize;
}
std::size_t MlDsa65Ed25519::signature_size() const noexcept {
  return kMlDsaSig + Ed25519::kSignatureSize;
}
std::size_t MlDsa65Ed25519::seed_size() const noexcept {
  return MlDsa::kSeedSize + Ed25519::kSecretKeySize;
}

// Draft section 4.2 (Composite-ML-DSA.Sign), step 2:
// M' = Prefix || Label || len(ctx) || ctx || PH(M), PH = SHA-512 for this combination.
Bytes MlDsa65Ed25519::message_representative(ByteView msg, ByteView ctx) {
  if (ctx.size() > MlDsa::kMaxContextSize) {
    throw Error(ErrorCode::invalid_argument,
                "ML-DSA-65+Ed25519: context must be at most 255 bytes, got " +
                    std::to_string(ctx.size()));
  }
  const Sha512Digest ph = sha512(msg);
  Bytes m;
  m.reserve(kPrefix.size() + kLabel.size() + 1 + ctx.size() + ph.size());
  append(m, as_bytes(kPrefix));
  append(m, as_bytes(kLabel));
  m.push_back(static_cast<std::uint8_t>(ctx.size()));
  append(m, ctx);
  append(m, ph);
  return m;
}

SignatureKeyPair MlDsa65Ed25519::keygen(ByteView seed) const {
  require_size(seed, seed_size(), "seed", "ML-DSA-65+Ed25519");
  SignatureKeyPair pq = ml_dsa_.keygen(seed.first(MlDsa::kSeedSize));
  SignatureKeyPair ed = ed25519_.keygen(seed.subspan(MlDsa::kSeedSize));
  SignatureKeyPair kp;
  kp.public_key = std::move(pq.public_key);
  append(kp.public_key, ed.public_key);
  kp.secret_key.reserve(secret_key_size());
  kp.secret_key.assign(pq.secret_key.begin(), pq.secret_key.end());
  kp.secret_key.insert(kp.secret_key.end(), ed.secret_key.begin(), ed.secret_key.end());
  return kp;
}

// Draft section 4.2, steps 3-4: mldsaSig = ML-DSA.Sign(mldsaSK, M', ctx=Label),
// tradSig = Ed25519.Sign(tradSK, M'); the signature is mldsaSig || tradSig (section 4.3).
Bytes MlDsa65Ed25519::sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const {
  require_size(secret_key, secret_key_size(), "secret key", "ML-DSA-65+Ed25519");
  require_size(rnd, rnd_size(), "rnd", "ML-DSA-65+Ed25519");
  const Bytes m_prime = message_representative(msg, ctx);
  Bytes sig = ml_dsa_.sign(secret_key.first(kMlDsaSk), m_prime, as_bytes(kLabel), rnd);
  append(sig, ed25519_.sign(secret_key.subspan(kMlDsaSk), m_prime, {}, {}));
  return sig;
}

// Draft section 4.4 (Composite-ML-DSA.Verify): valid only if both components verify. Both are
// always checked, so the time taken says nothing about which one failed.
bool MlDsa65Ed25519::verify(ByteView public_key, ByteView msg, ByteView ctx,
                            ByteView signature) const {
  check_public_key(public_key);
  const Bytes m_prime = message_representative(msg, ctx);
  if (signature.size() != signature_size()) return false;
  const bool pq_ok = ml_dsa_.verify(public_key.first(kMlDsaPk), m_prime, as_bytes(kLabel),
                                    signature.first(kMlDsaSig));
  const bool ed_ok =
      ed25519_.verify(public_key.subspan(kMlDsaPk), m_prime, {}, signature.subspan(kMlDsaSig));
  return pq_ok && ed_ok;
}

void MlDsa65Ed25519::check_public_key(ByteView public_key) const {
  require_size(public_key, public_key_size(), "public key", "ML-DSA-65+Ed25519");
}

namespace {

// The components' prepared keys, both of one kind.
class PreparedHybrid final : public PreparedSignatureKey {
 public:
  PreparedHybrid(PreparedSignatureKeyPtr pq, PreparedSignatureKeyPtr ed, bool secret)
      : pq(std::move(pq)), ed(std::move(ed)), secret(secret) {}
  PreparedSignatureKeyPtr pq, ed;
  bool secret;
};

const PreparedHybrid& prepared_hybrid(const PreparedSignatureKey& key, bool secret) {
  const auto* p = dynamic_cast<const PreparedHybrid*>(&key);
  if (p == nullptr || p->secret != secret) {
    throw Error(ErrorCode::invalid_argument,
                std::string("ML-DSA-65+Ed25519: not a ") + (secret ? "secret" : "public") +
                    " key it prepared");
  }
  return *p;
}

}  // namespace

PreparedSignatureKeyPtr MlDsa65Ed25519::prepare_secret_key(ByteView secret_key) const {
  require_size(secret_key, secret_key_size(), "secret key", "ML-DSA-65+Ed25519");
  return std::make_shared<const PreparedHybrid>(
      ml_dsa_.prepare_secret_key(secret_key.first(kMlDsaSk)),
      ed25519_.prepare_secret_key(secret_key.subspan(kMlDsaSk)), true);
}

PreparedSignatureKeyPtr MlDsa65Ed25519::prepare_public_key(ByteView public_key) const {
  check_public_key(public_key);
  return std::make_shared<const PreparedHybrid>(
      ml_dsa_.prepare_public_key(public_key.first(kMlDsaPk)),
      ed25519_.prepare_public_key(public_key.subspan(kMlDsaPk)), false);
}

Bytes MlDsa65Ed25519::sign_prepared(const PreparedSignatureKey& secret_key, ByteView msg,
                                    ByteView ctx, ByteView rnd) const {
  const PreparedHybrid& k = prepared_hybrid(secret_key, true);
  require_size(rnd, rnd_size(), "rnd", "ML-DSA-65+Ed25519");
  const Bytes m_prime = message_representative(msg, ctx);
  Bytes sig = ml_dsa_.sign_prepared(*k.pq, m_prime, as_bytes(kLabel), rnd);
  append(sig, ed25519_.sign_prepared(*k.ed, m_prime, {}, {}));
  return sig;
}

bool MlDsa65Ed25519::verify_prepared(const PreparedSignatureKey& public_key, ByteView msg,
                                     ByteView ctx, ByteView signature) const {
  const PreparedHybrid& k = prepared_hybrid(public_key, false);
  const Bytes m_prime = message_representative(msg, ctx);
  if (signature.size() != signature_size()) return false;
  const bool pq_ok =
      ml_dsa_.verify_prepared(*k.pq, m_prime, as_bytes(kLabel), signature.first(kMlDsaSig));
  const bool ed_ok = ed25519_.verify_prepared(*k.ed, m_prime, {}, signature.subspan(kMlDsaSig));
  return pq_ok && ed_ok;
}

}  // namespace pqot::crypto
