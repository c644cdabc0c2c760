// srup-device: the small HTTP/1.1 client that fetches update files (docs/srup-device.md,
// "Updates"). One GET per connection ("Connection: close") over plain TCP on Asio, with deadlines
// for connecting and for each read, a bound on the whole transfer, a size bound checked against
// Content-Length and while streaming, chunked transfer coding, and at most 3 redirects, by default
// only on the same server (update.redirects). Blocking: the update fetcher runs it on its own
// thread. Internal to srup-device.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>

#include "pqot/crypto/bytes.hpp"
#include "srup-device/config.hpp"

namespace pqot::srup_device {

/// Longest response head (status line and headers) accepted.
inline constexpr std::size_t kMaxHttpHead = 16 * 1024;
/// Most redirects followed.
inline constexpr int kMaxHttpRedirects = 3;

struct HttpUrl {
  std::string host;  ///< a name, an IPv4 address, or an IPv6 address without brackets
  std::uint16_t port = 80;
  std::string target;  ///< path and query, starting with '/'
};

/// "http://HOST[:PORT][/PATH]" (no user info, no fragment, printable ASCII only), or a message.
std::variant<HttpUrl, std::string> parse_http_url(std::string_view url);

struct HttpLimits {
  std::uint32_t io_timeout_ms = 10'000;    ///< connect, and every read or write
  std::uint32_t total_timeout_ms = 300'000;  ///< the whole transfer, redirects included
  std::uint64_t max_bytes = 64ull << 20;    ///< body
  UpdateRedirects redirects = UpdateRedirects::same_origin;  ///< which redirects are followed
};

/// Whether `ip` (an IPv4 or IPv6 address as text) is a public unicast address: not unspecified,
/// loopback, private (RFC 1918, RFC 6598, IPv6 unique local), link-local, multicast, reserved or
/// for documentation; IPv4-mapped and NAT64 (64:ff9b::/96) IPv6 addresses as their IPv4 address;
/// other IPv6 addresses only in 2000::/3, without 2001:db8::/32 and 6to4 (2002::/16). False
/// for text that is no address.
bool is_public_address(const std::string& ip);

/// How a GET ended; maps to the update statuses of docs/srup-pq.md 2.5.
enum class HttpFailure {
  none,
  http,    ///< 0xFC: a status other than 200, a malformed response, a refused redirect or coding
  server,  ///< 0xFD: name not resolved, connection refused or reset, a deadline passed
  size,    ///< 0xFE: the body exceeds max_bytes (announced or streamed)
  sink,    ///< 0xFE: the sink refused the data (could not write the file)
};

struct HttpResult {
  HttpFailure failure = HttpFailure::none;
  std::string detail;
  std::uint64_t bytes = 0;  ///< body bytes given to the sink
};

/// GETs `url` and passes the body to `sink` in pieces (false from the sink stops with `sink`).
/// `cancel` stops it within about 100 ms (failure `server`, "cancelled").
HttpResult http_get(const std::string& url, const HttpLimits& limits,
                    const std::function<bool(crypto::ByteView)>& sink, const std::atomic<bool>& cancel);

}  // namespace pqot::srup_device
