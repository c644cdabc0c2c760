// HKDF-SHA-256 (RFC 5869) over OpenSSL's EVP_KDF "HKDF".
#include "pqot/crypto/hkdf.hpp"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <memory>
#include <string>

#include "openssl_util.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {

namespace {

constexpr std::size_t kSha256Size = 32;

using KdfCtx = ossl::Ptr<EVP_KDF_CTX, EVP_KDF_CTX_free>;
using ossl::throw_error;


// Fetched once: a fetch per call costs a provider lookup under a lock.
// A failed fetch throws, so the static stays uninitialised and the next call tries again.
EVP_KDF* fetch_hkdf() {
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  if (kdf == nullptr) throw_error("EVP_KDF_fetch(HKDF)");
  return kdf;
}

EVP_KDF* hkdf() {
  static EVP_KDF* const kdf = fetch_hkdf();
  return kdf;
}

// OpenSSL only reads these buffers (hence the const_cast). OSSL_PARAM_get_octet_string refuses
// a NULL pointer even for zero bytes, so empty inputs point at a dummy byte.
OSSL_PARAM octets(const char* key, ByteView data) {
  static unsigned char empty = 0;
  void* p = data.empty() ? &empty : const_cast<std::uint8_t*>(data.data());
  return OSSL_PARAM_construct_octet_string(key, p, data.size());
}

void check_length(std::size_t length) {
  if (length == 0 || length > kHkdfSha256MaxOutput) {
    throw Error(ErrorCode::invalid_argument, "HKDF-SHA-256 output length must be 1.." +
                                                 std::to_string(kHkdfSha256MaxOutput) + ", got " +
                                                 std::to_string(length));
  }
}

// One derivation. `key` is the IKM (extract modes) or the PRK (expand-only); salt is used only by
// the extract modes, info only by the expand modes.
SecretBytes derive(int mode, ByteView key, ByteView salt, ByteView info, std::size_t length) {
  KdfCtx ctx(EVP_KDF_CTX_new(hkdf()));
  if (!ctx) throw_error("EVP_KDF_CTX_new");
  char digest[] = "SHA256";
  OSSL_PARAM params[6];
  std::size_t n = 0;
  params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0);
  params[n++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
  params[n++] = octets(OSSL_KDF_PARAM_KEY, key);
  // RFC 5869 section 2.2: an absent salt is HashLen zeros, which HMAC's key padding gives for free.
  if (!salt.empty()) params[n++] = octets(OSSL_KDF_PARAM_SALT, salt);
  if (!info.empty()) params[n++] = octets(OSSL_KDF_PARAM_INFO, info);
  params[n] = OSSL_PARAM_construct_end();

  SecretBytes out(length);  // wipes itself on every path
  if (EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1) {
    throw_error("EVP_KDF_derive(HKDF)");
  }
  return out;
}

}  // namespace

SecretBytes hkdf_sha256(ByteView ikm, ByteView salt, ByteView info, std::size_t length) {
  check_length(length);
  return derive(EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, ikm, salt, info, length);
}

SecretBytes hkdf_sha256_extract(ByteView ikm, ByteView salt) {
  return derive(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, ikm, salt, {}, kSha256Size);
}

SecretBytes hkdf_sha256_expand(ByteView prk, ByteView info, std::size_t length) {
  check_length(length);
  // RFC 5869 section 2.3: PRK is "at least HashLen octets".
  if (prk.size() < kSha256Size) {
    throw Error(ErrorCode::invalid_length,
                "HKDF-Expand PRK must be at least 32 bytes, got " + std::to_string(prk.size()));
  }
  return derive(EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, {}, info, length);
}

}  // namespace pqot::crypto
