// Key files of Ed25519 (RFC 8410), ML-DSA-65+Ed25519 (draft-ietf-lamps-pq-composite-sigs) and RSA
// (rsaEncryption) against OpenSSL: OpenSSL's files decode to its keys, and OpenSSL reads ours.
// The Signatures come from key_file_doubles.hpp (passed as `expected`); where the registry has
// the real ones, the same files must decode to them without `expected`.
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string>

#include "key_file_doubles.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/key_file.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::crypto {
namespace {

using Pkey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

Bytes bytes(ByteView v) {
  return Bytes(v.begin(), v.end());
}

Bytes i2d_public(EVP_PKEY* key) {
  unsigned char* buf = nullptr;
  const int n = i2d_PUBKEY(key, &buf);
  EXPECT_GT(n, 0);
  Bytes out(buf, buf + std::max(n, 0));
  OPENSSL_free(buf);
  return out;
}

SecretBytes i2d_pkcs8(EVP_PKEY* key) {
  PKCS8_PRIV_KEY_INFO* p8 = EVP_PKEY2PKCS8(key);
  unsigned char* buf = nullptr;
  const int n = i2d_PKCS8_PRIV_KEY_INFO(p8, &buf);
  EXPECT_GT(n, 0);
  SecretBytes out(buf, buf + std::max(n, 0));
  OPENSSL_clear_free(buf, static_cast<std::size_t>(std::max(n, 0)));
  PKCS8_PRIV_KEY_INFO_free(p8);
  return out;
}

std::string pem_private(EVP_PKEY* key) {
  BIO* b = BIO_new(BIO_s_mem());
  EXPECT_EQ(PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr), 1);
  char* text = nullptr;
  const long n = BIO_get_mem_data(b, &text);
  std::string out(text, static_cast<std::size_t>(n));
  BIO_free(b);
  return out;
}

Pkey read_private(ByteView der) {
  const unsigned char* p = der.data();
  return Pkey(d2i_AutoPrivateKey(nullptr, &p, static_cast<long>(der.size())), EVP_PKEY_free);
}

Pkey read_public(ByteView der) {
  const unsigned char* p = der.data();
  return Pkey(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())), EVP_PKEY_free);
}

Bytes raw(const EVP_PKEY* key, bool priv) {
  Bytes out(32);
  std::size_t n = out.size();
  const int rc = priv ? EVP_PKEY_get_raw_private_key(key, out.data(), &n)
                      : EVP_PKEY_get_raw_public_key(key, out.data(), &n);
  EXPECT_EQ(rc, 1);
  out.resize(n);
  return out;
}

