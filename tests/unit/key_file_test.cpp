// Key files (docs/crypto.md, "Key files"): ML-DSA SubjectPublicKeyInfo and PKCS#8 (RFC 9881) byte
// for byte, read back by OpenSSL's generic ASN.1 parsers, round trips in DER and PEM, and every
// refusal of the decoders. Ed25519, the composite and RSA: key_file_interop_test.cpp.
#include "pqot/crypto/key_file.hpp"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string>

#include "key_file_doubles.hpp"
#include "../support/der_builder.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/mldsa.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::crypto {
namespace {

using ::pqot::test::cat;
using ::pqot::test::tlv;

Bytes bytes(ByteView v) {
  return Bytes(v.begin(), v.end());
}

const Bytes kOid44 = from_hex("608648016503040311");
const Bytes kOid65 = from_hex("608648016503040312");
const Bytes kVersion0 = from_hex("020100");

// RFC 9881: id-ml-dsa-44/65/87 = 2.16.840.1.101.3.4.3.17/18/19.
Bytes ml_dsa_oid(std::string_view name) {
  return from_hex(name == "ML-DSA-44"   ? "608648016503040311"
                  : name == "ML-DSA-65" ? "608648016503040312"
                                        : "608648016503040313");
}

Bytes alg_id(const Bytes& oid) {
  return tlv(0x30, tlv(0x06, oid));
}
Bytes spki(const Bytes& oid, const Bytes& pk) {
  return tlv(0x30, cat({alg_id(oid), tlv(0x03, cat({{0x00}, pk}))}));
}
Bytes pkcs8(const Bytes& oid, const Bytes& inner) {
  return tlv(0x30, cat({kVersion0, alg_id(oid), tlv(0x04, inner)}));
}

template <class F>
void expect_error(ErrorCode code, F&& f, const std::string& note = "") {
  try {
    f();
    ADD_FAILURE() << "no error: " << note;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << note << ": " << e.what();
  }
}

void expect_public_refused(ErrorCode code, const Bytes& der, const std::string& note) {
  expect_error(
      code, [&] { decode_public_key(der); }, note);
}
void expect_private_refused(ErrorCode code, const Bytes& der, const std::string& note) {
  expect_error(
      code, [&] { decode_private_key(der); }, note);
}

std::string oid_text(const ASN1_OBJECT* obj) {
  char buf[128];
  const int n = OBJ_obj2txt(buf, sizeof buf, obj, 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

class KeyFileMlDsa : public ::testing::TestWithParam<std::string_view> {
 protected:
  const Signature& alg = signature_by_name(GetParam());
  const std::string oid_text_expected = GetParam() == "ML-DSA-44"   ? "2.16.840.1.101.3.4.3.17"
                                        : GetParam() == "ML-DSA-65" ? "2.16.840.1.101.3.4.3.18"
                                                                    : "2.16.840.1.101.3.4.3.19";
};

INSTANTIATE_TEST_SUITE_P(KeyFile, KeyFileMlDsa,
                         ::testing::Values("ML-DSA-44", "ML-DSA-65", "ML-DSA-87"),
                         [](const auto& info) {
                           std::string n(info.param);
                           return n.substr(n.size() - 2);
                         });

// RFC 9881: SPKI = SEQUENCE { SEQUENCE { OID }, BIT STRING { 00 || pk } }, parameters absent;
// PKCS#8 v0 with privateKey = OCTET STRING { 80 20 || xi } (the seed form).
TEST_P(KeyFileMlDsa, LayoutIsByteExact) {
  SecretBytes xi(32);
  random_secret_bytes(xi);
  const auto kp = alg.keygen(xi);
  const Bytes oid = ml_dsa_oid(alg.name());
  EXPECT_EQ(encode_public_key_der(alg, kp.public_key), spki(oid, kp.public_key));
  const SecretBytes der = encode_private_key_der(alg, xi);
  EXPECT_EQ(bytes(der), pkcs8(oid, tlv(0x80, bytes(xi))));
  EXPECT_EQ(to_hex(ByteView(der).first(22)), "3034020100300b0609" + to_hex(oid) + "04228020");
}

TEST_P(KeyFileMlDsa, OpensslReadsTheStructure) {
  const auto kp = alg.keygen();
  const Bytes der = encode_public_key_der(alg, kp.public_key);
  const unsigned char* p = der.data();
  X509_PUBKEY* pub = d2i_X509_PUBKEY(nullptr, &p, static_cast<long>(der.size()));
  ASSERT_NE(pub, nullptr);
  EXPECT_EQ(p, der.data() + der.size());
  ASN1_OBJECT* obj = nullptr;
  const unsigned char* key = nullptr;
  int key_len = 0;
  X509_ALGOR* algor = nullptr;
  ASSERT_EQ(X509_PUBKEY_get0_param(&obj, &key, &key_len, &algor, pub), 1);
  EXPECT_EQ(oid_text(obj), oid_text_expected);
  EXPECT_EQ(Bytes(key, key + key_len), kp.public_key);
  int ptype = 0;
  X509_ALGOR_get0(nullptr, &ptype, nullptr, algor);
  EXPECT_EQ(ptype, V_ASN1_UNDEF) << "parameters must be absent";
  X509_PUBKEY_free(pub);

  SecretBytes xi(32);
  random_secret_bytes(xi);
  const SecretBytes priv = encode_private_key_der(alg, xi);
  p = priv.data();
  PKCS8_PRIV_KEY_INFO* p8 = d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(priv.size()));
  ASSERT_NE(p8, nullptr);
  const ASN1_OBJECT* pobj = nullptr;
  const X509_ALGOR* palg = nullptr;
  ASSERT_EQ(PKCS8_pkey_get0(&pobj, &key, &key_len, &palg, p8), 1);
  EXPECT_EQ(oid_text(pobj), oid_text_expected);
  EXPECT_EQ(Bytes(key, key + key_len), cat({{0x80, 0x20}, bytes(xi)}));
  PKCS8_PRIV_KEY_INFO_free(p8);
}

TEST_P(KeyFileMlDsa, RoundTripsInDerAndPem) {
  SecretBytes xi(32);
  random_secret_bytes(xi);
  const auto kp = alg.keygen(xi);
  const Bytes pub_der = encode_public_key_der(alg, kp.public_key);
  const std::string pub_pem = encode_public_key_pem(alg, kp.public_key);
  for (const ByteView in : {ByteView(pub_der), as_bytes(pub_pem)}) {
    const DecodedPublicKey d = decode_public_key(in);
    EXPECT_EQ(d.alg, &alg);
    EXPECT_EQ(d.public_key, kp.public_key);
  }
  const SecretBytes priv_der = encode_private_key_der(alg, xi);
  const SecretString priv_pem = encode_private_key_pem(alg, xi);
  for (const ByteView in : {ByteView(priv_der), as_bytes(priv_pem)}) {
    const DecodedPrivateKey d = decode_private_key(in, &alg);
    EXPECT_EQ(d.alg, &alg);
    EXPECT_EQ(d.keys.public_key, kp.public_key);
    EXPECT_TRUE(d.keys.secret_key == kp.secret_key);
    EXPECT_TRUE(d.private_material == xi);
    EXPECT_TRUE(encode_private_key_der(*d.alg, d.private_material) == priv_der);
  }
}

// The `both` form is read (the expanded key must be the seed's); expandedKey alone is refused.
TEST_P(KeyFileMlDsa, BothFormIsCheckedExpandedOnlyRefused) {
  SecretBytes xi(32);
  random_secret_bytes(xi);
  const auto kp = alg.keygen(xi);
  const Bytes oid = ml_dsa_oid(alg.name());
  Bytes expanded = bytes(kp.secret_key);
  const Bytes both = pkcs8(oid, tlv(0x30, cat({tlv(0x04, bytes(xi)), tlv(0x04, expanded)})));
  const DecodedPrivateKey d = decode_private_key(both);
  EXPECT_EQ(d.alg, &alg);
  EXPECT_TRUE(d.private_material == xi);
  EXPECT_EQ(d.keys.public_key, kp.public_key);

  expanded[100] ^= 1;
  expect_private_refused(ErrorCode::invalid_key,
                         pkcs8(oid, tlv(0x30, cat({tlv(0x04, bytes(xi)), tlv(0x04, expanded)}))),
                         "both form, expanded key not the seed's");
  expanded.pop_back();
  expect_private_refused(ErrorCode::invalid_key,
                         pkcs8(oid, tlv(0x30, cat({tlv(0x04, bytes(xi)), tlv(0x04, expanded)}))),
                         "both form, expanded key one byte short");
  expect_private_refused(ErrorCode::invalid_key, pkcs8(oid, tlv(0x04, bytes(kp.secret_key))),
                         "expandedKey only");
  expect_private_refused(
      ErrorCode::invalid_encoding,
      pkcs8(oid,
            tlv(0x30, cat({tlv(0x04, bytes(xi)), tlv(0x04, bytes(kp.secret_key)), tlv(0x05, {})}))),
      "both form with a third element");
}

TEST(KeyFile, TruncatedAndTrailingBytesAreRefused) {
  const Signature& alg = signature_by_name("ML-DSA-44");
  const auto kp = alg.keygen();
  const Bytes pub = encode_public_key_der(alg, kp.public_key);
  const SecretBytes priv = encode_private_key_der(alg, Bytes(32, 7));
  for (std::size_t n = 0; n < pub.size(); ++n) {
    expect_public_refused(ErrorCode::invalid_encoding, Bytes(pub.begin(), pub.begin() + n),
                          "public key truncated to " + std::to_string(n));
  }
  for (std::size_t n = 0; n < priv.size(); ++n) {
    expect_private_refused(ErrorCode::invalid_encoding, Bytes(priv.begin(), priv.begin() + n),
                           "private key truncated to " + std::to_string(n));
  }
  expect_public_refused(ErrorCode::invalid_encoding, cat({pub, {0x00}}), "trailing byte");
  expect_private_refused(ErrorCode::invalid_encoding, cat({bytes(priv), {0x30, 0x00}}),
                         "trailing SEQUENCE");
}

TEST(KeyFile, UnknownOidIsNamed) {
  const Bytes oid = from_hex("608648016503040314");  // 2.16.840.1.101.3.4.3.20: not ML-DSA
  try {
    decode_public_key(spki(oid, Bytes(1312, 1)));
    ADD_FAILURE() << "accepted an unknown OID";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_encoding);
    EXPECT_NE(std::string(e.what()).find("2.16.840.1.101.3.4.3.20"), std::string::npos) << e.what();
  }
  expect_private_refused(ErrorCode::invalid_encoding, pkcs8(oid, tlv(0x80, Bytes(32, 1))),
                         "unknown OID, private");
  expect_public_refused(ErrorCode::invalid_encoding, spki(from_hex("2b8080"), Bytes(32, 1)),
                        "malformed OID");
}

TEST(KeyFile, WrongInnerSizesAreInvalidKeys) {
  expect_public_refused(ErrorCode::invalid_key, spki(kOid44, Bytes(1311, 1)), "pk 1311 bytes");
  expect_public_refused(ErrorCode::invalid_key, spki(kOid44, Bytes(1313, 1)), "pk 1313 bytes");
  expect_public_refused(ErrorCode::invalid_key, spki(kOid44, Bytes{}), "empty pk");
  expect_private_refused(ErrorCode::invalid_key, pkcs8(kOid44, tlv(0x80, Bytes(31, 1))),
                         "seed 31 bytes");
  expect_private_refused(ErrorCode::invalid_key, pkcs8(kOid44, tlv(0x80, Bytes(33, 1))),
                         "seed 33 bytes");
  expect_private_refused(ErrorCode::invalid_encoding,
                         pkcs8(kOid44, cat({tlv(0x80, Bytes(32, 1)), {0x00}})),
                         "a byte after the seed inside the OCTET STRING");
  expect_private_refused(ErrorCode::invalid_encoding, pkcs8(kOid44, tlv(0x81, Bytes(32, 1))),
                         "seed with tag [1]");
}

// Errors about the inside of a private key name the field, never a byte or length read there.
TEST(KeyFile, ErrorsInsidePrivateKeysShowNoKeyBytes) {
  const auto message = [](const Bytes& der) -> std::string {
    try {
      decode_private_key(der);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_encoding);
      return e.what();
    }
    ADD_FAILURE() << "accepted";
    return "";
  };
  // A raw seed where ML-DSA-PrivateKey belongs: its first byte would be "the tag".
  const std::string wrong_tag = message(pkcs8(kOid44, Bytes(32, 0xab)));
  EXPECT_EQ(wrong_tag.find("ab"), std::string::npos) << wrong_tag;
  EXPECT_NE(wrong_tag.find("ML-DSA-PrivateKey"), std::string::npos) << wrong_tag;
  // A seed starting 80 9c: the second byte would be "the length" (156 bytes announced).
  Bytes seed(32, 0x11);
  seed[0] = 0x80;
  seed[1] = 0x9c;
  const std::string wrong_length = message(pkcs8(kOid44, seed));
  EXPECT_EQ(wrong_length.find("156"), std::string::npos) << wrong_length;
  EXPECT_EQ(wrong_length.find("30 present"), std::string::npos) << wrong_length;
  // A seed starting 80 0a: a 10-byte seed [0] and then 20 bytes that would be "trailing": their
  // count would reveal the second byte.
  seed[1] = 0x0a;
  const std::string trailing = message(pkcs8(kOid44, seed));
  EXPECT_EQ(trailing.find("20"), std::string::npos) << trailing;
  // A seed starting 80 1e: a 30-byte seed [0] and nothing after it; "got 30" would reveal it.
  seed[1] = 0x1e;
  const std::string short_seed = [&] {
    try {
      decode_private_key(pkcs8(kOid44, Bytes(seed.begin(), seed.begin() + 32)));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  }();
  EXPECT_EQ(short_seed.find("30"), std::string::npos) << short_seed;
  EXPECT_NE(short_seed.find("seed"), std::string::npos) << short_seed;
  // Public structures do say what they found.
  const std::string pub = [] {
    try {
      decode_public_key(tlv(0x30, tlv(0x31, {})));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_NE(pub.find("found 0x31"), std::string::npos) << pub;
}

TEST(KeyFile, NonMinimalAndIndefiniteLengthsAreRefused) {
  const Bytes priv = pkcs8(kOid44, tlv(0x80, Bytes(32, 1)));  // 30 34 ...
  ASSERT_NO_THROW(decode_private_key(priv));
  const Bytes body(priv.begin() + 2, priv.end());
  expect_private_refused(ErrorCode::invalid_encoding, cat({{0x30, 0x81, 0x34}, body}),
                         "long form for a length below 128");
  expect_private_refused(ErrorCode::invalid_encoding, cat({{0x30, 0x82, 0x00, 0x34}, body}),
                         "leading zero length octet");
  expect_private_refused(ErrorCode::invalid_encoding, cat({{0x30, 0x80}, body, {0x00, 0x00}}),
                         "indefinite length");
  expect_private_refused(ErrorCode::invalid_encoding,
                         cat({{0x30, 0x85, 0x00, 0x00, 0x00, 0x00, 0x34}, body}),
                         "five length octets");
  // A non-minimal length deep inside: the seed OCTET STRING.
  const Bytes inner = cat({{0x80, 0x81, 0x20}, Bytes(32, 1)});
  expect_private_refused(ErrorCode::invalid_encoding,
                         tlv(0x30, cat({kVersion0, alg_id(kOid44), tlv(0x04, inner)})),
                         "inner long form");
  // The same for a public key (long lengths everywhere): 30 82 -> 30 83 00.
  const Bytes pub = spki(kOid44, Bytes(1312, 1));
  ASSERT_EQ(pub[1], 0x82);
  expect_public_refused(ErrorCode::invalid_encoding,
                        cat({{0x30, 0x83, 0x00}, Bytes(pub.begin() + 2, pub.end())}),
                        "public: leading zero length octet");
}

TEST(KeyFile, BitStringWithUnusedBitsIsRefused) {
  Bytes pub = spki(kOid44, Bytes(1312, 0));
  const std::size_t unused_at = pub.size() - 1312 - 1;
  ASSERT_EQ(pub[unused_at], 0x00);
  pub[unused_at] = 0x01;
  expect_public_refused(ErrorCode::invalid_encoding, pub, "1 unused bit");
  expect_public_refused(ErrorCode::invalid_encoding,
                        tlv(0x30, cat({alg_id(kOid44), tlv(0x03, {})})), "empty BIT STRING");
  expect_public_refused(ErrorCode::invalid_encoding,
                        tlv(0x30, cat({alg_id(kOid44), tlv(0x04, cat({{0}, Bytes(1312, 0)}))})),
                        "OCTET STRING instead of BIT STRING");
}

TEST(KeyFile, VersionMustBeZero) {
  const Bytes inner = tlv(0x80, Bytes(32, 1));
  for (const Bytes& version : {from_hex("020101"), from_hex("020102"), from_hex("02020000"),
                               from_hex("0200"), from_hex("0a0100")}) {
    expect_private_refused(ErrorCode::invalid_encoding,
                           tlv(0x30, cat({version, alg_id(kOid44), tlv(0x04, inner)})),
                           "version " + to_hex(version));
  }
}

TEST(KeyFile, ParametersMustBeAbsent) {
  const Bytes alg_with_null = tlv(0x30, cat({tlv(0x06, kOid44), {0x05, 0x00}}));
  expect_public_refused(ErrorCode::invalid_encoding,
                        tlv(0x30, cat({alg_with_null, tlv(0x03, cat({{0}, Bytes(1312, 0)}))})),
                        "public key with NULL parameters");
  expect_private_refused(
      ErrorCode::invalid_encoding,
      tlv(0x30, cat({kVersion0, alg_with_null, tlv(0x04, tlv(0x80, Bytes(32, 1)))})),
      "private key with NULL parameters");
}

TEST(KeyFile, AttributesAndV2PublicKeyAreNotRead) {
  const Bytes base = cat({kVersion0, alg_id(kOid44), tlv(0x04, tlv(0x80, Bytes(32, 1)))});
  expect_private_refused(ErrorCode::invalid_encoding, tlv(0x30, cat({base, tlv(0xa0, {})})),
                         "attributes [0]");
  expect_private_refused(ErrorCode::invalid_encoding,
                         tlv(0x30, cat({base, tlv(0x81, Bytes(10, 0))})), "publicKey [1]");
}

TEST(KeyFile, ExpectedAlgorithmIsEnforced) {
  const Signature& a44 = signature_by_name("ML-DSA-44");
  const Signature& a65 = signature_by_name("ML-DSA-65");
  const auto kp = a44.keygen();
  const Bytes pub = encode_public_key_der(a44, kp.public_key);
  EXPECT_EQ(decode_public_key(pub, &a44).alg, &a44);
  expect_error(
      ErrorCode::invalid_key, [&] { decode_public_key(pub, &a65); }, "44 as 65");
  const SecretBytes priv = encode_private_key_der(a44, Bytes(32, 3));
  expect_error(
      ErrorCode::invalid_key, [&] { decode_private_key(priv, &a65); }, "44 as 65");
}

TEST(KeyFile, EncodersCheckTheirInputs) {
  const Signature& alg = signature_by_name("ML-DSA-65");
  expect_error(ErrorCode::invalid_length, [&] { encode_public_key_der(alg, Bytes(1951, 0)); });
  expect_error(ErrorCode::invalid_length, [&] { encode_private_key_der(alg, Bytes(31, 0)); });
  expect_error(ErrorCode::invalid_length, [&] { encode_private_key_pem(alg, Bytes(64, 0)); });
  const test::RsaName not_a_format("DSA-1024", 1024);
  expect_error(ErrorCode::unknown_algorithm,
               [&] { encode_public_key_der(not_a_format, Bytes(10, 0)); });
}

TEST(KeyFile, OversizedInputIsRefusedFirst) {
  expect_public_refused(ErrorCode::invalid_encoding, Bytes(kMaxKeyFileSize + 1, 0x30), "64 KiB+1");
}

}  // namespace
}  // namespace pqot::crypto
