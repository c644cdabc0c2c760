// Secret hygiene: wiping, constant-time comparison, and containers that wipe themselves.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "pqot/crypto/bytes.hpp"

namespace pqot::crypto {

/// Overwrites `data` with zeros in a way the compiler may not elide (OPENSSL_cleanse).
void secure_wipe(void* data, std::size_t size) noexcept;
inline void secure_wipe(MutableByteView data) noexcept { secure_wipe(data.data(), data.size()); }

/// Constant-time equality of two byte strings (CRYPTO_memcmp). The lengths are public:
/// different lengths compare unequal at once.
bool ct_equal(ByteView a, ByteView b) noexcept;

/// Allocator that wipes every block before returning it to `Base`, so a vector of secrets leaves
/// nothing behind when it grows, shrinks or dies.
template <class T, class Base = std::allocator<T>>
struct WipingAllocator : Base {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = WipingAllocator<U, typename std::allocator_traits<Base>::template rebind_alloc<U>>;
  };
  WipingAllocator() = default;
  template <class U, class B>
  WipingAllocator(const WipingAllocator<U, B>& other) noexcept : Base(other) {}

  void deallocate(T* p, std::size_t n) noexcept {
    secure_wipe(p, n * sizeof(T));
    Base::deallocate(p, n);
  }
};

/// Variable-size secret bytes (keys, shared secrets): wiped on release.
using SecretBytes = std::vector<std::uint8_t, WipingAllocator<std::uint8_t>>;

/// Fixed-size secret: a std::array wiped by its destructor.
template <std::size_t N>
class Secret {
 public:
  Secret() = default;
  Secret(const Secret&) = default;
  Secret& operator=(const Secret&) = default;
  ~Secret() { secure_wipe(bytes_.data(), N); }

  std::uint8_t* data() noexcept { return bytes_.data(); }
  const std::uint8_t* data() const noexcept { return bytes_.data(); }
  static constexpr std::size_t size() noexcept { return N; }
  std::span<std::uint8_t, N> span() noexcept { return bytes_; }
  std::span<const std::uint8_t, N> span() const noexcept { return bytes_; }
  std::uint8_t& operator[](std::size_t i) noexcept { return bytes_[i]; }
  const std::uint8_t& operator[](std::size_t i) const noexcept { return bytes_[i]; }

 private:
  std::array<std::uint8_t, N> bytes_{};
};

inline SecretBytes to_secret(ByteView data) { return SecretBytes(data.begin(), data.end()); }

}  // namespace pqot::crypto
