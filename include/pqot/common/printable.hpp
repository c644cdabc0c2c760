// Text that came from a peer, made safe to put in a log line or an error message: printable ASCII
// is kept, every other byte becomes \xNN (so invalid UTF-8, control characters and newlines can
// neither break the JSON of an error body nor forge log lines), and the result is cut at `max`
// characters with "...". terminal_text() keeps valid UTF-8 and escapes only what a terminal would
// obey (for displays of peer data, e.g. srup monitor).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pqot/common/utf8.hpp"

namespace pqot::common {

inline std::string printable(std::string_view text, std::size_t max = 256) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size(), max) + 8);
  for (const char ch : text) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += ch;
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

/// Peer text made safe for a terminal or a spreadsheet while staying readable: valid UTF-8 is kept
/// ("230 V", "Zähler"), but a backslash becomes "\\", the C0 controls, DEL and every byte that is
/// not part of valid UTF-8 "\xNN", and the characters a terminal obeys or that reorder what is
/// shown "\uXXXX": the C1 controls U+0080..U+009F (some terminals take U+009B as the start of an
/// escape sequence) and the bidirectional formatting characters U+061C, U+200E, U+200F,
/// U+202A..U+202E, U+2066..U+2069. Nothing is cut.
inline std::string terminal_text(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 8);
  const auto escape_byte = [&](unsigned char c) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c == '\\') out += "\\\\";
      else if (c < 0x20 || c == 0x7f) escape_byte(c);
      else out += static_cast<char>(c);
      ++i;
      continue;
    }
    const Utf8Char ch = utf8_char_at(text, i);
    if (ch.len == 0) {
      escape_byte(c);
      ++i;
      continue;
    }
    const std::uint32_t cp = ch.cp;
    const std::size_t len = ch.len;
    const bool hidden = (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
                        (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
    if (hidden) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 15];
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace pqot::common
