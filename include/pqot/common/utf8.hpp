// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing above U+10FFFF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace pqot::common {

/// One character of UTF-8 text: its length in bytes (0: no valid sequence starts here) and its code point.
struct Utf8Char {
  std::size_t len = 0;
  std::uint32_t cp = 0;
};

/// The character starting at text[i] (i < text.size()).
inline Utf8Char utf8_char_at(std::string_view text, std::size_t i) noexcept {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x80) return {1, c};
  const std::size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (len == 0 || len > text.size() - i) return {};
  std::uint32_t cp = len == 2 ? c & 0x1Fu : len == 3 ? c & 0x0Fu : c & 0x07u;
  for (std::size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(text[i + k]);
    if ((cc & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (cc & 0x3Fu);
  }
  if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return {};
  if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return {};
  return {len, cp};
}

/// Whether all of `text` is valid UTF-8.
inline bool valid_utf8(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const Utf8Char ch = utf8_char_at(text, i);
    if (ch.len == 0) return false;
    i += ch.len;
  }
  return true;
}

}  // namespace pqot::common
