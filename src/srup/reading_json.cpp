// A telemetry reading as JSON (reading_json.hpp).
#include "pqot/srup/reading_json.hpp"

#include <cmath>
#include <cstdio>

#include "pqot/srup/meter_channels.hpp"

namespace pqot::srup {

namespace {

void append_escaped(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
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
