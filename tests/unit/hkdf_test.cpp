// HKDF-SHA-256 (RFC 5869): appendix A vectors and the output-length limits. Wycheproof vectors
// are in hkdf_wycheproof_test.cpp.
#include "../support/crypto_error.hpp"
#include "pqot/crypto/hkdf.hpp"

#include <gtest/gtest.h>

#include "pqot/crypto/error.hpp"

namespace pqot::crypto {
namespace {

using pqot::test::code_of;

// RFC 5869 appendix A.1 (test case 1).
// Function-local statics: a namespace-scope initialiser that throws could not be caught.
const Bytes& ikm() {
  static const Bytes b = from_hex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
  return b;
}
const Bytes& salt() {
  static const Bytes b = from_hex("000102030405060708090a0b0c");
  return b;
}
const Bytes& info() {
  static const Bytes b = from_hex("f0f1f2f3f4f5f6f7f8f9");
  return b;
}
constexpr const char* kPrk = "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5";
constexpr const char* kOkm =
    "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865";

TEST(Hkdf, Rfc5869Case1OneShot) {
  EXPECT_EQ(to_hex(hkdf_sha256(ikm(), salt(), info(), 42)), kOkm);
}

TEST(Hkdf, Rfc5869Case1ExtractThenExpand) {
  const SecretBytes prk = hkdf_sha256_extract(ikm(), salt());
  EXPECT_EQ(to_hex(prk), kPrk);
  EXPECT_EQ(to_hex(hkdf_sha256_expand(prk, info(), 42)), kOkm);
  // A prefix of the output is the shorter output (T(1) || T(2) || ...).
  EXPECT_EQ(to_hex(hkdf_sha256_expand(prk, info(), 10)), std::string(kOkm).substr(0, 20));
}

TEST(Hkdf, Rfc5869Case3EmptySaltAndInfo) {
  // Appendix A.3: an empty salt means HashLen zero bytes.
  const char* okm =
      "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8";
  EXPECT_EQ(to_hex(hkdf_sha256(ikm(), {}, {}, 42)), okm);
  EXPECT_EQ(to_hex(hkdf_sha256(ikm(), Bytes(32, 0), {}, 42)), okm);
  EXPECT_EQ(to_hex(hkdf_sha256_extract(ikm(), {})),
            "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04");
}

TEST(Hkdf, EmptyIkmIsAllowed) {
  EXPECT_EQ(hkdf_sha256({}, salt(), info(), 32).size(), 32u);
  EXPECT_EQ(hkdf_sha256_extract({}, {}).size(), 32u);
}

TEST(Hkdf, LengthLimitsRefused) {
  EXPECT_EQ(code_of([] { (void)hkdf_sha256(ikm(), salt(), info(), 0); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(code_of([] { (void)hkdf_sha256(ikm(), salt(), info(), kHkdfSha256MaxOutput + 1); }),
            ErrorCode::invalid_argument);
  const SecretBytes prk = hkdf_sha256_extract(ikm(), salt());
  EXPECT_EQ(code_of([&] { (void)hkdf_sha256_expand(prk, info(), 0); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(code_of([&] { (void)hkdf_sha256_expand(prk, info(), kHkdfSha256MaxOutput + 1); }),
            ErrorCode::invalid_argument);
  // The limit itself is fine, and agrees between the two paths.
  const SecretBytes max = hkdf_sha256(ikm(), salt(), info(), kHkdfSha256MaxOutput);
  EXPECT_EQ(max.size(), kHkdfSha256MaxOutput);
  EXPECT_EQ(max, hkdf_sha256_expand(prk, info(), kHkdfSha256MaxOutput));
}

TEST(Hkdf, ShortPrkRefused) {
  // RFC 5869 section 2.3: PRK is at least HashLen bytes.
  EXPECT_EQ(code_of([] { (void)hkdf_sha256_expand(Bytes(31, 1), info(), 32); }),
            ErrorCode::invalid_length);
  EXPECT_EQ(hkdf_sha256_expand(Bytes(64, 1), info(), 32).size(), 32u);
}

}  // namespace
}  // namespace pqot::crypto
