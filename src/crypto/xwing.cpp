// X-Wing (draft-connolly-cfrg-xwing-kem): ML-KEM-768 and X25519 combined with SHA3-256.
//
//   expand(sk)  = SHAKE256(sk, 96) -> (d || z for ML-KEM-768, sk_X)
//   pk          = pk_M || pk_X                      (1184 + 32 bytes)
//   ct          = ct_M || ct_X                      (1088 + 32 bytes)
//   ss          = SHA3-256(ss_M || ss_X || ct_X || pk_X || "\.//^\")
#include "pqot/crypto/xwing.hpp"

#include <array>
#include <memory>
#include <cstring>
#include <string>

#include "pqot/crypto/error.hpp"
#include "size_check.hpp"
#include "pqot/crypto/mlkem.hpp"
#include "pqot/crypto/sha3.hpp"
#include "pqot/crypto/x25519.hpp"

namespace pqot::crypto {

namespace {

constexpr std::size_t kMlKemPk = 1184;
constexpr std::size_t kMlKemCt = 1088;
constexpr std::uint8_t kLabel[6] = {0x5c, 0x2e, 0x2f, 0x2f, 0x5e, 0x5c};  // "\.//^\"

const MlKem& ml_kem_768() {
  static const MlKem kem(MlKemParameterSet::ml_kem_768);
  return kem;
}

struct Expanded {
  KemKeyPair ml_kem;
  std::unique_ptr<X25519PrivateKey> x;
};

Expanded expand_decapsulation_key(ByteView sk) {
  Secret<96> expanded;
  shake256(sk, expanded.span());
  Expanded e;
  e.ml_kem = ml_kem_768().keygen_internal({expanded.data(), 32}, {expanded.data() + 32, 32});
  e.x = std::make_unique<X25519PrivateKey>(ByteView(expanded.data() + 64, 32));
  return e;
}

// X25519 gives no output for a low-order point; X-Wing takes the mathematical result, which is
// then all zero (the draft does not reject it: the ML-KEM half still protects the secret).
Secret<32> x25519_or_zero(const X25519PrivateKey& sk, ByteView pk) {
  auto ss = sk.shared_secret(pk);
  return ss ? *ss : Secret<32>{};
}

SecretBytes combine(ByteView ss_m, const Secret<32>& ss_x, ByteView ct_x, ByteView pk_x) {
  Secret<32 + 32 + 32 + 32 + sizeof(kLabel)> input;
  std::uint8_t* p = input.data();
  std::memcpy(p, ss_m.data(), 32);
  std::memcpy(p + 32, ss_x.data(), 32);
  std::memcpy(p + 64, ct_x.data(), 32);
  std::memcpy(p + 96, pk_x.data(), 32);
  std::memcpy(p + 128, kLabel, sizeof(kLabel));
  auto digest = sha3_256(input.span());
  SecretBytes ss(digest.begin(), digest.end());
  secure_wipe(digest.data(), digest.size());
  return ss;
}

}  // namespace

KemKeyPair XWing::generate_keypair(ByteView seed) const {
  require_size(seed, kSecretKeySize, "seed (decapsulation key)", "X-Wing");
  const Expanded e = expand_decapsulation_key(seed);
  KemKeyPair kp;
  kp.public_key = e.ml_kem.public_key;
  kp.public_key.insert(kp.public_key.end(), e.x->public_key().begin(), e.x->public_key().end());
  kp.secret_key.assign(seed.begin(), seed.end());
  return kp;
}

void XWing::check_public_key(ByteView public_key) const {
  require_size(public_key, kPublicKeySize, "encapsulation key", "X-Wing");
  ml_kem_768().check_public_key(public_key.first(kMlKemPk));
}

namespace {

// The encapsulation of X-Wing's section 5.4 once ML-KEM-768's part `m` (from the seed's first 32
// bytes) is made: the ephemeral X25519 key from the seed's last 32 bytes, then the combiner.
KemEncapsulation finish_encapsulation(KemEncapsulation m, ByteView pk_x, ByteView seed) {
  const X25519PrivateKey ek_x(seed.subspan(32));
  const X25519Public& ct_x = ek_x.public_key();
  const Secret<32> ss_x = x25519_or_zero(ek_x, pk_x);

  KemEncapsulation out;
  out.shared_secret = combine(m.shared_secret, ss_x, ct_x, pk_x);
  out.ciphertext = std::move(m.ciphertext);
  out.ciphertext.insert(out.ciphertext.end(), ct_x.begin(), ct_x.end());
  return out;
}

// A prepared encapsulation key: ML-KEM-768's prepared key and pk_X.
class PreparedXWingEk final : public PreparedKemKey {
 public:
  PreparedXWingEk(PreparedKemKeyPtr m, ByteView pk_x) : m(std::move(m)) {
    std::memcpy(this->pk_x.data(), pk_x.data(), pk_x.size());
  }
  PreparedKemKeyPtr m;
  X25519Public pk_x{};
};

// A prepared decapsulation key: the expanded ML-KEM-768 key prepared, the X25519 private key.
class PreparedXWingDk final : public PreparedKemKey {
 public:
  explicit PreparedXWingDk(ByteView sk) {
    Expanded e = expand_decapsulation_key(sk);
    m = ml_kem_768().prepare_secret_key(e.ml_kem.secret_key);
    x = std::move(e.x);
  }
  PreparedKemKeyPtr m;
  std::unique_ptr<X25519PrivateKey> x;
};

template <class T>
const T& prepared_xwing_as(const PreparedKemKey& key, const char* kind) {
  const auto* p = dynamic_cast<const T*>(&key);
  if (p == nullptr) throw Error(ErrorCode::invalid_argument, std::string("X-Wing: not ") + kind + " key it prepared");
  return *p;
}

}  // namespace

KemEncapsulation XWing::encapsulate(ByteView public_key, ByteView seed) const {
  check_public_key(public_key);
  require_size(seed, encaps_seed_size(), "seed (m || ek_X)", "X-Wing");
  KemEncapsulation m = ml_kem_768().encaps_internal(public_key.first(kMlKemPk), seed.first(32));
  return finish_encapsulation(std::move(m), public_key.subspan(kMlKemPk), seed);
}

PreparedKemKeyPtr XWing::prepare_public_key(ByteView public_key) const {
  check_public_key(public_key);
  return std::make_shared<const PreparedXWingEk>(ml_kem_768().prepare_public_key(public_key.first(kMlKemPk)),
                                                 public_key.subspan(kMlKemPk));
}

PreparedKemKeyPtr XWing::prepare_secret_key(ByteView secret_key) const {
  require_size(secret_key, kSecretKeySize, "decapsulation key", "X-Wing");
  return std::make_shared<const PreparedXWingDk>(secret_key);
}

KemEncapsulation XWing::encapsulate_prepared(const PreparedKemKey& public_key, ByteView seed) const {
  const auto& ek = prepared_xwing_as<PreparedXWingEk>(public_key, "an encapsulation");
  require_size(seed, encaps_seed_size(), "seed (m || ek_X)", "X-Wing");
  KemEncapsulation m = ml_kem_768().encapsulate_prepared(*ek.m, seed.first(32));
  return finish_encapsulation(std::move(m), ek.pk_x, seed);
}

SecretBytes XWing::decapsulate_prepared(const PreparedKemKey& secret_key, ByteView ciphertext) const {
  const auto& dk = prepared_xwing_as<PreparedXWingDk>(secret_key, "a decapsulation");
  require_size(ciphertext, kCiphertextSize, "ciphertext", "X-Wing");
  const ByteView ct_x = ciphertext.subspan(kMlKemCt);
  const SecretBytes ss_m = ml_kem_768().decapsulate_prepared(*dk.m, ciphertext.first(kMlKemCt));
  const Secret<32> ss_x = x25519_or_zero(*dk.x, ct_x);
  return combine(ss_m, ss_x, ct_x, dk.x->public_key());
}

SecretBytes XWing::decapsulate(ByteView secret_key, ByteView ciphertext) const {
  require_size(secret_key, kSecretKeySize, "decapsulation key", "X-Wing");
  require_size(ciphertext, kCiphertextSize, "ciphertext", "X-Wing");
  const Expanded e = expand_decapsulation_key(secret_key);
  const ByteView ct_m = ciphertext.first(kMlKemCt);
  const ByteView ct_x = ciphertext.subspan(kMlKemCt);
  // The expanded dk is well-formed by construction, so no hash check is needed.
  const SecretBytes ss_m = ml_kem_768().decaps_internal(e.ml_kem.secret_key, ct_m);
  const Secret<32> ss_x = x25519_or_zero(*e.x, ct_x);
  return combine(ss_m, ss_x, ct_x, e.x->public_key());
}

}  // namespace pqot::crypto