std::string oid_text(const ASN1_OBJECT* obj) {
  char buf[128];
  const int n = OBJ_obj2txt(buf, sizeof buf, obj, 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

template <class F>
void expect_error(ErrorCode code, F&& f, const std::string& note) {
  try {
    f();
    ADD_FAILURE() << "no error: " << note;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << note << ": " << e.what();
  }
}

// ---- Ed25519 (RFC 8410) ---------------------------------------------------------------------

const test::OpensslEd25519 kEd25519;

TEST(KeyFileEd25519, OpensslFilesDecode) {
  for (int i = 0; i < 5; ++i) {
    Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"), EVP_PKEY_free);
    ASSERT_TRUE(key);
    const DecodedPublicKey pub = decode_public_key(i2d_public(key.get()), &kEd25519);
    EXPECT_EQ(pub.alg, &kEd25519);
    EXPECT_EQ(pub.public_key, raw(key.get(), false));
    const SecretBytes p8 = i2d_pkcs8(key.get());
    for (const std::string& in : {std::string(p8.begin(), p8.end()), pem_private(key.get())}) {
      const DecodedPrivateKey priv = decode_private_key(as_bytes(in), &kEd25519);
      EXPECT_EQ(bytes(priv.private_material), raw(key.get(), true));
      EXPECT_EQ(priv.keys.public_key, raw(key.get(), false));
    }
  }
}

TEST(KeyFileEd25519, OpensslReadsOurs) {
  SecretBytes seed(32);
  random_secret_bytes(seed);
  const auto kp = kEd25519.keygen(seed);
  const Pkey pub = read_public(encode_public_key_der(kEd25519, kp.public_key));
  ASSERT_TRUE(pub);
  EXPECT_EQ(EVP_PKEY_get_base_id(pub.get()), EVP_PKEY_ED25519);
  EXPECT_EQ(raw(pub.get(), false), kp.public_key);
  const Pkey priv = read_private(encode_private_key_der(kEd25519, seed));
  ASSERT_TRUE(priv);
  EXPECT_EQ(raw(priv.get(), true), bytes(seed));

  const SecretString pem = encode_private_key_pem(kEd25519, seed);
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  const Pkey from_pem(PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr), EVP_PKEY_free);
  BIO_free(b);
  ASSERT_TRUE(from_pem);
  EXPECT_EQ(raw(from_pem.get(), true), bytes(seed));
}

// RFC 8410 section 10.1 and 10.3 examples.
TEST(KeyFileEd25519, Rfc8410Examples) {
  const std::string pub_pem =
      "-----BEGIN PUBLIC KEY-----\n"
      "MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n"
      "-----END PUBLIC KEY-----\n";
  const std::string priv_pem =
      "-----BEGIN PRIVATE KEY-----\n"
      "MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n"
      "-----END PRIVATE KEY-----\n";
  const DecodedPublicKey pub = decode_public_key(as_bytes(pub_pem), &kEd25519);
  EXPECT_EQ(to_hex(pub.public_key),
            "19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1");
  const DecodedPrivateKey priv = decode_private_key(as_bytes(priv_pem), &kEd25519);
  EXPECT_EQ(to_hex(priv.private_material),
            "d4ee72dbf913584ad5b6d8f1f769f8ad3afe7c28cbf1d4fbe097a88f44755842");
  EXPECT_EQ(encode_public_key_pem(kEd25519, pub.public_key), pub_pem);
  EXPECT_EQ(std::string(encode_private_key_pem(kEd25519, priv.private_material)), priv_pem);
}

TEST(KeyFileEd25519, WrongInnerSizesAndFormsAreRefused) {
  const Bytes alg = from_hex("300506032b6570");
  const auto pk = [&](std::size_t n) {
    // 30 len || alg || 03 (n + 1) 00 || n bytes
    Bytes out;
    out.reserve(2 + alg.size() + 3 + n);
    out.push_back(0x30);
    out.push_back(static_cast<std::uint8_t>(alg.size() + 3 + n));
    out.insert(out.end(), alg.begin(), alg.end());
    out.push_back(0x03);
    out.push_back(static_cast<std::uint8_t>(n + 1));
    out.push_back(0x00);
    out.resize(out.size() + n, 0x11);
    return out;
  };
  ASSERT_NO_THROW(decode_public_key(pk(32), &kEd25519));
  expect_error(
      ErrorCode::invalid_key, [&] { decode_public_key(pk(31), &kEd25519); }, "pk 31");
  expect_error(
      ErrorCode::invalid_key, [&] { decode_public_key(pk(33), &kEd25519); }, "pk 33");
  const auto priv = [&](const std::string& inner_hex) {
    return from_hex("30" + to_hex(Bytes{static_cast<std::uint8_t>(12 + inner_hex.size() / 2)}) +
                    "020100300506032b657004" +
                    to_hex(Bytes{static_cast<std::uint8_t>(inner_hex.size() / 2)}) + inner_hex);
  };
  const std::string seed(64, 'a');
  ASSERT_NO_THROW(decode_private_key(priv("0420" + seed), &kEd25519));
  expect_error(
      ErrorCode::invalid_key, [&] { decode_private_key(priv("041f" + seed.substr(2)), &kEd25519); },
      "seed 31");
  expect_error(
      ErrorCode::invalid_encoding, [&] { decode_private_key(priv(seed), &kEd25519); },
      "seed not wrapped in CurvePrivateKey");
  expect_error(
      ErrorCode::invalid_encoding,
      [&] { decode_private_key(priv("0420" + seed + "00"), &kEd25519); },
      "byte after CurvePrivateKey");
}

TEST(KeyFileEd25519, RegistryDecodesTheSameFiles) {
  const Signature* real = &signature_by_name("Ed25519");
  Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"), EVP_PKEY_free);
  const DecodedPrivateKey priv = decode_private_key(i2d_pkcs8(key.get()));
  EXPECT_EQ(priv.alg, real);
  EXPECT_EQ(priv.keys.public_key, raw(key.get(), false));
  EXPECT_EQ(decode_public_key(i2d_public(key.get())).alg, real);
}

// ---- ML-DSA-65+Ed25519 (composite draft) ----------------------------------------------------

const test::CompositeKeys kComposite;

TEST(KeyFileComposite, LayoutAndOpensslStructure) {
  SecretBytes seed(64);
  random_secret_bytes(seed);
  const auto kp = kComposite.keygen(seed);
  const Bytes der = encode_public_key_der(kComposite, kp.public_key);
  // SEQUENCE (2001) { SEQUENCE { OID 1.3.6.1.5.5.7.6.48 }, BIT STRING (1985) { 00 || pk } }
  EXPECT_EQ(to_hex(ByteView(der).first(21)), "308207d1300a06082b06010505070630038207c100");
  const unsigned char* p = der.data();
  X509_PUBKEY* pub = d2i_X509_PUBKEY(nullptr, &p, static_cast<long>(der.size()));
  ASSERT_NE(pub, nullptr);
  ASN1_OBJECT* obj = nullptr;
  const unsigned char* key = nullptr;
  int len = 0;
  ASSERT_EQ(X509_PUBKEY_get0_param(&obj, &key, &len, nullptr, pub), 1);
  EXPECT_EQ(oid_text(obj), "1.3.6.1.5.5.7.6.48");
  const Bytes payload(key, key + len);
  X509_PUBKEY_free(pub);
  ASSERT_EQ(payload.size(), 1952u + 32u);
  EXPECT_EQ(Bytes(payload.begin(), payload.begin() + 1952),
            signature_by_name("ML-DSA-65").keygen(ByteView(seed).first(32)).public_key);
  Pkey ed(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data() + 32, 32),
          EVP_PKEY_free);
  EXPECT_EQ(Bytes(payload.begin() + 1952, payload.end()), raw(ed.get(), false));

  const SecretBytes priv = encode_private_key_der(kComposite, seed);
  // SEQUENCE (81) { INTEGER 0, SEQUENCE { OID }, OCTET STRING (64) { xi || Ed25519 seed } }
  EXPECT_EQ(to_hex(ByteView(priv).first(19)),
            "3051020100300a06082b0601050507063004"
            "40");
  p = priv.data();
  PKCS8_PRIV_KEY_INFO* p8 = d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(priv.size()));
  ASSERT_NE(p8, nullptr);
  const ASN1_OBJECT* pobj = nullptr;
  ASSERT_EQ(PKCS8_pkey_get0(&pobj, &key, &len, nullptr, p8), 1);
  EXPECT_EQ(oid_text(pobj), "1.3.6.1.5.5.7.6.48");
  EXPECT_EQ(Bytes(key, key + len), bytes(seed));
  PKCS8_PRIV_KEY_INFO_free(p8);
}

