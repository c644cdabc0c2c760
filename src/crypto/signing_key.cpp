// SigningKey and VerifyingKey: a Signature and one key it prepared.
#include "pqot/crypto/signing_key.hpp"

#include <stdexcept>

#include "pqot/crypto/random.hpp"

namespace pqot::crypto {

SigningKey::SigningKey(const Signature& alg, ByteView secret_key)
    : alg_(&alg), key_(alg.prepare_secret_key(secret_key)) {}

const Signature& SigningKey::algorithm() const {
  if (alg_ == nullptr) throw std::logic_error("SigningKey: empty");
  return *alg_;
}

Bytes SigningKey::sign(ByteView msg, ByteView ctx) const {
  const Signature& alg = algorithm();
  SecretBytes rnd(alg.rnd_size());
  random_secret_bytes(rnd);
  return alg.sign_prepared(*key_, msg, ctx, rnd);
}

Bytes SigningKey::sign(ByteView msg, ByteView ctx, ByteView rnd) const {
  return algorithm().sign_prepared(*key_, msg, ctx, rnd);
}

VerifyingKey::VerifyingKey(const Signature& alg, ByteView public_key)
    : alg_(&alg), key_(alg.prepare_public_key(public_key)) {}

const Signature& VerifyingKey::algorithm() const {
  if (alg_ == nullptr) throw std::logic_error("VerifyingKey: empty");
  return *alg_;
}

bool VerifyingKey::verify(ByteView msg, ByteView ctx, ByteView signature) const {
  return algorithm().verify_prepared(*key_, msg, ctx, signature);
}

}  // namespace pqot::crypto
