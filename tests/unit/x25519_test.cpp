// X25519 (RFC 7748): section 6.1 vectors, low-order points, sizes. Wycheproof vectors are in
// x25519_wycheproof_test.cpp.
#include "../support/crypto_error.hpp"
#include "pqot/crypto/x25519.hpp"

#include <gtest/gtest.h>

#include "pqot/crypto/error.hpp"

namespace pqot::crypto {
namespace {

using pqot::test::code_of;

// RFC 7748 section 6.1.
constexpr const char* kAlicePriv =
    "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
constexpr const char* kAlicePub =
    "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
constexpr const char* kBobPriv = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
constexpr const char* kBobPub = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
constexpr const char* kShared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";

TEST(X25519, Rfc7748PublicKeys) {
  const X25519Public alice = x25519_public_key(from_hex(kAlicePriv));
  const X25519Public bob = x25519_public_key(from_hex(kBobPriv));
  EXPECT_EQ(to_hex(alice), kAlicePub);
  EXPECT_EQ(to_hex(bob), kBobPub);
}

TEST(X25519, Rfc7748SharedSecret) {
  const auto ab = x25519(from_hex(kAlicePriv), from_hex(kBobPub));
  const auto ba = x25519(from_hex(kBobPriv), from_hex(kAlicePub));
  ASSERT_TRUE(ab.has_value());
  ASSERT_TRUE(ba.has_value());
  EXPECT_EQ(to_hex(ab->span()), kShared);
  EXPECT_EQ(to_hex(ba->span()), kShared);
}

TEST(X25519, LowOrderPointGivesNullopt) {
  // u = 0 and u = 1 have order 1 and 4: the result is all zero, which RFC 7748 6.1 lets us refuse.
  Bytes zero(32, 0);
  EXPECT_FALSE(x25519(from_hex(kAlicePriv), zero).has_value());
  Bytes one(32, 0);
  one[0] = 1;
  EXPECT_FALSE(x25519(from_hex(kAlicePriv), one).has_value());
  // An order-8 point (Wycheproof "LowOrderPublic").
  const Bytes order8 = from_hex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800");
  EXPECT_FALSE(x25519(from_hex(kAlicePriv), order8).has_value());
  // A refusal leaves nothing behind that breaks the next call.
  EXPECT_TRUE(x25519(from_hex(kAlicePriv), from_hex(kBobPub)).has_value());
}

TEST(X25519, WrongSizesThrow) {
  for (std::size_t len : {0u, 31u, 33u, 64u}) {
    const Bytes b(len, 1);
    EXPECT_EQ(code_of([&] { (void)x25519_public_key(b); }), ErrorCode::invalid_length) << len;
    EXPECT_EQ(code_of([&] { (void)x25519(b, from_hex(kBobPub)); }), ErrorCode::invalid_length)
        << len;
    EXPECT_EQ(code_of([&] { (void)x25519(from_hex(kAlicePriv), b); }), ErrorCode::invalid_length)
        << len;
  }
}

}  // namespace
}  // namespace pqot::crypto
