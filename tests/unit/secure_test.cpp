// Secret hygiene: constant-time compare, wiping, self-wiping containers, hex.
#include "../support/crypto_error.hpp"
#include "pqot/crypto/secure.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "pqot/crypto/error.hpp"

namespace pqot::crypto {
namespace {

bool all_zero(const std::uint8_t* p, std::size_t n) {
  return std::all_of(p, p + n, [](std::uint8_t x) { return x == 0; });
}

using pqot::test::code_of;

TEST(Secure, CtEqual) {
  const Bytes a = from_hex("00112233445566778899");
  Bytes b = a;
  EXPECT_TRUE(ct_equal(a, b));
  b.back() ^= 1;
  EXPECT_FALSE(ct_equal(a, b));
  b = a;
  b.front() ^= 0x80;
  EXPECT_FALSE(ct_equal(a, b));
  EXPECT_FALSE(ct_equal(a, ByteView(a).first(a.size() - 1)));
  EXPECT_FALSE(ct_equal({}, a));
  EXPECT_TRUE(ct_equal({}, {}));
  EXPECT_TRUE(ct_equal(ByteView(a).first(0), Bytes{}));
}

TEST(Secure, SecureWipeZeroes) {
  Bytes b(100, 0xAA);
  secure_wipe(b);
  EXPECT_TRUE(all_zero(b.data(), b.size()));
  std::uint8_t raw[7] = {1, 2, 3, 4, 5, 6, 7};
  secure_wipe(raw, sizeof(raw));
  EXPECT_TRUE(all_zero(raw, sizeof(raw)));
  secure_wipe(nullptr, 0);  // harmless
  secure_wipe(MutableByteView{});
}

TEST(Secure, SecretDestructorWipes) {
  // Construct in storage that outlives the object, so its bytes can be read after destruction.
  alignas(Secret<32>) unsigned char storage[sizeof(Secret<32>)];
  std::memset(storage, 0x5c, sizeof(storage));
  auto* s = ::new (static_cast<void*>(storage)) Secret<32>;
  EXPECT_TRUE(all_zero(s->data(), s->size()));  // value-initialised
  std::fill(s->data(), s->data() + s->size(), std::uint8_t{0xAA});
  EXPECT_EQ((*s)[31], 0xAA);
  s->~Secret();
  // After the destructor the compiler may treat the storage as indeterminate (-flifetime-dse) and
  // fold the check below; this barrier forces it to read what is really in memory.
  asm volatile("" : : "r"(storage) : "memory");
  EXPECT_TRUE(all_zero(storage, sizeof(storage)));
}

// An allocator that checks, when a block comes back, whether it was wiped.
struct DeallocLog {
  static inline std::vector<bool> wiped;  // one entry per deallocated non-empty block
};

template <class T>
struct CheckingAllocator {
  using value_type = T;
  CheckingAllocator() = default;
  template <class U>
  CheckingAllocator(const CheckingAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, std::size_t n) noexcept {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(p);
    DeallocLog::wiped.push_back(all_zero(bytes, n * sizeof(T)));
    std::allocator<T>().deallocate(p, n);
  }
  friend bool operator==(const CheckingAllocator&, const CheckingAllocator&) { return true; }
};

TEST(Secure, WipingAllocatorWipesEveryBlock) {
  DeallocLog::wiped.clear();
  {
    std::vector<std::uint8_t, WipingAllocator<std::uint8_t, CheckingAllocator<std::uint8_t>>> v;
    v.reserve(4);
    for (int i = 0; i < 1000; ++i) v.push_back(0xAA);  // several reallocations
    EXPECT_EQ(v.size(), 1000u);
    v.resize(10);
    v.shrink_to_fit();  // one more reallocation
  }
  // reserve(4) plus growth to 1000 and the shrink: more than two blocks came back.
  ASSERT_GE(DeallocLog::wiped.size(), 3u);
  for (std::size_t i = 0; i < DeallocLog::wiped.size(); ++i) {
    EXPECT_TRUE(DeallocLog::wiped[i]) << "block " << i << " was freed without being wiped";
  }
  // The check itself works: an unwiped block is reported.
  DeallocLog::wiped.clear();
  {
    CheckingAllocator<std::uint8_t> plain;
    std::uint8_t* p = plain.allocate(8);
    std::fill(p, p + 8, std::uint8_t{1});
    plain.deallocate(p, 8);
  }
  ASSERT_EQ(DeallocLog::wiped.size(), 1u);
  EXPECT_FALSE(DeallocLog::wiped[0]);
}

TEST(Secure, SecretBytesFromView) {
  const Bytes b = from_hex("deadbeef");
  const SecretBytes s = to_secret(b);
  EXPECT_EQ(to_hex(s), "deadbeef");
}

TEST(Secure, HexRoundTrip) {
  Bytes all(256);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint8_t>(i);
  const std::string hex = to_hex(all);
  EXPECT_EQ(hex.substr(0, 8), "00010203");
  EXPECT_EQ(hex.substr(hex.size() - 4), "feff");
  EXPECT_EQ(from_hex(hex), all);
  EXPECT_EQ(from_hex("ABCDef"), from_hex("abcdef"));
  EXPECT_TRUE(from_hex("").empty());
  EXPECT_EQ(to_hex({}), "");
}

TEST(Secure, FromHexErrors) {
  EXPECT_EQ(code_of([] { (void)from_hex("abc"); }), ErrorCode::invalid_encoding);
  EXPECT_EQ(code_of([] { (void)from_hex("0g"); }), ErrorCode::invalid_encoding);
  EXPECT_EQ(code_of([] { (void)from_hex("g0"); }), ErrorCode::invalid_encoding);
  EXPECT_EQ(code_of([] { (void)from_hex("0x00"); }), ErrorCode::invalid_encoding);
  EXPECT_EQ(code_of([] { (void)from_hex("00 11"); }), ErrorCode::invalid_encoding);
}

}  // namespace
}  // namespace pqot::crypto
