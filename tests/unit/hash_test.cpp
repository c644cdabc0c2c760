// SHA-256 and HMAC-SHA-256 wrappers: FIPS 180-4 and RFC 4231 known answers.
#include <gtest/gtest.h>

#include <algorithm>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/hash.hpp"

namespace pqot::crypto {
namespace {

TEST(Hash, Sha256KnownAnswers) {
  EXPECT_EQ(to_hex(sha256(as_bytes(""))),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256(as_bytes("abc"))),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Parts hash as their concatenation.
  EXPECT_EQ(sha256({as_bytes("a"), as_bytes(""), as_bytes("bc")}), sha256(as_bytes("abc")));
}

TEST(Hash, Sha256HasherInPiecesEqualsOneShot) {
  Sha256Hasher h;
  h.update(as_bytes("a"));
  h.update(as_bytes(""));
  h.update(as_bytes("bc"));
  EXPECT_EQ(to_hex(h.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_THROW(h.finish(), Error);  // once only
  const Bytes million(1'000'000, 'a');  // FIPS 180-2 appendix B.3, fed in uneven pieces
  Sha256Hasher m;
  for (std::size_t at = 0; at < million.size();) {
    const std::size_t n = std::min<std::size_t>(million.size() - at, 1 + at % 4099);
    m.update(ByteView(million.data() + at, n));
    at += n;
  }
  EXPECT_EQ(to_hex(m.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Hash, HmacSha256Rfc4231) {
  // RFC 4231 test case 2.
  EXPECT_EQ(to_hex(hmac_sha256(as_bytes("Jefe"), {as_bytes("what do ya want "),
                                                  as_bytes("for nothing?")})),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // RFC 4231 test case 1.
  const Bytes key(20, 0x0b);
  EXPECT_EQ(to_hex(hmac_sha256(key, {as_bytes("Hi There")})),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

}  // namespace
}  // namespace pqot::crypto
