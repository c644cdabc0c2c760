// Key files in PEM (RFC 7468): the armour we write is what OpenSSL's generic PEM reader reads,
// OpenSSL's armour is what we read, and the strict grammar's refusals.
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>

#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/key_file.hpp"

namespace pqot::crypto {
namespace {

const Signature& ml_dsa_44() {
  return signature_by_name("ML-DSA-44");
}

std::string pem_of_public() {
  return encode_public_key_pem(ml_dsa_44(), ml_dsa_44().keygen(Bytes(32, 9)).public_key);
}

void expect_refused(const std::string& text, const std::string& note) {
  try {
    decode_public_key(as_bytes(text));
    ADD_FAILURE() << "accepted: " << note;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_encoding) << note << ": " << e.what();
  }
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(KeyFilePem, ArmourIsRfc7468WithSixtyFourCharacterLines) {
  const std::string pem = pem_of_public();
  ASSERT_TRUE(pem.starts_with("-----BEGIN PUBLIC KEY-----\n"));
  ASSERT_TRUE(pem.ends_with("\n-----END PUBLIC KEY-----\n"));
  std::size_t pos = pem.find('\n') + 1;
  std::size_t lines = 0;
  std::size_t last = 0;
  for (std::size_t nl; (nl = pem.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    const std::string line = pem.substr(pos, nl - pos);
    if (line.starts_with("-----END")) break;
    if (last != 0) {
      EXPECT_EQ(last, 64u) << "only the last line may be shorter";
    }
    last = line.size();
    ++lines;
  }
  EXPECT_GT(lines, 20u);
  EXPECT_LE(last, 64u);
}

TEST(KeyFilePem, OpensslReadsOursAndWeReadOpenssls) {
  const Bytes pk = ml_dsa_44().keygen(Bytes(32, 9)).public_key;
  const Bytes der = encode_public_key_der(ml_dsa_44(), pk);
  const std::string pem = encode_public_key_pem(ml_dsa_44(), pk);

  BIO* in = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  char* name = nullptr;
  char* header = nullptr;
  unsigned char* data = nullptr;
  long len = 0;
  ASSERT_EQ(PEM_read_bio(in, &name, &header, &data, &len), 1);
  EXPECT_STREQ(name, "PUBLIC KEY");
  EXPECT_STREQ(header, "");
  EXPECT_EQ(Bytes(data, data + len), der);
  OPENSSL_free(name);
  OPENSSL_free(header);
  OPENSSL_free(data);
  BIO_free(in);

  BIO* out = BIO_new(BIO_s_mem());
  ASSERT_GT(PEM_write_bio(out, "PUBLIC KEY", "", der.data(), static_cast<long>(der.size())), 0);
  char* text = nullptr;
  const long n = BIO_get_mem_data(out, &text);
  const std::string theirs(text, static_cast<std::size_t>(n));
  BIO_free(out);
  EXPECT_EQ(theirs, pem) << "OpenSSL writes the same armour";
  EXPECT_EQ(decode_public_key(as_bytes(theirs)).public_key, pk);
}

TEST(KeyFilePem, LineEndsAndFinalNewlineAreTolerated) {
  const std::string pem = pem_of_public();
  std::string crlf;
  for (char c : pem) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const Bytes pk = decode_public_key(as_bytes(pem)).public_key;
  EXPECT_EQ(decode_public_key(as_bytes(crlf)).public_key, pk);
  EXPECT_EQ(decode_public_key(as_bytes(pem.substr(0, pem.size() - 1))).public_key, pk);
  EXPECT_EQ(decode_public_key(as_bytes(pem + "\n\n")).public_key, pk);
}

TEST(KeyFilePem, BadArmourIsRefused) {
  const std::string pem = pem_of_public();
  expect_refused(" " + pem, "space before BEGIN (then not PEM, and not DER either)");
  expect_refused("text\n" + pem, "explanatory text before BEGIN");
  expect_refused(pem + "more\n", "text after END");
  expect_refused(replace(pem, "-----END PUBLIC KEY-----", "-----END PRIVATE KEY-----"),
                 "END label differs");
  expect_refused(replace(pem, "-----END PUBLIC KEY-----\n", ""), "no END line");
  expect_refused(replace(pem, "-----BEGIN PUBLIC KEY-----", "-----BEGIN PUBLIC KEY----"),
                 "BEGIN line without its dashes");
  expect_refused(replace(pem, "PUBLIC KEY", "RSA PUBLIC KEY"), "other label");
  expect_refused("-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n", "empty body");

  const std::size_t body = pem.find('\n') + 1;
  std::string bad_char = pem;
  bad_char[body + 5] = '*';
  expect_refused(bad_char, "invalid base64 character");
  std::string long_line = pem;
  long_line.erase(body + 64, 1);  // join the first two lines
  expect_refused(long_line, "a 128-character line");
  std::string short_line = pem;
  short_line.insert(body + 32, 1, '\n');
  expect_refused(short_line, "a short line before the last");
  std::string blank = pem;
  blank.insert(body, 1, '\n');
  expect_refused(blank, "blank line inside the body");
}

TEST(KeyFilePem, NonCanonicalBase64IsRefused) {
  // A DER whose length is 1 mod 3 ends in "xx==": ML-DSA-44 SPKI is 1334 bytes (1334 % 3 == 2,
  // "xxx="). Flip a padding bit of the last significant character instead.
  const std::string pem = pem_of_public();
  const std::size_t eq = pem.find('=');
  ASSERT_NE(eq, std::string::npos);
  std::string bits = pem;
  const char c = bits[eq - 1];
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  bits[eq - 1] = alphabet[alphabet.find(c) ^ 1];  // one of the two pad bits of "xxx="
  expect_refused(bits, "non-zero padding bits");
  std::string no_pad = pem;
  no_pad.erase(eq, 1);
  expect_refused(no_pad, "padding missing");
  std::string early_pad = pem;
  early_pad[pem.find('\n') + 1 + 8] = '=';
  expect_refused(early_pad, "'=' inside the data");
}

TEST(KeyFilePem, LabelsAreNotInterchangeable) {
  const SecretString priv = encode_private_key_pem(ml_dsa_44(), Bytes(32, 1));
  ASSERT_TRUE(std::string_view(priv).starts_with("-----BEGIN PRIVATE KEY-----\n"));
  expect_refused(std::string(priv), "private key PEM read as public");
  try {
    decode_private_key(as_bytes(pem_of_public()));
    ADD_FAILURE() << "public PEM read as private";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_encoding);
  }
}

}  // namespace
}  // namespace pqot::crypto
