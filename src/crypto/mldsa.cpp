// ML-DSA (FIPS 204 sections 5-6): the pure-mode signature over the internal algorithms of
// src/crypto/mldsa/, with the length and context checks at this API edge.
#include "pqot/crypto/mldsa.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "mldsa/dsa.hpp"
#include "mldsa/params.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/secure.hpp"
#include "size_check.hpp"

namespace pqot::crypto {

namespace {

using mldsa::kCrhBytes;
using mldsa::kSeedBytes;

// The pure-mode prefix of M' (Algorithm 2 line 10, Algorithm 3 line 5): 0 || |ctx| || ctx.
struct ContextPrefix {
  std::array<std::uint8_t, 2 + MlDsa::kMaxContextSize> bytes{};
  std::size_t size = 0;
  ByteView view() const { return {bytes.data(), size}; }
};

ContextPrefix context_prefix(ByteView ctx, std::string_view alg) {
  if (ctx.size() > MlDsa::kMaxContextSize) {
    throw Error(ErrorCode::invalid_argument, std::string(alg) +
                                                 ": context must be at most 255 bytes, got " +
                                                 std::to_string(ctx.size()));
  }
  ContextPrefix p;
  p.bytes[0] = 0;  // domain separator of the pure mode (HashML-DSA uses 1)
  p.bytes[1] = static_cast<std::uint8_t>(ctx.size());
  std::copy(ctx.begin(), ctx.end(), p.bytes.begin() + 2);
  p.size = 2 + ctx.size();
  return p;
}

struct Sizes {
  std::size_t pk, sk, sig;
};

template <int K>
constexpr Sizes sizes_of() {
  using P = mldsa::Params<K>;
  return {P::kPkBytes, P::kSkBytes, P::kSigBytes};
}

constexpr Sizes sizes(MlDsaParameterSet set) {
  switch (set) {
    case MlDsaParameterSet::ml_dsa_44:
      return sizes_of<4>();
    case MlDsaParameterSet::ml_dsa_65:
      return sizes_of<6>();
    case MlDsaParameterSet::ml_dsa_87:
      return sizes_of<8>();
  }
  return sizes_of<6>();
}

// Calls f.template operator()<K>() for the rank of `set`.
template <class F>
decltype(auto) dispatch(MlDsaParameterSet set, F&& f) {
  switch (set) {
    case MlDsaParameterSet::ml_dsa_44:
      return f.template operator()<4>();
    case MlDsaParameterSet::ml_dsa_87:
      return f.template operator()<8>();
    case MlDsaParameterSet::ml_dsa_65:
      break;
  }
  return f.template operator()<6>();
}

// Prepared keys (mldsa.hpp): the expanded forms of dsa.hpp on the heap, one class per rank so that
// a key of another parameter set fails the dynamic_cast.
template <int K>
class PreparedSecret final : public PreparedSignatureKey {
 public:
  explicit PreparedSecret(const std::uint8_t* sk) : key_(std::make_unique<mldsa::ExpandedSecretKey<K>>()) {
    mldsa::expand_secret_key<K>(*key_, sk);
  }
  ~PreparedSecret() override { secure_wipe(key_.get(), sizeof(*key_)); }
  PreparedSecret(const PreparedSecret&) = delete;
  PreparedSecret& operator=(const PreparedSecret&) = delete;
  const mldsa::ExpandedSecretKey<K>& key() const noexcept { return *key_; }

 private:
  std::unique_ptr<mldsa::ExpandedSecretKey<K>> key_;
};

template <int K>
class PreparedPublic final : public PreparedSignatureKey {
 public:
  explicit PreparedPublic(const std::uint8_t* pk) : key_(std::make_unique<mldsa::ExpandedPublicKey<K>>()) {
    mldsa::expand_public_key<K>(*key_, pk);
  }
  const mldsa::ExpandedPublicKey<K>& key() const noexcept { return *key_; }

 private:
  std::unique_ptr<mldsa::ExpandedPublicKey<K>> key_;
};

template <class T>
const T& prepared_as(const PreparedSignatureKey& key, std::string_view alg, const char* kind) {
  const auto* p = dynamic_cast<const T*>(&key);
  if (p == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                std::string(alg) + ": not a " + kind + " key this parameter set prepared");
  }
  return *p;
}

}  // namespace

MlDsa::MlDsa(MlDsaParameterSet set) noexcept : set_(set) {}

std::string_view MlDsa::name() const noexcept {
  switch (set_) {
    case MlDsaParameterSet::ml_dsa_44:
      return "ML-DSA-44";
    case MlDsaParameterSet::ml_dsa_65:
      return "ML-DSA-65";
    case MlDsaParameterSet::ml_dsa_87:
      return "ML-DSA-87";
  }
  return "ML-DSA-65";
}

std::size_t MlDsa::public_key_size() const noexcept {
  return sizes(set_).pk;
}
std::size_t MlDsa::secret_key_size() const noexcept {
  return sizes(set_).sk;
}
std::size_t MlDsa::signature_size() const noexcept {
  return sizes(set_).sig;
}

MlDsaKeyPair MlDsa::keygen_internal(ByteView xi) const {
  require_size(xi, kSeedBytes, "seed xi", name());
  MlDsaKeyPair kp;
  kp.public_key.resize(public_key_size());
  kp.secret_key.resize(secret_key_size());
  dispatch(set_, [&]<int K>() {
    mldsa::keygen_internal<K>(kp.public_key.data(), kp.secret_key.data(), xi.data());
  });
  return kp;
}