TEST(KeyFileComposite, RoundTripAndWrongSizes) {
  SecretBytes seed(64);
  random_secret_bytes(seed);
  const auto kp = kComposite.keygen(seed);
  const std::string pub_pem = encode_public_key_pem(kComposite, kp.public_key);
  EXPECT_EQ(decode_public_key(as_bytes(pub_pem), &kComposite).public_key, kp.public_key);
  const SecretBytes priv = encode_private_key_der(kComposite, seed);
  const DecodedPrivateKey d = decode_private_key(priv, &kComposite);
  EXPECT_EQ(d.keys.public_key, kp.public_key);
  EXPECT_TRUE(d.private_material == seed);

  Bytes short_priv = bytes(priv);  // 30 51 ... 04 40 || 64 -> 30 50 ... 04 3f || 63
  short_priv[1] = 0x50;
  short_priv[18] = 0x3f;
  short_priv.pop_back();
  expect_error(
      ErrorCode::invalid_key, [&] { decode_private_key(short_priv, &kComposite); },
      "63-byte composite seed");
  expect_error(
      ErrorCode::invalid_length,
      [&] { encode_private_key_der(kComposite, ByteView(seed).first(32)); }, "32-byte material");
  expect_error(
      ErrorCode::invalid_key, [&] { decode_private_key(priv, &signature_by_name("ML-DSA-65")); },
      "composite file read as ML-DSA-65");
}

TEST(KeyFileComposite, RegistryDecodesTheSameFiles) {
  const Signature* real = &signature_by_name("ML-DSA-65+Ed25519");
  SecretBytes seed(64);
  random_secret_bytes(seed);
  const DecodedPrivateKey d = decode_private_key(encode_private_key_der(*real, seed));
  EXPECT_EQ(d.alg, real);
  EXPECT_EQ(d.keys.public_key, kComposite.keygen(seed).public_key);
  // The file holds the seed; the in-memory secret key is ML-DSA's expanded form || Ed25519 seed.
  EXPECT_TRUE(d.private_material == seed);
  EXPECT_TRUE(d.keys.secret_key == real->keygen(seed).secret_key);
}

// ---- RSA (rsaEncryption) --------------------------------------------------------------------

EVP_PKEY* rsa_2048() {
  static Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{2048}), EVP_PKEY_free);
  return key.get();
}

const test::RsaName kRsaPkcs1("RSA-2048-PKCS1", 2048);
const test::RsaName kRsaPss("RSA-2048-PSS", 2048);
const test::RsaName kRsa3072("RSA-3072-PKCS1", 3072);

