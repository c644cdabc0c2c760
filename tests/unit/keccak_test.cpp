// Keccak sponge against OpenSSL's SHA-3/SHAKE (an independent implementation), FIPS 202.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <random>

#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto {
namespace {

Bytes openssl_digest(const char* name, ByteView in, std::size_t out_len) {
  EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  Bytes out(out_len);
  EXPECT_EQ(EVP_DigestInit_ex2(ctx, md, nullptr), 1);
  EXPECT_EQ(EVP_DigestUpdate(ctx, in.data(), in.size()), 1);
  if (EVP_MD_get_flags(md) & EVP_MD_FLAG_XOF) {
    EXPECT_EQ(EVP_DigestFinalXOF(ctx, out.data(), out.size()), 1);
  } else {
    unsigned int n = 0;
    EXPECT_EQ(EVP_DigestFinal_ex(ctx, out.data(), &n), 1);
    out.resize(n);
  }
  EVP_MD_CTX_free(ctx);
  EVP_MD_free(md);
  return out;
}

Bytes pseudo_random(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

// Lengths around every rate boundary (72, 136, 168) and several blocks.
const std::size_t kLengths[] = {0, 1, 7, 8, 71, 72, 73, 135, 136, 137, 167, 168, 169, 300, 1000};

TEST(Keccak, Sha3MatchesOpenSsl) {
  for (std::size_t len : kLengths) {
    const Bytes msg = pseudo_random(len, static_cast<unsigned>(len));
    const auto d256 = sha3_256(msg);
    const auto d512 = sha3_512(msg);
    EXPECT_EQ(Bytes(d256.begin(), d256.end()), openssl_digest("SHA3-256", msg, 32)) << len;
    EXPECT_EQ(Bytes(d512.begin(), d512.end()), openssl_digest("SHA3-512", msg, 64)) << len;
  }
}

TEST(Keccak, ShakeMatchesOpenSsl) {
  for (std::size_t len : kLengths) {
    const Bytes msg = pseudo_random(len, static_cast<unsigned>(len + 1000));
    for (std::size_t out_len : {1u, 32u, 168u, 169u, 504u, 1000u}) {
      Bytes a(out_len), b(out_len);
      shake128(msg, a);
      shake256(msg, b);
      EXPECT_EQ(a, openssl_digest("SHAKE128", msg, out_len)) << len << "/" << out_len;
      EXPECT_EQ(b, openssl_digest("SHAKE256", msg, out_len)) << len << "/" << out_len;
    }
  }
}

TEST(Keccak, IncrementalAbsorbAndSqueezeEqualOneShot) {
  const Bytes msg = pseudo_random(777, 7);
  Bytes expected(2000);
  shake128(msg, expected);
  // Absorb in uneven pieces, squeeze in uneven pieces and in whole blocks.
  Shake128 s;
  std::size_t at = 0;
  for (std::size_t piece : {0u, 1u, 13u, 167u, 168u, 200u, 228u}) {
    s.absorb(ByteView(msg).subspan(at, piece));
    at += piece;
  }
  ASSERT_EQ(at, msg.size());
  Bytes got(2000);
  s.squeeze_blocks(MutableByteView(got).first(336));
  s.squeeze(MutableByteView(got).subspan(336, 5));
  s.squeeze(MutableByteView(got).subspan(341, 163));
  s.squeeze_blocks(MutableByteView(got).subspan(504, 168));
  s.squeeze(MutableByteView(got).subspan(672));
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace pqot::crypto
