// RSA key import, checks, generation and export over OpenSSL (DER SPKI and PKCS#8).
#include "rsa_key.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <algorithm>
#include <climits>
#include <string>

#include "pqot/crypto/error.hpp"

namespace pqot::crypto {

namespace {

using rsa::Pkey;
using rsa::PkeyCtx;
using Bignum = ossl::Ptr<BIGNUM, BN_free>;
using Pkcs8 = ossl::Ptr<PKCS8_PRIV_KEY_INFO, PKCS8_PRIV_KEY_INFO_free>;

// Length of a DER TLV with `content` bytes of content (short form below 128, then one or two
// length bytes; RSA keys up to 16384 bits stay below 65536).
constexpr std::size_t tlv(std::size_t content) {
  return 1 + (content < 0x80 ? 1 : content < 0x100 ? 2 : 3) + content;
}

// SubjectPublicKeyInfo { AlgorithmIdentifier { rsaEncryption, NULL }, BIT STRING { RSAPublicKey
// { INTEGER n, INTEGER e } } } (RFC 5280 4.1, RFC 8017 A.1.1). n has its top bit set, so its
// INTEGER needs a leading zero byte; e = 65537 is the three bytes 01 00 01.
constexpr std::size_t spki_size(std::size_t modulus_bytes) {
  const std::size_t algorithm = tlv(tlv(9) + tlv(0));  // OID 1.2.840.113549.1.1.1, NULL
  const std::size_t rsa_public_key = tlv(tlv(modulus_bytes + 1) + tlv(3));
  return tlv(algorithm + tlv(1 + rsa_public_key));  // the BIT STRING's unused-bits byte
}
static_assert(spki_size(256) == 294);  // the 2048-bit keys of Wycheproof: 30 82 01 22 ...

[[noreturn]] void refuse(std::string_view alg, const std::string& why) {
  ERR_clear_error();  // the refusal says what is wrong; OpenSSL's queue must not leak to the next
                      // call
  throw Error(ErrorCode::invalid_key, std::string(alg) + ": " + why);
}

Bignum bn_param(const EVP_PKEY* key, const char* name, std::string_view alg) {
  BIGNUM* raw = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &raw) != 1) refuse(alg, std::string("key has no ") + name);
  return Bignum(raw);
}

// What both key kinds must satisfy. The modulus size names the suite. n must be odd (a product of
// two odd primes; Montgomery arithmetic needs it). e must be odd and at least 3 (RFC 8017 3.1);
// at most 64 bits because OpenSSL refuses larger exponents for moduli over 3072 bits, and one rule
// for every suite is simpler. Small e is allowed: verification re-encodes (8.2.2 step 3-4) or
// checks the whole PSS encoding (9.1.2), so e = 3 admits no padding forgery, and old keys use it.
void check_rsa_key(const EVP_PKEY* key, RsaModulus modulus, std::string_view alg) {
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) refuse(alg, "not an rsaEncryption key");
  const int bits = EVP_PKEY_get_bits(key);
  if (bits != static_cast<int>(modulus)) {
    refuse(alg, "modulus has " + std::to_string(bits) + " bits, the suite needs " +
                    std::to_string(static_cast<int>(modulus)));
  }
  const Bignum n = bn_param(key, OSSL_PKEY_PARAM_RSA_N, alg);
  const Bignum e = bn_param(key, OSSL_PKEY_PARAM_RSA_E, alg);
  if (!BN_is_odd(n.get())) refuse(alg, "modulus is even");
  if (!BN_is_odd(e.get()) || BN_num_bits(e.get()) < 2 || BN_num_bits(e.get()) > 64) {
    refuse(alg, "public exponent must be odd, at least 3 and at most 64 bits");
  }
}

Bytes export_public_key(const EVP_PKEY* key) {
  const int len = i2d_PUBKEY(key, nullptr);
  if (len <= 0) ossl::throw_error("i2d_PUBKEY");
  Bytes der(static_cast<std::size_t>(len));
  unsigned char* p = der.data();
  if (i2d_PUBKEY(key, &p) != len) ossl::throw_error("i2d_PUBKEY");
  return der;
}

