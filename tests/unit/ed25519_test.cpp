// Ed25519 (RFC 8032): the known answers of section 7.1 and what the wrapper refuses. The
// Wycheproof file is run by ed25519_wycheproof_test.cpp.
#include "pqot/crypto/ed25519.hpp"

#include <gtest/gtest.h>

#include "../support/crypto_error.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {
namespace {

using test::code_of;

struct Rfc8032Case {
  const char* secret;
  const char* public_key;
  const char* message;
  const char* signature;
};

// RFC 8032 section 7.1, TEST 1 (empty message) and TEST 2 (one byte).
constexpr Rfc8032Case kCases[] = {
    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b4"
     "6bd25bf5f0595bbe24655141438e7a100b"},
    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d"
     "8c387b2eaeb4302aeeb00d291612bb0c00"},
};

TEST(Ed25519, Rfc8032KnownAnswers) {
  const Ed25519 ed;
  for (const auto& c : kCases) {
    const auto kp = ed.keygen(from_hex(c.secret));
    EXPECT_EQ(to_hex(kp.public_key), c.public_key);
    const Bytes msg = from_hex(c.message);
    const Bytes sig = ed.sign_deterministic(kp.secret_key, msg);
    EXPECT_EQ(to_hex(sig), c.signature);
    EXPECT_EQ(ed.sign(kp.secret_key, msg), sig) << "Ed25519 signatures are deterministic";
    EXPECT_TRUE(ed.verify(kp.public_key, msg, {}, sig));
  }
}

TEST(Ed25519, ContextIsRefusedNotDropped) {
  const Ed25519 ed;
  const auto kp = ed.keygen(Bytes(32, 7));
  const Bytes ctx = {'c'};
  EXPECT_EQ(code_of([&] { (void)ed.sign(kp.secret_key, {}, ctx); }), ErrorCode::invalid_argument);
  const Bytes sig = ed.sign(kp.secret_key, {});
  EXPECT_EQ(code_of([&] { (void)ed.verify(kp.public_key, {}, ctx, sig); }),
            ErrorCode::invalid_argument);
}

TEST(Ed25519, PublicKeyThatIsNoPointVerifiesNothing) {
  const Ed25519 ed;
  const auto kp = ed.keygen(Bytes(32, 9));
  const Bytes sig = ed.sign(kp.secret_key, {});
  // y = 2^255 - 1 (all ones but the sign bit) is not below p = 2^255 - 19: no point encodes so.
  Bytes not_a_point(32, 0xff);
  not_a_point[31] = 0x7f;
  EXPECT_FALSE(ed.verify(not_a_point, {}, {}, sig));
  // A signature with S >= L (the group order) is refused (RFC 8032 section 5.1.7, step 1).
  Bytes big_s = sig;
  for (std::size_t i = 32; i < 64; ++i) big_s[i] = 0xff;
  EXPECT_FALSE(ed.verify(kp.public_key, {}, {}, big_s));
}

}  // namespace
}  // namespace pqot::crypto
