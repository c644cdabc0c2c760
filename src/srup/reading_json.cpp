// A telemetry reading as JSON (reading_json.hpp).
#include "pqot/srup/reading_json.hpp"

#include <cmath>
#include <cstdio>

#include "pqot/srup/meter_channels.hpp"

namespace pqot::srup {

namespace {

void append_escaped(std::string& out, std::string_view s) {
  const auto unicode_escape = [&out](unsigned code) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\u%04x", code);
    out += buf;
  };
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          unicode_escape(u);
        } else if (u == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
          // A C1 control (U+0080..U+009F): valid JSON as it is, but a terminal showing the line
          // may obey it (U+009B starts an escape sequence), so it is escaped like DEL.
          unicode_escape(static_cast<unsigned char>(s[++i]));
        } else {
          out += c;  // valid UTF-8 (the body decoder checked it) passes as it is
        }
    }
  }
  out += '"';
}

}  // namespace

std::string channel_name(std::uint16_t channel) {
  if (const auto known = meter::channel_by_number(channel)) return std::string(known->name);
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%04x", channel);
  return buf;
}

std::string reading_json(const Reading& reading) {
  std::string out = "{\"t\":" + std::to_string(reading.timestamp_ms) + ",\"channels\":{";
  bool first = true;
  for (const ChannelValue& c : reading.channels) {
    if (!first) out += ',';
    first = false;
    append_escaped(out, channel_name(c.channel));
    out += ':';
    std::visit(
        [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, std::monostate>) {
            out += "null";
          } else if constexpr (std::is_same_v<X, bool>) {
            out += x ? "true" : "false";
          } else if constexpr (std::is_floating_point_v<X>) {
            if (std::isfinite(x)) {
              out += to_text(c.value);
            } else {
              append_escaped(out, to_text(c.value));
            }
          } else if constexpr (std::is_arithmetic_v<X>) {
            out += to_text(c.value);
          } else {
            append_escaped(out, to_text(c.value));  // strings; bytes as hex
          }
        },
        c.value);
  }
  out += "}}";
  return out;
}

}  // namespace pqot::srup