SecretBytes export_secret_key(const EVP_PKEY* key) {
  const Pkcs8 p8(EVP_PKEY2PKCS8(key));
  if (!p8) ossl::throw_error("EVP_PKEY2PKCS8");
  const int len = i2d_PKCS8_PRIV_KEY_INFO(p8.get(), nullptr);
  if (len <= 0) ossl::throw_error("i2d_PKCS8_PRIV_KEY_INFO");
  SecretBytes der(static_cast<std::size_t>(len));  // written in place: no unwiped copy
  unsigned char* p = der.data();
  if (i2d_PKCS8_PRIV_KEY_INFO(p8.get(), &p) != len) ossl::throw_error("i2d_PKCS8_PRIV_KEY_INFO");
  return der;
}

long der_length(ByteView der, std::string_view alg) {
  if (der.empty() || der.size() > static_cast<std::size_t>(LONG_MAX)) refuse(alg, "empty key");
  return static_cast<long>(der.size());
}

}  // namespace

std::size_t rsa_spki_size(RsaModulus modulus) noexcept {
  return spki_size(rsa::modulus_bytes(modulus));
}

namespace rsa {

Pkey import_public_key(ByteView spki_der, RsaModulus modulus, std::string_view alg) {
  const unsigned char* p = spki_der.data();
  Pkey key(d2i_PUBKEY(nullptr, &p, der_length(spki_der, alg)));
  if (!key) refuse(alg, "public key is not a DER SubjectPublicKeyInfo");
  if (p != spki_der.data() + spki_der.size()) refuse(alg, "bytes after the public key");
  check_rsa_key(key.get(), modulus, alg);
  // One encoding per key: BER length forms, a missing NULL or padded integers would re-encode
  // differently, and a key identified by its bytes must not have two spellings.
  const Bytes canonical = export_public_key(key.get());
  if (!std::equal(canonical.begin(), canonical.end(), spki_der.begin(), spki_der.end())) {
    refuse(alg, "public key is not in canonical DER");
  }
  return key;
}

Pkey import_secret_key(ByteView pkcs8_der, RsaModulus modulus, std::string_view alg) {
  const unsigned char* p = pkcs8_der.data();
  // The PKCS#8 structure clears its key octets when freed (OpenSSL's pkey_cb).
  const Pkcs8 p8(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, der_length(pkcs8_der, alg)));
  if (!p8) refuse(alg, "secret key is not a DER PKCS#8 PrivateKeyInfo");
  if (p != pkcs8_der.data() + pkcs8_der.size()) refuse(alg, "bytes after the secret key");
  Pkey key(EVP_PKCS82PKEY(p8.get()));
  if (!key) refuse(alg, "PKCS#8 does not hold an RSA private key");
  check_rsa_key(key.get(), modulus, alg);
  return key;
}

RsaKeyPair generate(RsaModulus modulus) {
  const PkeyCtx ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nullptr));
  if (!ctx) ossl::throw_error("EVP_PKEY_CTX_new_id");
  ossl::check(EVP_PKEY_keygen_init(ctx.get()), "EVP_PKEY_keygen_init");
  ossl::check(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), static_cast<int>(modulus)),
              "EVP_PKEY_CTX_set_rsa_keygen_bits");
  const Bignum e(BN_new());
  if (!e || BN_set_word(e.get(), RSA_F4) != 1) ossl::throw_error("BN_set_word");
  ossl::check(EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx.get(), e.get()),
              "EVP_PKEY_CTX_set1_rsa_keygen_pubexp");
  EVP_PKEY* raw = nullptr;
  ossl::check(EVP_PKEY_keygen(ctx.get(), &raw), "EVP_PKEY_keygen");
  const Pkey key(raw);
  return RsaKeyPair{export_public_key(key.get()), export_secret_key(key.get())};
}

}  // namespace rsa
}  // namespace pqot::crypto
