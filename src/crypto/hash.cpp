#include "pqot/crypto/hash.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <memory>
#include <string>

#include "openssl_util.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {

namespace {

using MdCtx = ossl::Ptr<EVP_MD_CTX, EVP_MD_CTX_free>;
using MacCtx = ossl::Ptr<EVP_MAC_CTX, EVP_MAC_CTX_free>;

const EVP_MD* sha256_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);  // fetched once, never freed
  if (md == nullptr) throw Error(ErrorCode::internal, "OpenSSL has no SHA-256");
  return md;
}

const EVP_MD* sha512_md() {
  static EVP_MD* md = EVP_MD_fetch(nullptr, "SHA512", nullptr);
  if (md == nullptr) throw Error(ErrorCode::internal, "OpenSSL has no SHA-512");
  return md;
}

template <class Digest>
Digest digest(const EVP_MD* md, std::initializer_list<ByteView> parts, const char* what) {
  MdCtx ctx(EVP_MD_CTX_new());
  if (!ctx) throw Error(ErrorCode::internal, "out of memory");
  ossl::check(EVP_DigestInit_ex2(ctx.get(), md, nullptr), what);
  for (ByteView p : parts) ossl::check(EVP_DigestUpdate(ctx.get(), p.data(), p.size()), what);
  Digest out{};
  unsigned int n = 0;
  ossl::check(EVP_DigestFinal_ex(ctx.get(), out.data(), &n), what);
  if (n != out.size()) throw Error(ErrorCode::internal, std::string(what) + ": wrong digest size");
  return out;
}

EVP_MAC* hmac_mac() {
  static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (mac == nullptr) throw Error(ErrorCode::internal, "OpenSSL has no HMAC");
  return mac;
}

using ossl::check;

}  // namespace

Sha256Digest sha256(ByteView data) { return sha256({data}); }

Sha256Digest sha256(std::initializer_list<ByteView> parts) {
  return digest<Sha256Digest>(sha256_md(), parts, "SHA-256");
}

Sha512Digest sha512(ByteView data) { return digest<Sha512Digest>(sha512_md(), {data}, "SHA-512"); }

Sha256Hasher::Sha256Hasher() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr) throw Error(ErrorCode::internal, "out of memory");
  if (EVP_DigestInit_ex2(static_cast<EVP_MD_CTX*>(ctx_), sha256_md(), nullptr) != 1) {
    EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_));
    throw Error(ErrorCode::internal, "SHA-256: init failed");
  }
}

Sha256Hasher::~Sha256Hasher() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256Hasher::update(ByteView data) {
  if (finished_) throw Error(ErrorCode::internal, "SHA-256: update after finish");
  check(EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size()), "SHA-256");
}

Sha256Digest Sha256Hasher::finish() {
  if (finished_) throw Error(ErrorCode::internal, "SHA-256: finish called twice");
  finished_ = true;
  Sha256Digest out{};
  unsigned int n = 0;
  check(EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &n), "SHA-256");
  if (n != out.size()) throw Error(ErrorCode::internal, "SHA-256: wrong digest size");
  return out;
}

Sha256Digest hmac_sha256(ByteView key, std::span<const ByteView> parts) {
  MacCtx ctx(EVP_MAC_CTX_new(hmac_mac()));
  if (!ctx) throw Error(ErrorCode::internal, "out of memory");
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                               OSSL_PARAM_construct_end()};
  check(EVP_MAC_init(ctx.get(), key.data(), key.size(), params), "HMAC init");
  for (ByteView p : parts) check(EVP_MAC_update(ctx.get(), p.data(), p.size()), "HMAC update");
  Sha256Digest out{};
  std::size_t n = 0;
  check(EVP_MAC_final(ctx.get(), out.data(), &n, out.size()), "HMAC final");
  return out;
}

}  // namespace pqot::crypto