void MlDsa::check_public_key(ByteView public_key) const {
  require_size(public_key, public_key_size(), "public key", name());
}

Bytes MlDsa::sign_mu(ByteView secret_key, ByteView mu, ByteView rnd) const {
  require_size(secret_key, secret_key_size(), "secret key", name());
  require_size(mu, kCrhBytes, "mu", name());
  require_size(rnd, kSeedBytes, "rnd", name());
  Bytes sig(signature_size());
  const bool ok = dispatch(set_, [&]<int K>() {
    return mldsa::sign_internal_mu<K>(sig.data(), secret_key.data(), mu.data(), rnd.data());
  });
  if (!ok) throw Error(ErrorCode::internal, std::string(name()) + ": signing did not terminate");
  return sig;
}

bool MlDsa::verify_mu(ByteView public_key, ByteView mu, ByteView signature) const {
  require_size(public_key, public_key_size(), "public key", name());
  require_size(mu, kCrhBytes, "mu", name());
  if (signature.size() != signature_size()) return false;
  return dispatch(set_, [&]<int K>() {
    return mldsa::verify_internal_mu<K>(public_key.data(), mu.data(), signature.data());
  });
}

PreparedSignatureKeyPtr MlDsa::prepare_secret_key(ByteView secret_key) const {
  require_size(secret_key, secret_key_size(), "secret key", name());
  return dispatch(set_, [&]<int K>() -> PreparedSignatureKeyPtr {
    return std::make_shared<const PreparedSecret<K>>(secret_key.data());
  });
}

PreparedSignatureKeyPtr MlDsa::prepare_public_key(ByteView public_key) const {
  require_size(public_key, public_key_size(), "public key", name());
  return dispatch(set_, [&]<int K>() -> PreparedSignatureKeyPtr {
    return std::make_shared<const PreparedPublic<K>>(public_key.data());
  });
}

Bytes MlDsa::sign_prepared(const PreparedSignatureKey& secret_key, ByteView msg, ByteView ctx,
                           ByteView rnd) const {
  const ContextPrefix prefix = context_prefix(ctx, name());
  require_size(rnd, kSeedBytes, "rnd", name());
  Bytes sig(signature_size());
  const bool ok = dispatch(set_, [&]<int K>() {
    const auto& sk = prepared_as<PreparedSecret<K>>(secret_key, name(), "secret").key();
    std::array<std::uint8_t, kCrhBytes> mu;
    mldsa::message_representative(mu.data(), sk.tr, prefix.view(), msg);
    return mldsa::sign_expanded_mu<K>(sig.data(), sk, mu.data(), rnd.data());
  });
  if (!ok) throw Error(ErrorCode::internal, std::string(name()) + ": signing did not terminate");
  return sig;
}

bool MlDsa::verify_prepared(const PreparedSignatureKey& public_key, ByteView msg, ByteView ctx,
                            ByteView signature) const {
  const ContextPrefix prefix = context_prefix(ctx, name());
  return dispatch(set_, [&]<int K>() {
    const auto& pk = prepared_as<PreparedPublic<K>>(public_key, name(), "public").key();
    if (signature.size() != signature_size()) return false;
    std::array<std::uint8_t, kCrhBytes> mu;
    mldsa::message_representative(mu.data(), pk.tr, prefix.view(), msg);
    return mldsa::verify_expanded_mu<K>(pk, mu.data(), signature.data());
  });
}

Bytes MlDsa::sign_internal(ByteView secret_key, ByteView m_prime, ByteView rnd) const {
  require_size(secret_key, secret_key_size(), "secret key", name());
  std::array<std::uint8_t, kCrhBytes> mu;
  // tr is stored in sk (Algorithm 7 lines 1 and 6)
  mldsa::message_representative(mu.data(), secret_key.data() + 2 * kSeedBytes, {}, m_prime);
  return sign_mu(secret_key, mu, rnd);
}

bool MlDsa::verify_internal(ByteView public_key, ByteView m_prime, ByteView signature) const {
  require_size(public_key, public_key_size(), "public key", name());
  std::array<std::uint8_t, kCrhBytes> tr, mu;
  mldsa::public_key_hash(tr.data(), public_key);
  mldsa::message_representative(mu.data(), tr.data(), {}, m_prime);
  return verify_mu(public_key, mu, signature);
}

Bytes MlDsa::sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const {
  const ContextPrefix prefix = context_prefix(ctx, name());
  require_size(secret_key, secret_key_size(), "secret key", name());
  std::array<std::uint8_t, kCrhBytes> mu;
  mldsa::message_representative(mu.data(), secret_key.data() + 2 * kSeedBytes, prefix.view(), msg);
  return sign_mu(secret_key, mu, rnd);
}

bool MlDsa::verify(ByteView public_key, ByteView msg, ByteView ctx, ByteView signature) const {
  return verify_mu(public_key, message_representative(public_key, msg, ctx), signature);
}

Bytes MlDsa::message_representative(ByteView public_key, ByteView msg, ByteView ctx) const {
  const ContextPrefix prefix = context_prefix(ctx, name());
  require_size(public_key, public_key_size(), "public key", name());
  std::array<std::uint8_t, kCrhBytes> tr;
  mldsa::public_key_hash(tr.data(), public_key);
  Bytes mu(kCrhBytes);
  mldsa::message_representative(mu.data(), tr.data(), prefix.view(), msg);
  return mu;
}

}  // namespace pqot::crypto
