#include "der.hpp"

#include <cstdint>
#include <string>

#include "pqot/crypto/error.hpp"

namespace pqot::crypto::der {

bool Reader::next_is(std::uint8_t tag) const noexcept {
  return pos_ < data_.size() && data_[pos_] == tag;
}

ByteView Reader::read(std::uint8_t tag, const char* field) {
  const std::size_t remaining = data_.size() - pos_;
  if (remaining < 2) fail(std::string(field) + " is missing or truncated");
  if (data_[pos_] != tag) {
    fail(std::string(field) + ": expected tag 0x" + to_hex(ByteView(&tag, 1)) +
         (secret_ ? std::string() : ", found 0x" + to_hex(data_.subspan(pos_, 1))));
  }
  // Length octets, X.690 section 8.1.3; DER (section 10.1) wants the definite form and the
  // fewest octets: short form below 128, no leading zero octet, no long form for short values.
  const std::uint8_t first = data_[pos_ + 1];
  std::size_t header = 2;
  std::size_t length = first;
  if (first == 0x80) fail(std::string(field) + ": indefinite length is not DER");
  if (first > 0x80) {
    const std::size_t count = first & 0x7f;
    // Key files are far below 16 MiB: three length octets are plenty, and the sum below cannot
    // overflow.
    if (count > 3) fail(std::string(field) + ": length field too long");
    if (remaining < 2 + count) fail(std::string(field) + " is truncated (length)");
    if (data_[pos_ + 2] == 0) fail(std::string(field) + ": non-minimal length (leading zero)");
    length = 0;
    for (std::size_t i = 0; i < count; ++i) length = (length << 8) | data_[pos_ + 2 + i];
    if (length < 0x80) fail(std::string(field) + ": non-minimal length (long form below 128)");
    header += count;
  }
  if (length > remaining - header) {
    fail(std::string(field) + " is truncated" +
         (secret_ ? std::string()
                  : ": " + std::to_string(length) + " bytes announced, " +
                        std::to_string(remaining - header) + " present"));
  }
  const ByteView value = data_.subspan(pos_ + header, length);
  pos_ += header + length;
  return value;
}

void Reader::expect_end(const char* after) const {
  if (!at_end()) {
    fail((secret_ ? std::string("bytes") : std::to_string(data_.size() - pos_) + " bytes") +
         " after " + after);
  }
}

void Reader::fail(const std::string& why) const {
  throw Error(ErrorCode::invalid_encoding, "malformed " + what_ + ": " + why);
}

std::string oid_to_text(ByteView contents) {
  // X.690 section 8.19: base-128 sub-identifiers, the first one packing the first two arcs.
  constexpr const char* kMalformed = "(malformed OID)";
  if (contents.empty() || contents.size() > 64) return kMalformed;
  std::string text;
  std::uint64_t value = 0;
  bool first = true;
  for (std::size_t i = 0; i < contents.size(); ++i) {
    const std::uint8_t b = contents[i];
    if (value == 0 && b == 0x80) return kMalformed;  // non-minimal sub-identifier
    if (value >> 56 != 0) return kMalformed;         // would overflow
    value = (value << 7) | (b & 0x7f);
    if (b & 0x80) {
      if (i + 1 == contents.size()) return kMalformed;  // last octet must end a sub-identifier
      continue;
    }
    if (first) {
      const std::uint64_t arc0 = value < 40 ? 0 : value < 80 ? 1 : 2;
      text += std::to_string(arc0);
      text += '.';
      text += std::to_string(value - 40 * arc0);
      first = false;
    } else {
      text += '.';
      text += std::to_string(value);
    }
    value = 0;
  }
  return text;
}

}  // namespace pqot::crypto::der
