// Ed25519 (RFC 8032) over OpenSSL's EVP one-shot DigestSign/DigestVerify (no digest: pure EdDSA).
#include "pqot/crypto/ed25519.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <string>

#include "openssl_util.hpp"
#include "pqot/crypto/error.hpp"
#include "size_check.hpp"

namespace pqot::crypto {

namespace {

using Pkey = ossl::Ptr<EVP_PKEY, EVP_PKEY_free>;
using MdCtx = ossl::Ptr<EVP_MD_CTX, EVP_MD_CTX_free>;

void require_no_context(ByteView ctx) {
  if (!ctx.empty()) {
    throw Error(ErrorCode::invalid_argument,
                "Ed25519: a context needs Ed25519ctx, which OpenSSL 3.0 does not offer; "
                "use an empty context");
  }
}

// OpenSSL copies the private key into its own object and cleanses it in EVP_PKEY_free.
Pkey ed25519_private_key(ByteView seed) {
  Pkey p(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
  if (!p) ossl::throw_error("EVP_PKEY_new_raw_private_key(Ed25519)");
  return p;
}

MdCtx new_md_ctx() {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx) throw Error(ErrorCode::internal, "out of memory");
  return ctx;
}

}  // namespace

SignatureKeyPair Ed25519::keygen(ByteView seed) const {
  require_size(seed, kSecretKeySize, "seed", "Ed25519");
  const Pkey key = ed25519_private_key(seed);
  SignatureKeyPair kp;
  kp.public_key.resize(kPublicKeySize);
  std::size_t len = kPublicKeySize;
  if (EVP_PKEY_get_raw_public_key(key.get(), kp.public_key.data(), &len) != 1 ||
      len != kPublicKeySize) {
    ossl::throw_error("EVP_PKEY_get_raw_public_key(Ed25519)");
  }
  kp.secret_key.assign(seed.begin(), seed.end());
  return kp;
}

namespace {

Pkey ed25519_public_key(ByteView public_key) {
  Pkey key(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, public_key.data(), public_key.size()));
  if (!key) ossl::throw_error("EVP_PKEY_new_raw_public_key(Ed25519)");
  return key;
}

Bytes sign_with(EVP_PKEY* key, ByteView msg) {
  const MdCtx md = new_md_ctx();
  ossl::check(EVP_DigestSignInit_ex(md.get(), nullptr, nullptr, nullptr, nullptr, key, nullptr),
              "EVP_DigestSignInit_ex(Ed25519)");
  Bytes sig(Ed25519::kSignatureSize);
  std::size_t len = sig.size();
  ossl::check(EVP_DigestSign(md.get(), sig.data(), &len, msg.data(), msg.size()),
              "EVP_DigestSign(Ed25519)");
  if (len != Ed25519::kSignatureSize) {
    throw Error(ErrorCode::internal, "Ed25519: wrong signature size");
  }
  return sig;
}

bool verify_with(EVP_PKEY* key, ByteView msg, ByteView signature) {
  if (signature.size() != Ed25519::kSignatureSize) return false;
  const MdCtx md = new_md_ctx();
  ossl::check(EVP_DigestVerifyInit_ex(md.get(), nullptr, nullptr, nullptr, nullptr, key, nullptr),
              "EVP_DigestVerifyInit_ex(Ed25519)");
  const int rc =
      EVP_DigestVerify(md.get(), signature.data(), signature.size(), msg.data(), msg.size());
  // A refusal (0) and a signature or key that does not even decode (< 0) are both "invalid";
  // neither may leave errors queued for the next OpenSSL caller.
  ERR_clear_error();
  return rc == 1;
}

// A prepared key is OpenSSL's key object, decoded once (its private half cleansed by
// EVP_PKEY_free). `secret` tells a signing key from a verifying one.
class PreparedEd25519 final : public PreparedSignatureKey {
 public:
  PreparedEd25519(Pkey key, bool secret) : key_(std::move(key)), secret_(secret) {}
  EVP_PKEY* get(bool secret) const {
    if (secret != secret_) {
      throw Error(ErrorCode::invalid_argument,
                  std::string("Ed25519: a ") + (secret ? "public" : "secret") +
                      " key where a " + (secret ? "secret" : "public") + " one is needed");
    }
    return key_.get();
  }

 private:
  Pkey key_;
  bool secret_;
};

EVP_PKEY* prepared_key(const PreparedSignatureKey& key, bool secret) {
  const auto* p = dynamic_cast<const PreparedEd25519*>(&key);
  if (p == nullptr) throw Error(ErrorCode::invalid_argument, "Ed25519: a key it did not prepare");
  return p->get(secret);
}

}  // namespace

Bytes Ed25519::sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const {
  require_size(secret_key, kSecretKeySize, "secret key", "Ed25519");
  require_no_context(ctx);
  require_size(rnd, 0, "rnd", "Ed25519");
  const Pkey key = ed25519_private_key(secret_key);
  return sign_with(key.get(), msg);
}

bool Ed25519::verify(ByteView public_key, ByteView msg, ByteView ctx, ByteView signature) const {
  check_public_key(public_key);
  require_no_context(ctx);
  if (signature.size() != kSignatureSize) return false;
  const Pkey key = ed25519_public_key(public_key);
  return verify_with(key.get(), msg, signature);
}

PreparedSignatureKeyPtr Ed25519::prepare_secret_key(ByteView secret_key) const {
  require_size(secret_key, kSecretKeySize, "secret key", "Ed25519");
  return std::make_shared<const PreparedEd25519>(ed25519_private_key(secret_key), true);
}

PreparedSignatureKeyPtr Ed25519::prepare_public_key(ByteView public_key) const {
  check_public_key(public_key);
  return std::make_shared<const PreparedEd25519>(ed25519_public_key(public_key), false);
}

Bytes Ed25519::sign_prepared(const PreparedSignatureKey& secret_key, ByteView msg, ByteView ctx,
                             ByteView rnd) const {
  require_no_context(ctx);
  require_size(rnd, 0, "rnd", "Ed25519");
  return sign_with(prepared_key(secret_key, true), msg);
}

bool Ed25519::verify_prepared(const PreparedSignatureKey& public_key, ByteView msg, ByteView ctx,
                              ByteView signature) const {
  require_no_context(ctx);
  return verify_with(prepared_key(public_key, false), msg, signature);
}

void Ed25519::check_public_key(ByteView public_key) const {
  require_size(public_key, kPublicKeySize, "public key", "Ed25519");
}

}  // namespace pqot::crypto
