// X-Wing: the draft's published vector, round trips, and the combiner's binding to its inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/xwing.hpp"

namespace pqot::crypto {
namespace {

Bytes copy(const SecretBytes& s) { return Bytes(s.begin(), s.end()); }

TEST(XWing, DraftTestVector) {
  std::ifstream in(std::string(PQOT_TEST_DATA_DIR) + "/xwing/xwing_draft08.json");
  ASSERT_TRUE(in);
  const auto file = nlohmann::json::parse(in);
  const XWing kem;
  int n = 0;
  for (const auto& v : file["vectors"]) {
    const Bytes sk = from_hex(v["sk"].get<std::string>());
    const auto kp = kem.generate_keypair(sk);
    EXPECT_EQ(to_hex(kp.public_key), v["pk"].get<std::string>());
    const auto enc = kem.encapsulate(kp.public_key, from_hex(v["eseed"].get<std::string>()));
    EXPECT_EQ(to_hex(enc.ciphertext), v["ct"].get<std::string>());
    EXPECT_EQ(to_hex(copy(enc.shared_secret)), v["ss"].get<std::string>());
    EXPECT_EQ(to_hex(copy(kem.decapsulate(kp.secret_key, enc.ciphertext))),
              v["ss"].get<std::string>());
    ++n;
  }
  EXPECT_EQ(n, 1);
}

TEST(XWing, RandomRoundTrip) {
  const XWing kem;
  for (int i = 0; i < 10; ++i) {
    const auto kp = kem.generate_keypair();
    const auto enc = kem.encapsulate(kp.public_key);
    EXPECT_EQ(copy(kem.decapsulate(kp.secret_key, enc.ciphertext)), copy(enc.shared_secret));
  }
}

TEST(XWing, EitherHalfOfTheCiphertextChangesTheSecret) {
  const XWing kem;
  const auto kp = kem.generate_keypair();
  const auto enc = kem.encapsulate(kp.public_key);
  for (std::size_t at : {std::size_t{10}, XWing::kCiphertextSize - 5}) {  // ML-KEM part, X25519 part
    Bytes ct = enc.ciphertext;
    ct[at] ^= 0x04;
    EXPECT_NE(copy(kem.decapsulate(kp.secret_key, ct)), copy(enc.shared_secret)) << at;
  }
}

TEST(XWing, LowOrderX25519CiphertextStillDecapsulates) {
  // An all-zero X25519 share is a low-order point: X-Wing defines the result (ss_X = 0) rather than
  // failing, and the ML-KEM half keeps the secret.
  const XWing kem;
  const auto kp = kem.generate_keypair();
  const auto enc = kem.encapsulate(kp.public_key);
  Bytes ct = enc.ciphertext;
  std::fill(ct.end() - 32, ct.end(), 0);
  const auto ss = kem.decapsulate(kp.secret_key, ct);
  EXPECT_EQ(ss.size(), 32u);
  EXPECT_NE(copy(ss), copy(enc.shared_secret));
}

TEST(XWing, InputChecks) {
  const XWing kem;
  const auto kp = kem.generate_keypair();
  Bytes ek = kp.public_key;
  ek[0] = 0xff;  // first ML-KEM coefficient = 0x?ff with the low nibble of byte 1
  ek[1] = static_cast<std::uint8_t>(ek[1] | 0x0f);  // 4095 > q: fails the modulus check
  EXPECT_THROW(kem.check_public_key(ek), Error);
  EXPECT_THROW(kem.encapsulate(Bytes(kp.public_key.begin(), kp.public_key.end() - 1)), Error);
  EXPECT_THROW(kem.decapsulate(kp.secret_key, Bytes(XWing::kCiphertextSize + 1)), Error);
  EXPECT_THROW(kem.generate_keypair(Bytes(31)), Error);
}

}  // namespace
}  // namespace pqot::crypto
