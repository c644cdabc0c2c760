#include "key_file_rsa.hpp"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <cstring>
#include <limits>
#include <string>

#include "openssl_util.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto::rsa_key_file {

namespace {

using Pkey = ossl::Ptr<EVP_PKEY, EVP_PKEY_free>;
using PkeyCtx = ossl::Ptr<EVP_PKEY_CTX, EVP_PKEY_CTX_free>;
using P8 = ossl::Ptr<PKCS8_PRIV_KEY_INFO, PKCS8_PRIV_KEY_INFO_free>;

[[noreturn]] void refuse(ErrorCode code, const std::string& why) {
  ERR_clear_error();  // OpenSSL's reasons for a bad input are not ours to keep queued
  throw Error(code, why);
}

long checked_length(ByteView der) {
  if (der.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    refuse(ErrorCode::invalid_encoding, "RSA key file too large");
  }
  return static_cast<long>(der.size());
}

void require_rsa(const EVP_PKEY* key, const char* what) {
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) {
    refuse(ErrorCode::invalid_key, std::string(what) + " is not an rsaEncryption key");
  }
}

// Compares OpenSSL's encoding with the input: DER has one encoding per value (X.690 section
// 10), and an RSA key's encoding must be the one we would write back.
void require_same(const unsigned char* encoded, int length, ByteView der, const char* what) {
  const bool same = length > 0 && static_cast<std::size_t>(length) == der.size() &&
                    std::memcmp(encoded, der.data(), der.size()) == 0;
  if (!same) refuse(ErrorCode::invalid_encoding, std::string(what) + " is not canonical DER");
}

Bytes spki_of(EVP_PKEY* key) {
  unsigned char* buf = nullptr;
  const int len = i2d_PUBKEY(key, &buf);
  if (len <= 0) ossl::throw_error("i2d_PUBKEY");
  Bytes out(buf, buf + len);
  OPENSSL_free(buf);
  return out;
}

using Bn = ossl::Ptr<BIGNUM, BN_clear_free>;
using BnCtx = ossl::Ptr<BN_CTX, BN_CTX_free>;

Bn bn_param(const EVP_PKEY* key, const char* name) {
  BIGNUM* v = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &v) != 1) {
    refuse(ErrorCode::invalid_key, "the RSA private key lacks its CRT values");
  }
  return Bn(v);
}

// The consistency checks of OpenSSL's pairwise check (SP 800-56B section 6.4.1.2.1) without its
// primality tests: n = p q, d e = 1 mod (p - 1) and mod (q - 1), d mod (p - 1) = dP,
// d mod (q - 1) = dQ, q qInv = 1 mod p. A handful of multiplications, whatever the key size.
bool parts_fit(const EVP_PKEY* key) {
  const Bn n = bn_param(key, "n"), e = bn_param(key, "e"), d = bn_param(key, "d");
  const Bn p = bn_param(key, "rsa-factor1"), q = bn_param(key, "rsa-factor2");
  const Bn dp = bn_param(key, "rsa-exponent1"), dq = bn_param(key, "rsa-exponent2");
  const Bn qinv = bn_param(key, "rsa-coefficient1");
  const BnCtx ctx(BN_CTX_secure_new());
  const Bn t(BN_secure_new()), p1(BN_secure_new()), q1(BN_secure_new());
  if (!ctx || !t || !p1 || !q1) ossl::throw_error("BN_secure_new");
  const auto check = [](int rc) {
    if (rc != 1) ossl::throw_error("RSA key check");
  };
  check(BN_mul(t.get(), p.get(), q.get(), ctx.get()));
  if (BN_cmp(t.get(), n.get()) != 0) return false;
  check(BN_sub(p1.get(), p.get(), BN_value_one()));
  check(BN_sub(q1.get(), q.get(), BN_value_one()));
  for (const BIGNUM* m : {p1.get(), q1.get()}) {
    check(BN_mod_mul(t.get(), d.get(), e.get(), m, ctx.get()));
    if (!BN_is_one(t.get())) return false;
  }
  check(BN_nnmod(t.get(), d.get(), p1.get(), ctx.get()));
  if (BN_cmp(t.get(), dp.get()) != 0) return false;
  check(BN_nnmod(t.get(), d.get(), q1.get(), ctx.get()));
  if (BN_cmp(t.get(), dq.get()) != 0) return false;
  check(BN_mod_mul(t.get(), q.get(), qinv.get(), p.get(), ctx.get()));
  return BN_is_one(t.get()) == 1;
}

}  // namespace

std::size_t public_key_bits(ByteView spki) {
  const unsigned char* p = spki.data();
  const Pkey key(d2i_PUBKEY(nullptr, &p, checked_length(spki)));
  if (!key || p != spki.data() + spki.size()) {
    refuse(ErrorCode::invalid_key, "the RSA public key cannot be read");
  }
  require_rsa(key.get(), "the public key");
  const Bytes again = spki_of(key.get());
  require_same(again.data(), static_cast<int>(again.size()), spki, "the RSA SubjectPublicKeyInfo");
  return static_cast<std::size_t>(EVP_PKEY_get_bits(key.get()));
}

PrivateKeyInfo private_key_info(ByteView pkcs8,
                                const std::function<void(std::size_t)>& accept_bits) {
  const unsigned char* p = pkcs8.data();
  const P8 info(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, checked_length(pkcs8)));
  if (!info || p != pkcs8.data() + pkcs8.size()) {
    refuse(ErrorCode::invalid_key, "the RSA private key cannot be read");
  }
  const Pkey key(EVP_PKCS82PKEY(info.get()));
  if (!key) refuse(ErrorCode::invalid_key, "the RSA private key cannot be read");
  require_rsa(key.get(), "the private key");

  const P8 again(EVP_PKEY2PKCS8(key.get()));
  if (!again) ossl::throw_error("EVP_PKEY2PKCS8");
  unsigned char* buf = nullptr;
  const int len = i2d_PKCS8_PRIV_KEY_INFO(again.get(), &buf);
  if (len <= 0) ossl::throw_error("i2d_PKCS8_PRIV_KEY_INFO");
  const bool same = static_cast<std::size_t>(len) == pkcs8.size() &&
                    std::memcmp(buf, pkcs8.data(), pkcs8.size()) == 0;
  OPENSSL_clear_free(buf, static_cast<std::size_t>(len));  // a private key
  if (!same) refuse(ErrorCode::invalid_encoding, "the RSA PrivateKeyInfo is not canonical DER");

  const auto bits = static_cast<std::size_t>(EVP_PKEY_get_bits(key.get()));
  accept_bits(bits);  // before any work that grows with the modulus
  if (!parts_fit(key.get())) {
    refuse(ErrorCode::invalid_key, "the RSA private key is inconsistent (pairwise check failed)");
  }
  return {bits, spki_of(key.get())};
}

}  // namespace pqot::crypto::rsa_key_file
