// RSAES-OAEP with SHA-256 and MGF1-SHA-256 (RFC 8017 section 7.1) over OpenSSL's
// EVP_PKEY_encrypt / EVP_PKEY_decrypt; keys are imported and checked by rsa_key.cpp.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <climits>
#include <string>

#include "openssl_util.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/rsa.hpp"
#include "rsa_key.hpp"

namespace pqot::crypto {

namespace {

constexpr std::size_t kHashSize = 32;  // hLen of SHA-256

// OAEP with SHA-256 for both the label hash and MGF1 (section 7.1.1 step 2, appendix B.2.1).
// OpenSSL takes ownership of the label only when the call succeeds, so it gets its own copy.
void set_oaep(EVP_PKEY_CTX* ctx, ByteView label, std::string_view alg) {
  ossl::check(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING),
              "EVP_PKEY_CTX_set_rsa_padding");
  ossl::check(EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()), "EVP_PKEY_CTX_set_rsa_oaep_md");
  ossl::check(EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()), "EVP_PKEY_CTX_set_rsa_mgf1_md");
  if (label.empty()) return;
  if (label.size() > static_cast<std::size_t>(INT_MAX)) {
    throw Error(ErrorCode::invalid_length, std::string(alg) + ": label too long");
  }
  void* copy = OPENSSL_memdup(label.data(), label.size());
  if (copy == nullptr) ossl::throw_error("OPENSSL_memdup");
  if (EVP_PKEY_CTX_set0_rsa_oaep_label(ctx, copy, static_cast<int>(label.size())) != 1) {
    OPENSSL_free(copy);
    ossl::throw_error("EVP_PKEY_CTX_set0_rsa_oaep_label");
  }
}

rsa::PkeyCtx context_for(const rsa::Pkey& key) {
  rsa::PkeyCtx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
  if (!ctx) ossl::throw_error("EVP_PKEY_CTX_new_from_pkey");
  return ctx;
}

}  // namespace

std::string_view RsaOaep::name() const noexcept {
  switch (modulus_) {
    case RsaModulus::rsa_2048:
      return "RSA-2048-OAEP";
    case RsaModulus::rsa_3072:
      return "RSA-3072-OAEP";
    case RsaModulus::rsa_7680:
      return "RSA-7680-OAEP";
  }
  return "RSA-OAEP";
}

std::size_t RsaOaep::ciphertext_size() const noexcept {
  return rsa::modulus_bytes(modulus_);
}

std::size_t RsaOaep::max_plaintext_size() const noexcept {
  return ciphertext_size() - 2 * kHashSize - 2;
}

RsaKeyPair RsaOaep::keygen() const {
  return rsa::generate(modulus_);
}

void RsaOaep::check_public_key(ByteView public_key) const {
  (void)rsa::import_public_key(public_key, modulus_, name());
}

struct RsaOaepKey::Impl {
  rsa::Pkey key;
  RsaModulus modulus;
  bool secret;
};

