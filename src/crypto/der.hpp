// The small subset of DER (ITU-T X.690 section 10) that key files need: single-byte tags,
// definite minimal lengths, and a reader that checks every bound before it looks at a byte.
// Internal to src/crypto (key_file.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::crypto::der {

// Universal tags (X.690 section 8) and the one context tag ML-DSA private keys use.
inline constexpr std::uint8_t kInteger = 0x02;
inline constexpr std::uint8_t kBitString = 0x03;
inline constexpr std::uint8_t kOctetString = 0x04;
inline constexpr std::uint8_t kNull = 0x05;
inline constexpr std::uint8_t kOid = 0x06;
inline constexpr std::uint8_t kSequence = 0x30;
inline constexpr std::uint8_t kContext0 = 0x80;  ///< [0] IMPLICIT, primitive

/// Reads TLVs one after another from a view. Every failure is Error{invalid_encoding} naming
/// `what` (e.g. "SubjectPublicKeyInfo") and the offending field; no message contains key bytes.
class Reader {
 public:
  /// `secret`: the bytes are (inside) a private key, so errors name no byte or length read from
  /// them, only the field.
  Reader(ByteView data, std::string what, bool secret = false)
      : data_(data), what_(std::move(what)), secret_(secret) {}

  /// True when the next TLV has this tag (false at the end).
  bool next_is(std::uint8_t tag) const noexcept;
  /// The value of the next TLV, which must carry `tag`; `field` names it in errors.
  ByteView read(std::uint8_t tag, const char* field);
  bool at_end() const noexcept { return pos_ == data_.size(); }
  /// Refuses anything left over (X.690 section 10.1: one encoding, nothing after it).
  void expect_end(const char* after) const;

 private:
  [[noreturn]] void fail(const std::string& why) const;

  ByteView data_;
  std::size_t pos_ = 0;
  std::string what_;
  bool secret_;
};

/// Appends tag || minimal length || value (section 10.1, 8.1.3.5). Works for Bytes and
/// SecretBytes alike.
template <class Vec>
void append(Vec& out, std::uint8_t tag, ByteView value) {
  out.push_back(tag);
  const std::size_t n = value.size();
  if (n < 0x80) {
    out.push_back(static_cast<std::uint8_t>(n));
  } else {
    std::uint8_t len[sizeof(std::size_t)];
    std::size_t count = 0;
    for (std::size_t v = n; v != 0; v >>= 8) len[count++] = static_cast<std::uint8_t>(v);
    out.push_back(static_cast<std::uint8_t>(0x80 | count));
    while (count > 0) out.push_back(len[--count]);
  }
  out.insert(out.end(), value.begin(), value.end());
}

/// Dotted text of an OBJECT IDENTIFIER's contents ("1.3.101.112"), for error messages; a
/// malformed or absurdly long one is shown as "(malformed OID)".
std::string oid_to_text(ByteView contents);

}  // namespace pqot::crypto::der