TEST(KeyFileRsa, IdentityOnDerWithExpectedSuite) {
  const Bytes spki = i2d_public(rsa_2048());
  const SecretBytes p8 = i2d_pkcs8(rsa_2048());
  for (const Signature* alg : std::initializer_list<const Signature*>{&kRsaPkcs1, &kRsaPss}) {
    const DecodedPublicKey pub = decode_public_key(spki, alg);
    EXPECT_EQ(pub.alg, alg);
    EXPECT_EQ(pub.public_key, spki);
    EXPECT_EQ(encode_public_key_der(*alg, spki), spki);
    const DecodedPrivateKey priv = decode_private_key(p8, alg);
    EXPECT_EQ(priv.alg, alg);
    EXPECT_EQ(priv.keys.public_key, spki);
    EXPECT_TRUE(priv.keys.secret_key == p8);
    EXPECT_TRUE(encode_private_key_der(*alg, p8) == p8);
  }
  const std::string pem = encode_public_key_pem(kRsaPkcs1, spki);
  EXPECT_EQ(decode_public_key(as_bytes(pem), &kRsaPkcs1).public_key, spki);
  expect_error(
      ErrorCode::invalid_argument, [&] { encode_public_key_der(kRsaPkcs1, as_bytes(pem)); },
      "PEM where the RSA key (DER) belongs");
  expect_error(
      ErrorCode::invalid_key, [&] { decode_public_key(spki, &kRsa3072); }, "3072");
  expect_error(
      ErrorCode::invalid_key, [&] { decode_private_key(p8, &kRsa3072); }, "3072");
  expect_error(
      ErrorCode::invalid_key, [&] { decode_public_key(spki, &signature_by_name("ML-DSA-65")); },
      "as ML-DSA");
}

TEST(KeyFileRsa, PemBothWays) {
  const std::string ours = std::string(encode_private_key_pem(kRsaPkcs1, i2d_pkcs8(rsa_2048())));
  EXPECT_EQ(ours, pem_private(rsa_2048())) << "the same armour as OpenSSL's";
  BIO* b = BIO_new_mem_buf(ours.data(), static_cast<int>(ours.size()));
  const Pkey back(PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr), EVP_PKEY_free);
  BIO_free(b);
  ASSERT_TRUE(back);
  EXPECT_EQ(EVP_PKEY_eq(back.get(), rsa_2048()), 1);
  EXPECT_EQ(decode_private_key(as_bytes(ours), &kRsaPkcs1).keys.public_key, i2d_public(rsa_2048()));
}

TEST(KeyFileRsa, MalformedRsaFilesAreRefused) {
  const Bytes spki = i2d_public(rsa_2048());
  // 30 82 01 22 | 30 0d 06 09 <rsaEncryption> 05 00 | 03 82 01 0f 00 ...
  ASSERT_EQ(to_hex(ByteView(spki).first(19)), "30820122300d06092a864886f70d0101010500");
  Bytes no_null = {0x30, 0x82, 0x01, 0x20, 0x30, 0x0b};
  no_null.insert(no_null.end(), spki.begin() + 6, spki.begin() + 17);
  no_null.insert(no_null.end(), spki.begin() + 19, spki.end());
  expect_error(
      ErrorCode::invalid_encoding, [&] { decode_public_key(no_null, &kRsaPkcs1); },
      "rsaEncryption without NULL parameters");
  Bytes garbage_key = spki;
  garbage_key[24] ^= 0xff;  // the RSAPublicKey SEQUENCE tag inside the BIT STRING
  expect_error(
      ErrorCode::invalid_key, [&] { decode_public_key(garbage_key, &kRsaPkcs1); },
      "BIT STRING is not an RSAPublicKey");
  Bytes trailing = spki;
  trailing.push_back(0);
  expect_error(
      ErrorCode::invalid_encoding, [&] { decode_public_key(trailing, &kRsaPkcs1); },
      "trailing byte");
  SecretBytes p8 = i2d_pkcs8(rsa_2048());
  p8[p8.size() - 10] ^= 0x01;  // inside qInv: the CRT values no longer fit
  expect_error(
      ErrorCode::invalid_key, [&] { decode_private_key(p8, &kRsaPkcs1); },
      "inconsistent private key");
}

TEST(KeyFileRsa, RegistryPicksPkcs1OfTheModulusSize) {
  const Signature* real = &signature_by_name("RSA-2048-PKCS1");
  EXPECT_EQ(decode_public_key(i2d_public(rsa_2048())).alg, real);
  EXPECT_EQ(decode_private_key(i2d_pkcs8(rsa_2048())).alg, real);
}

}  // namespace
}  // namespace pqot::crypto
