// DER written by hand for tests (tag, minimal length, value), so that decoders see inputs no
// library would produce: an independent writer, not the one under test.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "pqot/crypto/bytes.hpp"

namespace pqot::test {

/// tag || definite minimal length (up to 0xffff) || content.
inline crypto::Bytes tlv(std::uint8_t tag, const crypto::Bytes& content) {
  const std::size_t n = content.size();
  crypto::Bytes out;
  out.reserve(n + 4);  // (and keeps GCC 12's -Warray-bounds quiet about the insert below)
  out.push_back(tag);
  if (n >= 0x100) {
    out.push_back(0x82);
    out.push_back(static_cast<std::uint8_t>(n >> 8));
  } else if (n >= 0x80) {
    out.push_back(0x81);
  }
  out.push_back(static_cast<std::uint8_t>(n));
  out.insert(out.end(), content.begin(), content.end());
  return out;
}

inline crypto::Bytes cat(std::initializer_list<crypto::Bytes> parts) {
  crypto::Bytes out;
  for (const crypto::Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline crypto::Bytes cat(crypto::Bytes a, const crypto::Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace pqot::test
