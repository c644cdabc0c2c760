// Key files: the ASN.1 structures of RFC 5280 section 4.1 (SubjectPublicKeyInfo) and RFC 5208 /
// RFC 5958 (PrivateKeyInfo, version 0) around each scheme's key, layouts in docs/crypto.md.
#include "pqot/crypto/key_file.hpp"

#include <array>
#include <cstdint>
#include <string>

#include "der.hpp"
#include "key_file_rsa.hpp"
#include "pqot/crypto/pem.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {

namespace {

enum class Form { ml_dsa, ed25519, composite, rsa };

struct Format {
  std::string_view name;  // the Signature's name; "RSA" stands for every "RSA-..." suite
  ByteView oid;           // contents octets of the OBJECT IDENTIFIER
  Form form;
};

// RFC 9881, "Algorithm Identifiers" (NIST CSOR sigAlgs): id-ml-dsa-44/65/87
// = 2.16.840.1.101.3.4.3.17/18/19.
constexpr std::uint8_t kOidMlDsa44[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11};
constexpr std::uint8_t kOidMlDsa65[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12};
constexpr std::uint8_t kOidMlDsa87[] = {0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13};
// RFC 8410 section 3: id-Ed25519 = 1.3.101.112.
constexpr std::uint8_t kOidEd25519[] = {0x2b, 0x65, 0x70};
// draft-ietf-lamps-pq-composite-sigs: id-MLDSA65-Ed25519-SHA512 = 1.3.6.1.5.5.7.6.48.
constexpr std::uint8_t kOidMlDsa65Ed25519[] = {0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x06, 0x30};
// RFC 8017 Appendix C: rsaEncryption = 1.2.840.113549.1.1.1.
constexpr std::uint8_t kOidRsa[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};

const std::array<Format, 6> kFormats = {{
    {"ML-DSA-44", kOidMlDsa44, Form::ml_dsa},
    {"ML-DSA-65", kOidMlDsa65, Form::ml_dsa},
    {"ML-DSA-87", kOidMlDsa87, Form::ml_dsa},
    {"Ed25519", kOidEd25519, Form::ed25519},
    {"ML-DSA-65+Ed25519", kOidMlDsa65Ed25519, Form::composite},
    {"RSA", kOidRsa, Form::rsa},
}};

constexpr std::string_view kPublicLabel = "PUBLIC KEY";    // RFC 7468 section 13
constexpr std::string_view kPrivateLabel = "PRIVATE KEY";  // RFC 7468 section 10

[[noreturn]] void fail(ErrorCode code, const std::string& why) {
  throw Error(code, why);
}

bool is_rsa_name(std::string_view name) {
  return name.starts_with("RSA-");
}

const Format& format_of(const Signature& alg) {
  for (const Format& f : kFormats) {
    if (f.form == Form::rsa ? is_rsa_name(alg.name()) : alg.name() == f.name) return f;
  }
  fail(ErrorCode::unknown_algorithm,
       "no key file format for signature algorithm '" + std::string(alg.name()) + "'");
}

const Format& format_of_oid(ByteView oid) {
  for (const Format& f : kFormats) {
    if (std::equal(oid.begin(), oid.end(), f.oid.begin(), f.oid.end())) return f;
  }
  fail(ErrorCode::invalid_encoding, "key file: unknown algorithm OID " + der::oid_to_text(oid));
}

// The Signature for a file's algorithm: `expected` if given and matching, else the registry's
// (rsaEncryption: the PKCS#1 v1.5 suite of the modulus size; one RSA key serves every suite).
const Signature& resolve(const Format& f, const Signature* expected, std::size_t rsa_bits) {
  const std::string found =
      f.form == Form::rsa ? "RSA-" + std::to_string(rsa_bits) : std::string(f.name);
  if (expected != nullptr) {
    if (&format_of(*expected) != &f ||
        (f.form == Form::rsa && expected->signature_size() * 8 != rsa_bits)) {
      fail(ErrorCode::invalid_key,
           "key file holds a " + found + " key, expected " + std::string(expected->name()));
    }
    return *expected;
  }
  return signature_by_name(f.form == Form::rsa ? found + "-PKCS1" : found);
}

// AlgorithmIdentifier (RFC 5280 section 4.1.1.2). Parameters: absent for ML-DSA (RFC 9881,
// "Algorithm Identifiers"), Ed25519 (RFC 8410 section 3) and the composite (draft); NULL for
// rsaEncryption (RFC 8017 Appendix C).
const Format& read_algorithm(der::Reader& outer) {
  der::Reader alg(outer.read(der::kSequence, "AlgorithmIdentifier"), "AlgorithmIdentifier");
  const Format& f = format_of_oid(alg.read(der::kOid, "algorithm"));
  if (f.form == Form::rsa && !alg.read(der::kNull, "rsaEncryption parameters (NULL)").empty()) {
    fail(ErrorCode::invalid_encoding, "malformed AlgorithmIdentifier: NULL with contents");
  }
  alg.expect_end(f.form == Form::rsa ? "the NULL parameters"
                                     : "the OID (the parameters must be absent)");
  return f;
}

template <class Vec>
void append_algorithm(Vec& out, const Format& f) {
  Bytes alg;
  der::append(alg, der::kOid, f.oid);
  der::append(out, der::kSequence, alg);
}

// The DER of a key file: PEM is unwrapped into `storage`, which wipes itself.
ByteView unarmour(ByteView input, std::string_view label, SecretBytes& storage) {
  if (input.size() > kMaxKeyFileSize) {
    fail(ErrorCode::invalid_encoding,
         "key file larger than " + std::to_string(kMaxKeyFileSize) + " bytes");
  }
  if (!pem::looks_like_pem(input)) return input;
  storage = pem::decode(input, label);
  return storage;
}

// The single outer SEQUENCE of a file, nothing after it.
ByteView outer_sequence(ByteView der, const char* what) {
  der::Reader file(der, "key file");
  const ByteView body = file.read(der::kSequence, what);
  file.expect_end(what);
  return body;
}

// ML-DSA-PrivateKey (RFC 9881, "Private Key Format"): CHOICE { seed [0] IMPLICIT OCTET STRING (SIZE
// (32)), expandedKey OCTET STRING, both SEQUENCE { seed OCTET STRING, expandedKey OCTET STRING } }.
struct MlDsaPrivateKey {
  ByteView seed;
  bool has_expanded = false;
  ByteView expanded;
};

MlDsaPrivateKey read_ml_dsa_private_key(ByteView octets) {
  der::Reader r(octets, "ML-DSA-PrivateKey", true);
  MlDsaPrivateKey key;
  if (r.next_is(der::kOctetString)) {
    fail(ErrorCode::invalid_key,
         "ML-DSA private key holds only the expanded key: pqot needs the 32-byte seed "
         "(RFC 9881 seed or both form)");
  }
  if (r.next_is(der::kSequence)) {
    der::Reader both(r.read(der::kSequence, "both"), "ML-DSA-PrivateKey (both)", true);
    key.seed = both.read(der::kOctetString, "seed");
    key.expanded = both.read(der::kOctetString, "expandedKey");
    key.has_expanded = true;
    both.expect_end("expandedKey");
  } else {
    key.seed = r.read(der::kContext0, "seed [0]");
  }
  r.expect_end("ML-DSA-PrivateKey");
  return key;
}

void check_seed_size(const Signature& alg, ByteView seed) {
  if (seed.size() != alg.seed_size()) {
    // The length found is not quoted: it was read inside a private key.
    fail(ErrorCode::invalid_key, std::string(alg.name()) + " private key: the seed must be " +
                                     std::to_string(alg.seed_size()) + " bytes");
  }
}

// An RSA Signature's keys are DER; the encoders return them unchanged, so PEM is not a key here.
void refuse_pem(ByteView key, const Signature& alg) {
  if (pem::looks_like_pem(key)) {
    fail(ErrorCode::invalid_argument,
         std::string(alg.name()) + " keys are DER (SubjectPublicKeyInfo / PKCS#8), not PEM");
  }
}

}  // namespace

