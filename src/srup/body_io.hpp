// Internal to the body codec (body.cpp, body_keys.cpp): field readers and writers for the layouts
// of docs/srup-pq.md section 2.7. A reader refuses with BAD_REQUEST naming the field; a writer
// throws std::invalid_argument (a sender bug).
#pragma once

#include <array>
#include <stdexcept>
#include <string>

#include "pqot/common/byte_io.hpp"
#include "pqot/srup/body.hpp"

namespace pqot::srup::body_io {

[[noreturn]] inline void refuse(const std::string& what) {
  throw Refused(Refusal::bad_request, "body: " + what);
}
[[noreturn]] inline void sender_bug(const std::string& what) {
  throw std::invalid_argument("SRUP-PQ body: " + what);
}

inline constexpr std::uint64_t kAllOnes = ~std::uint64_t{0};
inline bool valid_peer_id(std::uint64_t id) noexcept {
  return id != 0 && id != kAllOnes;
}

class BodyReader {
 public:
  explicit BodyReader(ByteView plain) noexcept : r_(plain) {}

  ByteView take(std::size_t n, const char* what) {
    if (n > r_.remaining()) refuse(std::string(what) + " runs past the end");
    return r_.bytes(n);
  }
  std::uint64_t be(std::size_t n, const char* what) {
    std::uint64_t v = 0;
    for (std::uint8_t b : take(n, what)) v = v << 8 | b;
    return v;
  }
  std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(be(1, what)); }
  std::uint16_t u16(const char* what) { return static_cast<std::uint16_t>(be(2, what)); }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(be(4, what)); }
  std::uint64_t u64(const char* what) { return be(8, what); }
  std::uint64_t peer_id(const char* what) {
    const std::uint64_t id = u64(what);
    if (!valid_peer_id(id)) refuse(std::string(what) + " is a reserved ID");
    return id;
  }
  template <std::size_t N>
  std::array<std::uint8_t, N> array(const char* what) {
    const ByteView b = take(N, what);
    std::array<std::uint8_t, N> a{};
    std::copy(b.begin(), b.end(), a.begin());
    return a;
  }
  /// A length field of `length_size` bytes, then that many bytes of UTF-8, min..max bytes.
  std::string text(std::size_t length_size, std::size_t min, std::size_t max, const char* what) {
    const std::size_t n = be(length_size, what);
    if (n < min || n > max) refuse(std::string(what) + " length out of range");
    const ByteView b = take(n, what);
    if (!is_valid_utf8(b)) refuse(std::string(what) + " is not valid UTF-8");
    return std::string(b.begin(), b.end());
  }
  /// u16 length ‖ bytes; the length must be `exact`, or for 0 (legacy DER) 1..1,024.
  ByteView key(std::size_t exact, const char* what) {
    const std::size_t n = u16(what);
    if (exact != 0 ? n != exact : (n == 0 || n > kMaxLegacyPublicKey)) {
      refuse(std::string(what) + " has the wrong length for the suite");
    }
    return take(n, what);
  }
  Bytes key_bytes(std::size_t exact, const char* what) {
    const ByteView b = key(exact, what);
    return Bytes(b.begin(), b.end());
  }
  Value value() {
    // decode_value refuses with its own BAD_REQUEST; the reader is shared, so it reads in place.
    return decode_value(r_);
  }
  void finish() const {
    if (r_.remaining() != 0) refuse("bytes after the body");
  }

 private:
  common::ByteReader r_;
};

class BodyWriter {
 public:
  explicit BodyWriter(Bytes& out) noexcept : w_(out) {}

  void u8(std::uint8_t v) { w_.u8(v); }
  void u16(std::uint16_t v) { w_.u16(v); }
  void u32(std::uint32_t v) { w_.u32(v); }
  void u64(std::uint64_t v) { w_.u64(v); }
  void peer_id(std::uint64_t id, const char* what) {
    if (!valid_peer_id(id)) sender_bug(std::string(what) + " is a reserved ID");
    w_.u64(id);
  }
  void bytes(ByteView b) { w_.bytes(b); }
  void text(const std::string& s, std::size_t length_size, std::size_t min, std::size_t max,
            const char* what) {
    if (s.size() < min || s.size() > max) sender_bug(std::string(what) + " length out of range");
    if (!is_valid_utf8(s)) sender_bug(std::string(what) + " is not valid UTF-8");
    if (length_size == 1) {
      w_.u8(static_cast<std::uint8_t>(s.size()));
    } else {
      w_.u16(static_cast<std::uint16_t>(s.size()));
    }
    w_.bytes(s);
  }
  void key(ByteView k, std::size_t exact, const char* what) {
    if (exact != 0 ? k.size() != exact : (k.empty() || k.size() > kMaxLegacyPublicKey)) {
      sender_bug(std::string(what) + " has the wrong length for the suite");
    }
    w_.u16(static_cast<std::uint16_t>(k.size()));
    w_.bytes(k);
  }
  void value(const Value& v) { encode_value(w_, v); }

 private:
  common::ByteWriter w_;
};

/// The alternative a type's body must be, or a sender bug.
template <class T>
const T& expect(const Body& body, MessageType type) {
  const T* b = std::get_if<T>(&body);
  if (b == nullptr) sender_bug("the body does not fit the type " + std::string(to_string(type)));
  return *b;
}

// The bodies with key fields (body_keys.cpp).
Body decode_key_body(MessageType type, Suite suite, BodyReader& r);
void encode_key_body(MessageType type, Suite suite, const Body& body, BodyWriter& w);

}  // namespace pqot::srup::body_io
