// RSASSA-PKCS1-v1_5 and RSASSA-PSS with SHA-256 (RFC 8017 sections 8.1, 8.2) over OpenSSL's
// EVP_DigestSign / EVP_DigestVerify; keys are imported and checked by rsa_key.cpp.
#include "pqot/crypto/rsa.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <string>

#include "openssl_util.hpp"
#include "pqot/crypto/error.hpp"
#include "rsa_key.hpp"

namespace pqot::crypto {

namespace {

using MdCtx = ossl::Ptr<EVP_MD_CTX, EVP_MD_CTX_free>;

constexpr int kPssSaltLength = 32;  // = hLen of SHA-256, the usual choice (RFC 8017 9.1 note 4)

void require_empty_context(ByteView ctx, std::string_view alg) {
  if (!ctx.empty()) {
    throw Error(ErrorCode::invalid_argument, std::string(alg) + " takes no context (got " +
                                                 std::to_string(ctx.size()) + " bytes)");
  }
}

// Sets the padding on the EVP_PKEY_CTX of a DigestSign/DigestVerify context. For PSS the salt
// length is exact on both sides: OpenSSL's verifier then refuses any other length (9.1.2 step 10).
void set_padding(EVP_PKEY_CTX* pctx, RsaSignaturePadding padding) {
  if (padding == RsaSignaturePadding::pkcs1_v1_5) {
    ossl::check(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING),
                "EVP_PKEY_CTX_set_rsa_padding");
    return;
  }
  ossl::check(EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING),
              "EVP_PKEY_CTX_set_rsa_padding");
  ossl::check(EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, kPssSaltLength),
              "EVP_PKEY_CTX_set_rsa_pss_saltlen");
  ossl::check(EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()), "EVP_PKEY_CTX_set_rsa_mgf1_md");
}

}  // namespace

RsaSignature::RsaSignature(RsaModulus modulus, RsaSignaturePadding padding) noexcept
    : modulus_(modulus), padding_(padding) {}

std::string_view RsaSignature::name() const noexcept {
  const bool pss = padding_ == RsaSignaturePadding::pss;
  switch (modulus_) {
    case RsaModulus::rsa_2048:
      return pss ? "RSA-2048-PSS" : "RSA-2048-PKCS1";
    case RsaModulus::rsa_3072:
      return pss ? "RSA-3072-PSS" : "RSA-3072-PKCS1";
    case RsaModulus::rsa_7680:
      return pss ? "RSA-7680-PSS" : "RSA-7680-PKCS1";
  }
  return "RSA";
}

std::size_t RsaSignature::signature_size() const noexcept {
  return rsa::modulus_bytes(modulus_);
}

SignatureKeyPair RsaSignature::keygen(ByteView /*seed*/) const {
  throw Error(ErrorCode::invalid_argument, "RSA keys cannot be derived from a seed");
}

SignatureKeyPair RsaSignature::keygen() const {
  return rsa::generate(modulus_);
}

Bytes RsaSignature::sign(ByteView secret_key, ByteView msg, ByteView ctx, ByteView rnd) const {
  require_empty_context(ctx, name());
  if (!rnd.empty()) {
    throw Error(ErrorCode::invalid_length, std::string(name()) + " takes no rnd (got " +
                                               std::to_string(rnd.size()) +
                                               " bytes); PSS salts come from OpenSSL's generator");
  }
  const rsa::Pkey key = rsa::import_secret_key(secret_key, modulus_, name());
  const MdCtx md(EVP_MD_CTX_new());
  if (!md) ossl::throw_error("EVP_MD_CTX_new");
  EVP_PKEY_CTX* pctx = nullptr;  // owned by md
  ossl::check(
      EVP_DigestSignInit_ex(md.get(), &pctx, "SHA256", nullptr, nullptr, key.get(), nullptr),
      "EVP_DigestSignInit_ex");
  set_padding(pctx, padding_);
  Bytes sig(signature_size());
  std::size_t len = sig.size();
  ossl::check(EVP_DigestSign(md.get(), sig.data(), &len, msg.data(), msg.size()), "EVP_DigestSign");
  if (len != sig.size())
    throw Error(ErrorCode::internal, std::string(name()) + ": short signature");
  return sig;
}

bool RsaSignature::verify(ByteView public_key, ByteView msg, ByteView ctx,
                          ByteView signature) const {
  require_empty_context(ctx, name());
  const rsa::Pkey key = rsa::import_public_key(public_key, modulus_, name());
  // Section 8.2.2 / 8.1.2 step 1: a signature of any other length is invalid.
  if (signature.size() != signature_size()) return false;
  const MdCtx md(EVP_MD_CTX_new());
  if (!md) ossl::throw_error("EVP_MD_CTX_new");
  EVP_PKEY_CTX* pctx = nullptr;
  ossl::check(
      EVP_DigestVerifyInit_ex(md.get(), &pctx, "SHA256", nullptr, nullptr, key.get(), nullptr),
      "EVP_DigestVerifyInit_ex");
  set_padding(pctx, padding_);
  const int rc =
      EVP_DigestVerify(md.get(), signature.data(), signature.size(), msg.data(), msg.size());
  if (rc == 1) return true;
  // 0 (no match) or negative (e.g. the representative not below n, 5.2.2 step 1): both mean
  // "invalid signature"; the queued reasons must not surface in an unrelated later error.
  ERR_clear_error();
  return false;
}

void RsaSignature::check_public_key(ByteView public_key) const {
  (void)rsa::import_public_key(public_key, modulus_, name());
}

}  // namespace pqot::crypto