Bytes encode_public_key_der(const Signature& alg, ByteView public_key) {
  const Format& f = format_of(alg);
  if (f.form == Form::rsa) {
    refuse_pem(public_key, alg);
    return decode_public_key(public_key, &alg).public_key;
  }
  if (public_key.size() != alg.public_key_size()) {
    fail(ErrorCode::invalid_length, std::string(alg.name()) + " public key must be " +
                                        std::to_string(alg.public_key_size()) + " bytes, got " +
                                        std::to_string(public_key.size()));
  }
  // SubjectPublicKeyInfo: the raw key in a BIT STRING with 0 unused bits (X.690 8.6.2).
  Bytes bits = {0x00};
  bits.insert(bits.end(), public_key.begin(), public_key.end());
  Bytes body;
  append_algorithm(body, f);
  der::append(body, der::kBitString, bits);
  Bytes out;
  der::append(out, der::kSequence, body);
  return out;
}

std::string encode_public_key_pem(const Signature& alg, ByteView public_key) {
  return pem::encode<std::string>(kPublicLabel, encode_public_key_der(alg, public_key));
}

SecretBytes encode_private_key_der(const Signature& alg, ByteView private_material) {
  const Format& f = format_of(alg);
  if (f.form == Form::rsa) {
    refuse_pem(private_material, alg);
    return decode_private_key(private_material, &alg).private_material;
  }
  if (private_material.size() != alg.seed_size()) {
    fail(ErrorCode::invalid_length, std::string(alg.name()) + " private key material is the " +
                                        std::to_string(alg.seed_size()) + "-byte seed, got " +
                                        std::to_string(private_material.size()) + " bytes");
  }
  SecretBytes inner;
  switch (f.form) {
    case Form::ml_dsa:  // RFC 9881, "Private Key Format": seed [0] IMPLICIT OCTET STRING
      der::append(inner, der::kContext0, private_material);
      break;
    case Form::ed25519:  // RFC 8410 section 7: CurvePrivateKey ::= OCTET STRING
      der::append(inner, der::kOctetString, private_material);
      break;
    default:  // composite draft: mldsaSeed || tradSK, raw
      inner.assign(private_material.begin(), private_material.end());
  }
  // PrivateKeyInfo (RFC 5208 section 5): version 0, algorithm, privateKey OCTET STRING.
  SecretBytes body;
  const std::uint8_t version = 0;
  der::append(body, der::kInteger, ByteView(&version, 1));
  append_algorithm(body, f);
  der::append(body, der::kOctetString, inner);
  SecretBytes out;
  der::append(out, der::kSequence, body);
  return out;
}