RsaOaepKey::RsaOaepKey(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
RsaOaepKey::~RsaOaepKey() = default;
RsaOaepKey::RsaOaepKey(RsaOaepKey&&) noexcept = default;
RsaOaepKey& RsaOaepKey::operator=(RsaOaepKey&&) noexcept = default;
RsaModulus RsaOaepKey::modulus() const noexcept {
  return impl_->modulus;
}
bool RsaOaepKey::secret() const noexcept {
  return impl_->secret;
}

RsaOaepKey RsaOaep::prepare_public_key(ByteView public_key) const {
  return RsaOaepKey(std::make_unique<RsaOaepKey::Impl>(
      RsaOaepKey::Impl{rsa::import_public_key(public_key, modulus_, name()), modulus_, false}));
}

RsaOaepKey RsaOaep::prepare_secret_key(ByteView secret_key) const {
  return RsaOaepKey(std::make_unique<RsaOaepKey::Impl>(
      RsaOaepKey::Impl{rsa::import_secret_key(secret_key, modulus_, name()), modulus_, true}));
}

Bytes RsaOaep::encrypt(ByteView public_key, ByteView plaintext, ByteView label) const {
  return encrypt(prepare_public_key(public_key), plaintext, label);
}

Bytes RsaOaep::encrypt(const RsaOaepKey& public_key, ByteView plaintext, ByteView label) const {
  if (!public_key.impl_ || public_key.impl_->modulus != modulus_) {
    throw Error(ErrorCode::invalid_argument,
                std::string(name()) + ": a key prepared for another modulus");
  }
  const rsa::Pkey& key = public_key.impl_->key;
  // Step 1b: "message too long".
  if (plaintext.size() > max_plaintext_size()) {
    throw Error(ErrorCode::invalid_length, std::string(name()) + ": plaintext must be at most " +
                                               std::to_string(max_plaintext_size()) +
                                               " bytes, got " + std::to_string(plaintext.size()));
  }
  const rsa::PkeyCtx ctx = context_for(key);
  ossl::check(EVP_PKEY_encrypt_init(ctx.get()), "EVP_PKEY_encrypt_init");
  set_oaep(ctx.get(), label, name());
  Bytes ct(ciphertext_size());
  std::size_t len = ct.size();
  ossl::check(EVP_PKEY_encrypt(ctx.get(), ct.data(), &len, plaintext.data(), plaintext.size()),
              "EVP_PKEY_encrypt");
  if (len != ct.size())
    throw Error(ErrorCode::internal, std::string(name()) + ": short ciphertext");
  return ct;
}

std::optional<SecretBytes> RsaOaep::decrypt(ByteView secret_key, ByteView ciphertext,
                                            ByteView label) const {
  return decrypt(prepare_secret_key(secret_key), ciphertext, label);
}

std::optional<SecretBytes> RsaOaep::decrypt(const RsaOaepKey& secret_key, ByteView ciphertext,
                                            ByteView label) const {
  if (!secret_key.impl_ || secret_key.impl_->modulus != modulus_ || !secret_key.impl_->secret) {
    throw Error(ErrorCode::invalid_argument,
                std::string(name()) + ": decryption needs a secret key prepared for this modulus");
  }
  const rsa::Pkey& key = secret_key.impl_->key;
  // Section 7.1.2 step 1b: a ciphertext of another length is a decryption error.
  if (ciphertext.size() != ciphertext_size()) return std::nullopt;
  const rsa::PkeyCtx ctx = context_for(key);
  ossl::check(EVP_PKEY_decrypt_init(ctx.get()), "EVP_PKEY_decrypt_init");
  set_oaep(ctx.get(), label, name());
  // OpenSSL decodes the padding in constant time and reports one error for every failure of
  // step 3g (Manger's attack); we add nothing that tells them apart.
  SecretBytes out(ciphertext_size());
  std::size_t len = out.size();
  if (EVP_PKEY_decrypt(ctx.get(), out.data(), &len, ciphertext.data(), ciphertext.size()) != 1) {
    ERR_clear_error();
    return std::nullopt;
  }
  out.resize(len);  // shrinking keeps the block; the whole block is wiped when it is freed
  return out;
}

const RsaOaep& rsa_oaep_by_name(std::string_view name) {
  static const RsaOaep rsa_2048(RsaModulus::rsa_2048);
  static const RsaOaep rsa_3072(RsaModulus::rsa_3072);
  static const RsaOaep rsa_7680(RsaModulus::rsa_7680);
  for (const RsaOaep* s : {&rsa_2048, &rsa_3072, &rsa_7680}) {
    if (s->name() == name) return *s;
  }
  throw Error(ErrorCode::unknown_algorithm,
              "unknown RSA-OAEP suite '" + std::string(name) +
                  "' (known: RSA-2048-OAEP, RSA-3072-OAEP, RSA-7680-OAEP)");
}

}  // namespace pqot::crypto
