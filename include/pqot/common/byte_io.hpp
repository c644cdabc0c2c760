// Bounds-checked big-endian readers and writers for wire formats. Every read past the end throws
// ByteIo::Underflow instead of touching memory: parsers of untrusted bytes use nothing else.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace pqot::common {

/// Thrown when a read would pass the end of the input.
class Underflow : public std::runtime_error {
 public:
  Underflow() : std::runtime_error("truncated input") {}
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> data) noexcept : data_(data) {}

  std::uint8_t u8() { return take(1)[0]; }
  std::uint16_t u16() {
    auto b = take(2);
    return static_cast<std::uint16_t>((b[0] << 8) | b[1]);
  }
  std::uint32_t u32() {
    auto b = take(4);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
           std::uint32_t{b[3]};
  }
  std::uint64_t u64() {
    const std::uint64_t hi = u32();
    return (hi << 32) | u32();
  }
  /// The next n bytes, as a view into the input.
  std::span<const std::uint8_t> bytes(std::size_t n) { return take(n); }
  /// Everything not yet read.
  std::span<const std::uint8_t> rest() noexcept {
    auto r = data_.subspan(pos_);
    pos_ = data_.size();
    return r;
  }
  std::size_t remaining() const noexcept { return data_.size() - pos_; }
  bool empty() const noexcept { return remaining() == 0; }

 private:
  std::span<const std::uint8_t> take(std::size_t n) {
    if (n > remaining()) throw Underflow();
    auto r = data_.subspan(pos_, n);
    pos_ += n;
    return r;
  }

  std::span<const std::uint8_t> data_;
  std::size_t pos_ = 0;
};

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) noexcept : out_(out) {}

  ByteWriter& u8(std::uint8_t v) {
    out_.push_back(v);
    return *this;
  }
  ByteWriter& u16(std::uint16_t v) {
    out_.push_back(static_cast<std::uint8_t>(v >> 8));
    out_.push_back(static_cast<std::uint8_t>(v));
    return *this;
  }
  ByteWriter& u32(std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out_.push_back(static_cast<std::uint8_t>(v >> s));
    return *this;
  }
  ByteWriter& u64(std::uint64_t v) {
    u32(static_cast<std::uint32_t>(v >> 32));
    return u32(static_cast<std::uint32_t>(v));
  }
  ByteWriter& bytes(std::span<const std::uint8_t> b) {
    out_.insert(out_.end(), b.begin(), b.end());
    return *this;
  }
  ByteWriter& bytes(std::string_view s) {
    out_.insert(out_.end(), s.begin(), s.end());
    return *this;
  }

 private:
  std::vector<std::uint8_t>& out_;
};

/// Big-endian stores and loads into fixed buffers (for headers built in place).
inline void store_u32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}
inline std::uint32_t load_u32(const std::uint8_t* p) noexcept {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

}  // namespace pqot::common
