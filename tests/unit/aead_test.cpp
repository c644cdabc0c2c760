// AES-256-GCM wrapper and counter nonces (docs/crypto.md, "Nonces"). Known-answer vectors are in
// aead_wycheproof_test.cpp.
#include "../support/crypto_error.hpp"
#include "pqot/crypto/aead.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "pqot/crypto/error.hpp"

namespace pqot::crypto {
namespace {

Bytes pattern(std::size_t n, std::uint8_t seed) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + 31 * i);
  return b;
}

bool all_zero(ByteView b) {
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

using pqot::test::code_of;

const NoncePrefix kPrefix{0xd1, 0x5c, 0x00, 0x07};
// Function-local statics: a namespace-scope initialiser that throws could not be caught.
const Bytes& test_key() {
  static const Bytes k = pattern(32, 1);
  return k;
}
const Bytes& test_aad() {
  static const Bytes a = pattern(13, 2);
  return a;
}

TEST(AeadNonce, PrefixThenBigEndianCounter) {
  const Nonce n = make_nonce(kPrefix, 0x0102030405060708ULL);
  const Nonce expected{0xd1, 0x5c, 0x00, 0x07, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  EXPECT_EQ(n, expected);
  const Nonce zero = make_nonce(kPrefix, 0);
  EXPECT_TRUE(all_zero(ByteView(zero).subspan(4)));
  const Nonce max = make_nonce(kPrefix, UINT64_MAX);
  EXPECT_TRUE(std::all_of(max.begin() + 4, max.end(), [](std::uint8_t x) { return x == 0xff; }));
  EXPECT_EQ(make_nonce(kPrefix, 1)[11], 1);
}

TEST(Aead, RoundTrip) {
  Aes256Gcm gcm(test_key());
  for (std::size_t len : {0u, 1u, 15u, 16u, 17u, 64u, 1000u}) {
    const Bytes msg = pattern(len, static_cast<std::uint8_t>(len));
    const Nonce nonce = make_nonce(kPrefix, len);
    const Bytes sealed = gcm.seal(nonce, test_aad(), msg);
    ASSERT_EQ(sealed.size(), len + kAesGcmTagSize);
    EXPECT_EQ(gcm.open(nonce, test_aad(), sealed), msg) << len;

    // The in-place variants and the one-shot low-level path give the same bytes.
    Bytes sealed2(len + kAesGcmTagSize);
    gcm.seal_into(nonce, test_aad(), msg, sealed2);
    EXPECT_EQ(sealed2, sealed) << len;
    EXPECT_EQ(aes_gcm_encrypt(test_key(), nonce, test_aad(), msg), sealed) << len;
    Bytes opened(len);
    gcm.open_into(nonce, test_aad(), sealed, opened);
    EXPECT_EQ(opened, msg) << len;
    EXPECT_EQ(aes_gcm_decrypt(test_key(), nonce, test_aad(), sealed), msg) << len;
  }
}

TEST(Aead, EmptyAadAndEmptyMessage) {
  Aes256Gcm gcm(test_key());
  const Nonce nonce = make_nonce(kPrefix, 9);
  const Bytes sealed = gcm.seal(nonce, {}, {});
  EXPECT_EQ(sealed.size(), kAesGcmTagSize);
  EXPECT_TRUE(gcm.open(nonce, {}, sealed).empty());
}

TEST(Aead, SealAndOpenInterleaveOnOneInstance) {
  // One context switches direction per call; the key schedule must survive every switch.
  Aes256Gcm sender(test_key());
  Aes256Gcm both(test_key());
  for (std::uint64_t c = 0; c < 5; ++c) {
    const Bytes msg = pattern(40, static_cast<std::uint8_t>(c));
    const Nonce nonce = make_nonce(kPrefix, c);
    const Bytes a = sender.seal(nonce, test_aad(), msg);
    EXPECT_EQ(both.open(nonce, test_aad(), a), msg);
    EXPECT_EQ(both.seal(nonce, test_aad(), msg), a);
  }
}

TEST(Aead, TamperingIsReportedAndReleasesNoPlaintext) {
  Aes256Gcm gcm(test_key());
  const Bytes msg = pattern(48, 7);
  const Nonce nonce = make_nonce(kPrefix, 42);
  const Bytes sealed = gcm.seal(nonce, test_aad(), msg);

  // Fails the test unless opening is refused with auth_failed and the output ends up all zero.
  const auto expect_refused = [&](const Nonce& n, ByteView aad, ByteView s, const char* what,
                                  std::size_t bit) {
    EXPECT_EQ(code_of([&] { (void)gcm.open(n, aad, s); }), ErrorCode::auth_failed)
        << what << " bit " << bit;
    Bytes out(s.size() - kAesGcmTagSize, 0x55);
    EXPECT_EQ(code_of([&] { gcm.open_into(n, aad, s, out); }), ErrorCode::auth_failed)
        << what << " bit " << bit;
    EXPECT_TRUE(all_zero(out)) << what << " bit " << bit << ": plaintext left in the buffer";
  };

  for (std::size_t bit = 0; bit < sealed.size() * 8; bit += 7) {
    Bytes s = sealed;
    s[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    expect_refused(nonce, test_aad(), s, bit / 8 < msg.size() ? "ciphertext" : "tag", bit);
  }
  for (std::size_t bit = 0; bit < test_aad().size() * 8; bit += 5) {
    Bytes aad = test_aad();
    aad[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    expect_refused(nonce, aad, sealed, "aad", bit);
  }
  for (std::size_t bit = 0; bit < nonce.size() * 8; bit += 3) {
    Nonce n = nonce;
    n[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
    expect_refused(n, test_aad(), sealed, "nonce", bit);
  }
  // Truncated, extended and missing-AAD inputs as well.
  expect_refused(nonce, test_aad(), ByteView(sealed).first(sealed.size() - 1), "truncated", 0);
  Bytes longer = sealed;
  longer.push_back(0);
  expect_refused(nonce, test_aad(), longer, "extended", 0);
  expect_refused(nonce, {}, sealed, "no aad", 0);

  // A refusal leaves the instance usable.
  EXPECT_EQ(gcm.open(nonce, test_aad(), sealed), msg);
}

TEST(Aead, DifferentCountersGiveDifferentCiphertexts) {
  Aes256Gcm gcm(test_key());
  const Bytes msg = pattern(32, 3);
  std::set<Bytes> seen;
  NonceSequence seq(kPrefix);
  for (int i = 0; i < 64; ++i) {
    const Bytes sealed = gcm.seal(seq.next(), test_aad(), msg);
    EXPECT_TRUE(seen.insert(Bytes(sealed.begin(), sealed.begin() + 32)).second) << i;
  }
  // So does another prefix with the same counter.
  const Bytes a = gcm.seal(make_nonce(kPrefix, 0), test_aad(), msg);
  const Bytes b = gcm.seal(make_nonce(NoncePrefix{0xd1, 0x5c, 0x00, 0x08}, 0), test_aad(), msg);
  EXPECT_NE(a, b);
}

TEST(Aead, WrongKeyLengthThrows) {
  for (std::size_t len : {0u, 1u, 16u, 24u, 31u, 33u, 64u}) {
    EXPECT_EQ(code_of([&] { Aes256Gcm gcm(pattern(len, 1)); }), ErrorCode::invalid_length) << len;
  }
  const Bytes iv = pattern(12, 5);
  for (std::size_t len : {0u, 1u, 15u, 17u, 23u, 31u, 33u, 64u}) {
    EXPECT_EQ(code_of([&] { (void)aes_gcm_encrypt(pattern(len, 1), iv, {}, {}); }),
              ErrorCode::invalid_length)
        << len;
    EXPECT_EQ(code_of([&] { (void)aes_gcm_decrypt(pattern(len, 1), iv, {}, Bytes(16)); }),
              ErrorCode::invalid_length)
        << len;
  }
}

TEST(Aead, WrongBufferSizesThrow) {
  Aes256Gcm gcm(test_key());
  const Nonce nonce = make_nonce(kPrefix, 1);
  const Bytes msg = pattern(20, 1);
  EXPECT_EQ(code_of([&] { (void)gcm.open(nonce, {}, Bytes(15)); }), ErrorCode::invalid_length);
  Bytes small(msg.size() + kAesGcmTagSize - 1);
  EXPECT_EQ(code_of([&] { gcm.seal_into(nonce, {}, msg, small); }), ErrorCode::invalid_length);
  const Bytes sealed = gcm.seal(nonce, {}, msg);
  Bytes big(msg.size() + 1);
  EXPECT_EQ(code_of([&] { gcm.open_into(nonce, {}, sealed, big); }), ErrorCode::invalid_length);
  EXPECT_EQ(code_of([&] { gcm.open_into(nonce, {}, Bytes(15), MutableByteView{}); }),
            ErrorCode::invalid_length);
  EXPECT_EQ(code_of([&] { (void)aes_gcm_decrypt(test_key(), nonce, {}, Bytes(15)); }),
            ErrorCode::invalid_length);
}

TEST(Aead, OverlappingOutputRefused) {
  Aes256Gcm gcm(test_key());
  const Nonce nonce = make_nonce(kPrefix, 1);
  Bytes buf(64 + kAesGcmTagSize);
  EXPECT_EQ(code_of([&] { gcm.seal_into(nonce, {}, ByteView(buf).first(64), buf); }),
            ErrorCode::invalid_argument);
  EXPECT_EQ(code_of([&] { gcm.open_into(nonce, {}, buf, MutableByteView(buf).first(64)); }),
            ErrorCode::invalid_argument);
}

TEST(Aead, ZeroLengthIvRefused) {
  EXPECT_EQ(code_of([&] { (void)aes_gcm_encrypt(test_key(), {}, {}, pattern(16, 1)); }),
            ErrorCode::invalid_length);
  EXPECT_EQ(code_of([&] { (void)aes_gcm_decrypt(test_key(), {}, {}, Bytes(32)); }),
            ErrorCode::invalid_length);
}

TEST(Aead, LowLevelAcceptsAnyIvLength) {
  // 129 bytes and more take the long-IV path (OpenSSL 3.0's EVP GCM stops at 128).
  for (std::size_t key_len : {16u, 24u, 32u}) {
    const Bytes key = pattern(key_len, 9);
    for (std::size_t iv_len : {1u, 8u, 12u, 16u, 128u, 129u, 257u, 1000u}) {
      const Bytes iv = pattern(iv_len, static_cast<std::uint8_t>(iv_len));
      const Bytes msg = pattern(70, 4);
      const Bytes sealed = aes_gcm_encrypt(key, iv, test_aad(), msg);
      EXPECT_EQ(aes_gcm_decrypt(key, iv, test_aad(), sealed), msg) << key_len << "/" << iv_len;
      Bytes bad = sealed;
      bad.back() ^= 1;
      EXPECT_EQ(code_of([&] { (void)aes_gcm_decrypt(key, iv, test_aad(), bad); }),
                ErrorCode::auth_failed)
          << key_len << "/" << iv_len;
      Bytes other_iv = iv;
      other_iv.back() ^= 1;
      EXPECT_NE(aes_gcm_encrypt(key, other_iv, test_aad(), msg), sealed)
          << key_len << "/" << iv_len;
    }
  }
}

TEST(Aead, MoveKeepsTheKey) {
  Aes256Gcm a(test_key());
  const Nonce nonce = make_nonce(kPrefix, 3);
  const Bytes sealed = a.seal(nonce, test_aad(), pattern(10, 1));
  Aes256Gcm b(std::move(a));
  EXPECT_EQ(b.open(nonce, test_aad(), sealed), pattern(10, 1));
  Aes256Gcm c(pattern(32, 77));
  c = std::move(b);
  EXPECT_EQ(c.open(nonce, test_aad(), sealed), pattern(10, 1));
  // A moved-from instance refuses instead of crashing (the use after move is the point here).
  // NOLINTNEXTLINE(bugprone-use-after-move,clang-analyzer-cplusplus.Move)
  const auto use_moved_from = [&] { (void)a.seal(nonce, {}, {}); };
  EXPECT_EQ(code_of(use_moved_from), ErrorCode::invalid_argument);
}

// ---- NonceSequence -----------------------------------------------------------------------------

TEST(AeadNonceSequence, CountsFromFirst) {
  NonceSequence seq(kPrefix, 5, 10);
  EXPECT_EQ(seq.remaining(), 6u);
  EXPECT_EQ(seq.next(), make_nonce(kPrefix, 5));
  EXPECT_EQ(seq.next_counter(), 6u);
  EXPECT_EQ(seq.remaining(), 4u);
  EXPECT_EQ(seq.prefix(), kPrefix);
  NonceSequence from_zero(kPrefix);
  EXPECT_EQ(from_zero.next_counter(), 0u);
  EXPECT_EQ(from_zero.next_counter(), 1u);
}

TEST(AeadNonceSequence, ExhaustionRefusedAndStaysRefused) {
  NonceSequence seq(kPrefix, UINT64_MAX - 1, UINT64_MAX - 1);
  EXPECT_EQ(seq.remaining(), 1u);
  EXPECT_EQ(seq.next_counter(), UINT64_MAX - 1);
  EXPECT_EQ(seq.remaining(), 0u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(code_of([&] { (void)seq.next_counter(); }), ErrorCode::nonce_exhausted) << i;
    EXPECT_EQ(code_of([&] { (void)seq.next(); }), ErrorCode::nonce_exhausted) << i;
  }
  EXPECT_EQ(seq.remaining(), 0u);
}

TEST(AeadNonceSequence, DefaultLastStopsBeforeUint64Max) {
  NonceSequence seq(kPrefix, UINT64_MAX - 2);
  EXPECT_EQ(seq.next_counter(), UINT64_MAX - 2);
  EXPECT_EQ(seq.next_counter(), UINT64_MAX - 1);
  EXPECT_EQ(code_of([&] { (void)seq.next_counter(); }), ErrorCode::nonce_exhausted);
}

TEST(AeadNonceSequence, LastUint64MaxNeverWraps) {
  NonceSequence seq(kPrefix, UINT64_MAX - 1, UINT64_MAX);
  EXPECT_EQ(seq.remaining(), 2u);
  EXPECT_EQ(seq.next_counter(), UINT64_MAX - 1);
  EXPECT_EQ(seq.next_counter(), UINT64_MAX);
  EXPECT_EQ(seq.remaining(), 0u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(code_of([&] { (void)seq.next_counter(); }), ErrorCode::nonce_exhausted) << i;
  }
  EXPECT_EQ(seq.remaining(), 0u);
}

TEST(AeadNonceSequence, EmptyRangeRefusedAtOnce) {
  NonceSequence seq(kPrefix, 10, 9);
  EXPECT_EQ(seq.remaining(), 0u);
  EXPECT_EQ(code_of([&] { (void)seq.next_counter(); }), ErrorCode::nonce_exhausted);
}

TEST(AeadNonceSequence, FullRangeRemainingSaturates) {
  NonceSequence seq(kPrefix, 0, UINT64_MAX);
  EXPECT_EQ(seq.remaining(), UINT64_MAX);  // 2^64 does not fit
  EXPECT_EQ(seq.next_counter(), 0u);
  EXPECT_EQ(seq.remaining(), UINT64_MAX);
}

}  // namespace
}  // namespace pqot::crypto
