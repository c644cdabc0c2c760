// The CSPRNG wrappers deliver: they fill the whole buffer, differ per draw, and handle big
// requests.
#include "pqot/crypto/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace pqot::crypto {
namespace {

bool all_zero(ByteView b) {
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

// The chance that 32 random bytes are all zero is 2^-256; a zero run means the fill stopped short.
// Every 32-byte window was written (all zero by chance: 2^-256). The last window ends at the end
// of the buffer instead of being cut short: a 1-byte tail is zero by chance once in 256 runs.
void expect_filled(ByteView b) {
  const std::size_t window = std::min<std::size_t>(32, b.size());
  for (std::size_t at = 0; at < b.size(); at += 32) {
    const std::size_t start = std::min(at, b.size() - window);
    EXPECT_FALSE(all_zero(b.subspan(start, window))) << start;
  }
}

TEST(Random, FillsBuffers) {
  Bytes a(64, 0), s(64, 0);
  random_bytes(a);
  random_secret_bytes(s);
  expect_filled(a);
  expect_filled(s);
  random_bytes(MutableByteView{});  // an empty request is fine
  random_secret_bytes(MutableByteView{});
}

TEST(Random, TwoDrawsDiffer) {
  Bytes a(32), b(32), c(32), d(32);
  random_bytes(a);
  random_bytes(b);
  random_secret_bytes(c);
  random_secret_bytes(d);
  EXPECT_NE(a, b);
  EXPECT_NE(c, d);
  EXPECT_NE(a, c);
}

TEST(Random, LargeRequest) {
  Bytes big((std::size_t{1} << 20) + 4097, 0);
  random_bytes(big);
  expect_filled(big);
  std::fill(big.begin(), big.end(), 0);
  random_secret_bytes(big);
  expect_filled(big);
}

}  // namespace
}  // namespace pqot::crypto
