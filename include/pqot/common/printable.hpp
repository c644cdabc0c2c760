// Text that came from a peer, made safe to put in a log line or an error message: printable ASCII
// is kept, every other byte becomes \xNN (so invalid UTF-8, control characters and newlines can
// neither break the JSON of an error body nor forge log lines), and the result is cut at `max`
// characters with "...".
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

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

}  // namespace pqot::common