SecretString encode_private_key_pem(const Signature& alg, ByteView private_material) {
  return pem::encode<SecretString>(kPrivateLabel, encode_private_key_der(alg, private_material));
}

DecodedPublicKey decode_public_key(ByteView der_or_pem, const Signature* expected) {
  SecretBytes storage;
  const ByteView der = unarmour(der_or_pem, kPublicLabel, storage);
  der::Reader spki(outer_sequence(der, "SubjectPublicKeyInfo"), "SubjectPublicKeyInfo");
  const Format& f = read_algorithm(spki);
  const ByteView bits = spki.read(der::kBitString, "subjectPublicKey");
  spki.expect_end("subjectPublicKey");
  if (bits.empty() || bits[0] != 0) {
    fail(ErrorCode::invalid_encoding,
         "malformed SubjectPublicKeyInfo: the BIT STRING must have 0 unused bits");
  }
  DecodedPublicKey out;
  if (f.form == Form::rsa) {
    out.alg = &resolve(f, expected, rsa_key_file::public_key_bits(der));
    out.alg->check_public_key(der);  // the suite's own rules (exponent, odd modulus, ...)
    out.public_key.assign(der.begin(), der.end());
    return out;
  }
  const ByteView key = bits.subspan(1);
  out.alg = &resolve(f, expected, 0);
  if (key.size() != out.alg->public_key_size()) {
    fail(ErrorCode::invalid_key, std::string(out.alg->name()) + " public key must be " +
                                     std::to_string(out.alg->public_key_size()) + " bytes, got " +
                                     std::to_string(key.size()));
  }
  out.alg->check_public_key(key);
  out.public_key.assign(key.begin(), key.end());
  return out;
}

DecodedPrivateKey decode_private_key(ByteView der_or_pem, const Signature* expected) {
  SecretBytes storage;
  const ByteView der = unarmour(der_or_pem, kPrivateLabel, storage);
  der::Reader info(outer_sequence(der, "PrivateKeyInfo"), "PrivateKeyInfo");
  const ByteView version = info.read(der::kInteger, "version");
  if (version.size() != 1 || version[0] != 0) {
    fail(ErrorCode::invalid_encoding,
         "malformed PrivateKeyInfo: version must be 0 (v1; OneAsymmetricKey v2 is not read)");
  }
  const Format& f = read_algorithm(info);
  const ByteView octets = info.read(der::kOctetString, "privateKey");
  info.expect_end("privateKey (attributes and a public key are not read)");

  DecodedPrivateKey out;
  if (f.form == Form::rsa) {
    rsa_key_file::PrivateKeyInfo rsa = rsa_key_file::private_key_info(
        der, [&](std::size_t bits) { out.alg = &resolve(f, expected, bits); });
    out.alg->check_public_key(rsa.public_key);  // exponent and modulus rules of the suite
    out.keys.public_key = std::move(rsa.public_key);
    out.keys.secret_key.assign(der.begin(), der.end());
    out.private_material = out.keys.secret_key;
    return out;
  }
  out.alg = &resolve(f, expected, 0);
  ByteView seed = octets;  // composite: mldsaSeed || Ed25519 seed, raw
  MlDsaPrivateKey ml_dsa;
  if (f.form == Form::ml_dsa) {
    ml_dsa = read_ml_dsa_private_key(octets);
    seed = ml_dsa.seed;
  } else if (f.form == Form::ed25519) {
    der::Reader curve(octets, "CurvePrivateKey", true);
    seed = curve.read(der::kOctetString, "CurvePrivateKey");
    curve.expect_end("CurvePrivateKey");
  }
  check_seed_size(*out.alg, seed);
  out.keys = out.alg->keygen(seed);
  if (ml_dsa.has_expanded && !ct_equal(ml_dsa.expanded, out.keys.secret_key)) {
    fail(ErrorCode::invalid_key,
         "ML-DSA private key: the expanded key is not the one its seed generates");
  }
  out.private_material.assign(seed.begin(), seed.end());
  return out;
}

}  // namespace pqot::crypto
