// The one HOST:PORT parser (command lines and configuration files): "HOST:PORT" or "[IPV6]:PORT".
// Strict: HOST is not empty and has no ':' unless bracketed; PORT is 1-5 decimal digits and
// nothing else, so "h:12x" or "h:" is an error rather than port 12 or 0.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pqot::common {

struct HostPort {
  std::string host;  ///< without the brackets of an IPv6 literal
  std::uint16_t port = 0;
  bool operator==(const HostPort&) const = default;
};

/// nullopt unless `text` is HOST:PORT or [IPV6]:PORT with PORT in 1..65535 (0..65535 if
/// `allow_port_zero`, "any free port").
inline std::optional<HostPort> parse_host_port(std::string_view text, bool allow_port_zero = false) {
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') return std::nullopt;
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.find(':');
    if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.size() > 5) return std::nullopt;
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc{} || end != port.data() + port.size() || value > 65535) return std::nullopt;
  if (value == 0 && !allow_port_zero) return std::nullopt;
  return HostPort{std::string(host), static_cast<std::uint16_t>(value)};
}

}  // namespace pqot::common
