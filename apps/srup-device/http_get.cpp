// srup-device: the update fetcher's HTTP/1.1 client (docs/srup-device.md, "Updates").
// Deadlines follow Asio's blocking_tcp_client example: each operation is started asynchronously
// and the private io_context runs until it completes or its deadline passes; then the socket is
// closed, which completes the operation with an error.
#include "http_get.hpp"

#include <algorithm>
#include <array>
#include <asio.hpp>
#include <charconv>
#include <chrono>
#include <optional>

namespace pqot::srup_device {
namespace {

using HttpClock = std::chrono::steady_clock;
using asio::ip::tcp;

/// Ends a GET with this failure (internal: caught in http_get).
struct HttpStop {
  HttpFailure failure;
  std::string detail;
};

[[noreturn]] void http_stop(HttpFailure f, std::string detail) { throw HttpStop{f, std::move(detail)}; }

bool http_printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

std::string http_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string_view http_trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A peer's text made safe for a detail string: printable ASCII, at most 64 bytes.
std::string http_quote(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return out;
}

/// One connection: every operation bounded by the I/O deadline and the total deadline.
class HttpConnection {
 public:
  HttpConnection(const HttpLimits& limits, HttpClock::time_point total_deadline, const std::atomic<bool>& cancel)
      : limits_(limits), total_deadline_(total_deadline), cancel_(cancel) {}

  /// With `require_public` (a redirect to another server, update.redirects = "public") every
  /// address the name resolves to must be public, else the GET stops before connecting.
  void connect(const HttpUrl& url, bool require_public) {
    tcp::resolver resolver(io_);
    tcp::resolver::results_type endpoints;
    asio::error_code ec;
    bool done = false;
    resolver.async_resolve(url.host, std::to_string(url.port), [&](const asio::error_code& e, tcp::resolver::results_type r) {
      ec = e;
      endpoints = std::move(r);
      done = true;
    });
    if (!run(done, [&] { resolver.cancel(); }))
      http_stop(HttpFailure::server, "resolving " + http_quote(url.host) + ": " + why_);
    if (ec) http_stop(HttpFailure::server, "cannot resolve " + http_quote(url.host) + ": " + ec.message());
    if (require_public) {
      for (const auto& entry : endpoints) {
        const std::string ip = entry.endpoint().address().to_string();
        if (!is_public_address(ip))
          http_stop(HttpFailure::http, "redirect to " + http_quote(url.host) + " refused: it resolves to " + ip +
                                           ", not a public address");
      }
    }
    done = false;
    asio::async_connect(socket_, endpoints, [&](const asio::error_code& e, const tcp::endpoint&) {
      ec = e;
      done = true;
    });
    if (!run(done, [&] { close(); })) http_stop(HttpFailure::server, "connecting to " + http_quote(url.host) + ": " + why_);
    if (ec) http_stop(HttpFailure::server, "cannot connect to " + http_quote(url.host) + ": " + ec.message());
  }

  void write(const std::string& bytes) {
    asio::error_code ec;
    bool done = false;
    asio::async_write(socket_, asio::buffer(bytes), [&](const asio::error_code& e, std::size_t) {
      ec = e;
      done = true;
    });
    if (!run(done, [&] { close(); })) http_stop(HttpFailure::server, "sending the request: " + why_);
    if (ec) http_stop(HttpFailure::server, "sending the request: " + ec.message());
  }

  /// Appends what arrives next to `buf`; false at end of stream.
  bool read_more(std::string& buf) {
    char chunk[16384];
    asio::error_code ec;
    std::size_t n = 0;
    bool done = false;
    socket_.async_read_some(asio::buffer(chunk), [&](const asio::error_code& e, std::size_t got) {
      ec = e;
      n = got;
      done = true;
    });
    if (!run(done, [&] { close(); })) http_stop(HttpFailure::server, "reading the response: " + why_);
    buf.append(chunk, n);
    if (ec == asio::error::eof) return n > 0;
    if (ec) http_stop(HttpFailure::server, "reading the response: " + ec.message());
    return true;
  }

  void close() {
    asio::error_code ignored;
    socket_.close(ignored);
  }

 private:
  /// Runs until `done`; on a deadline or cancellation calls `abort` (which makes the operation
  /// complete), lets it finish, sets why_ and returns false.
  template <class Abort>
  bool run(bool& done, Abort abort) {
    const auto deadline = std::min(total_deadline_, HttpClock::now() + std::chrono::milliseconds(limits_.io_timeout_ms));
    io_.restart();
    while (!done) {
      const auto now = HttpClock::now();
      if (cancel_.load()) {
        why_ = "cancelled";
        break;
      }
      if (now >= deadline) {
        why_ = deadline == total_deadline_
                   ? "the download took longer than " + std::to_string(limits_.total_timeout_ms) + " ms"
                   : "no progress for " + std::to_string(limits_.io_timeout_ms) + " ms";
        break;
      }
      io_.run_for(std::min<HttpClock::duration>(deadline - now, std::chrono::milliseconds(100)));
      if (io_.stopped() && !done) io_.restart();
    }
    if (done) return true;
    abort();
    io_.restart();
    io_.run();
    return false;
  }

  const HttpLimits& limits_;
  HttpClock::time_point total_deadline_;
  const std::atomic<bool>& cancel_;
  asio::io_context io_;
  tcp::socket socket_{io_};
  std::string why_;
};

/// Same scheme (always http), host (names compared case-insensitively) and port.
bool http_same_origin(const HttpUrl& a, const HttpUrl& b) { return http_lower(a.host) == http_lower(b.host) && a.port == b.port; }

/// `address` in the network of `prefix` (its first bytes, network order) and `bits`.
template <std::size_t N>
bool http_in_prefix(const std::array<unsigned char, N>& address, const unsigned* prefix, std::size_t bytes,
                    unsigned bits) {
  for (std::size_t i = 0; i < bytes && i < N && 8 * i < bits; ++i) {
    const unsigned take = std::min<unsigned>(8, bits - static_cast<unsigned>(8 * i));
    const unsigned mask = (0xFFu << (8 - take)) & 0xFFu;
    if ((address[i] & mask) != (prefix[i] & mask)) return false;
  }
  return true;
}

template <std::size_t N>
bool http_in_prefix(const std::array<unsigned char, N>& address, std::initializer_list<unsigned> prefix, unsigned bits) {
  return http_in_prefix(address, prefix.begin(), prefix.size(), bits);
}

bool http_public_v4(const asio::ip::address_v4::bytes_type& a) {
  struct Range {
    std::array<unsigned, 3> prefix;
    unsigned bits;
  };
  // RFC 6890's special-purpose registry, in short: none of these is somebody's public server.
  static const Range kNotPublic[] = {
      {{0}, 8},              // "this network" (0.0.0.0 reaches the local host on Linux)
      {{10}, 8},             // private (RFC 1918)
      {{100, 64}, 10},       // shared address space (carrier-grade NAT, RFC 6598)
      {{127}, 8},            // loopback
      {{169, 254}, 16},      // link-local (cloud metadata services live here)
      {{172, 16}, 12},       // private
      {{192, 0, 0}, 24},     // IETF protocol assignments
      {{192, 0, 2}, 24},     // documentation
      {{192, 168}, 16},      // private
      {{198, 18}, 15},       // benchmarking
      {{198, 51, 100}, 24},  // documentation
      {{203, 0, 113}, 24},   // documentation
      {{224}, 4},            // multicast
      {{240}, 4},            // reserved, and the broadcast address
  };
  for (const Range& r : kNotPublic)
    if (http_in_prefix(a, r.prefix.data(), r.prefix.size(), r.bits)) return false;
  return true;
}

struct HttpHead {
  int status = 0;
  std::string reason;
  std::optional<std::uint64_t> content_length;
  bool chunked = false;
  std::string location;
};

HttpHead parse_head(std::string_view head) {
  HttpHead h;
  auto line_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, line_end);
  // "HTTP/1.1 200 OK" (HTTP/1.0 too: a plain server may answer so).
  if (status_line.size() < 12 || (status_line.substr(0, 9) != "HTTP/1.1 " && status_line.substr(0, 9) != "HTTP/1.0 ") ||
      (status_line.size() > 12 && status_line[12] != ' '))
    http_stop(HttpFailure::http, "not an HTTP/1.x status line: " + http_quote(status_line));
  const auto code = status_line.substr(9, 3);
  if (!std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }) || code[0] < '1' || code[0] > '5')
    http_stop(HttpFailure::http, "bad status code: " + http_quote(status_line));
  h.status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
  h.reason = http_quote(http_trim(status_line.substr(std::min<std::size_t>(12, status_line.size()))));
  bool has_te = false;
  for (std::size_t at = line_end + 2; at < head.size();) {
    const auto end = head.find("\r\n", at);
    const std::string_view line = head.substr(at, end - at);
    at = end + 2;
    if (line.empty()) break;
    if (line[0] == ' ' || line[0] == '\t') http_stop(HttpFailure::http, "folded header line (obsolete, refused)");
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0 || !http_printable(line.substr(0, colon)))
      http_stop(HttpFailure::http, "malformed header line: " + http_quote(line));
    const std::string name = http_lower(line.substr(0, colon));
    const std::string_view value = http_trim(line.substr(colon + 1));
    if (name == "content-length") {
      std::uint64_t v = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc{} || p != value.data() + value.size() || value.empty() || value[0] == '+' || value[0] == '-')
        http_stop(HttpFailure::http, "bad Content-Length: " + http_quote(value));
      if (h.content_length && *h.content_length != v) http_stop(HttpFailure::http, "two different Content-Length headers");
      h.content_length = v;
    } else if (name == "transfer-encoding") {
      if (has_te || http_lower(value) != "chunked")
        http_stop(HttpFailure::http, "transfer coding " + http_quote(value) + " is not supported (only chunked)");
      has_te = true;
      h.chunked = true;
    } else if (name == "location") {
      h.location = std::string(value);
    }
  }
  if (h.chunked && h.content_length)
    http_stop(HttpFailure::http, "both Transfer-Encoding and Content-Length (refused: ambiguous framing)");
  return h;
}

/// The body of one response, from `buf` (what followed the head) and the connection.
class BodyReader {
 public:
  BodyReader(HttpConnection& conn, std::string buf, const HttpLimits& limits,
             const std::function<bool(crypto::ByteView)>& sink)
      : conn_(conn), buf_(std::move(buf)), limits_(limits), sink_(sink) {}

  std::uint64_t bytes() const { return bytes_; }

  void with_length(std::uint64_t length) {
    if (length > limits_.max_bytes)
      http_stop(HttpFailure::size, "Content-Length " + std::to_string(length) + " exceeds the limit of " +
                                       std::to_string(limits_.max_bytes) + " bytes");
    while (bytes_ < length) {
      if (buf_.empty() && !conn_.read_more(buf_))
        http_stop(HttpFailure::server, "connection closed after " + std::to_string(bytes_) + " of " +
                                           std::to_string(length) + " bytes");
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size(), length - bytes_));
      deliver(std::string_view(buf_).substr(0, n));
      buf_.erase(0, n);
    }
    // Bytes beyond Content-Length are not part of the body ("Connection: close"): ignored.
  }

  void to_end() {
    for (;;) {
      if (!buf_.empty()) {
        deliver(buf_);
        buf_.clear();
      }
      if (!conn_.read_more(buf_)) return;
    }
  }

  void chunked() {
    for (;;) {
      const std::string line = read_line("chunk size line");
      const std::string_view digits = http_trim(std::string_view(line).substr(0, line.find(';')));
      std::uint64_t size = 0;
      const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
      if (digits.empty() || digits.size() > 15 || ec != std::errc{} || p != digits.data() + digits.size())
        http_stop(HttpFailure::http, "bad chunk size: " + http_quote(line));
      if (size == 0) break;
      if (size > limits_.max_bytes - bytes_) http_stop(HttpFailure::size, too_big());
      while (size > 0) {
        if (buf_.empty() && !conn_.read_more(buf_)) http_stop(HttpFailure::server, "connection closed inside a chunk");
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size(), size));
        deliver(std::string_view(buf_).substr(0, n));
        buf_.erase(0, n);
        size -= n;
      }
      if (!read_line("chunk end").empty()) http_stop(HttpFailure::http, "chunk data longer than its size");
    }
    // Trailer fields, up to the empty line: read and ignored, bounded like the head.
    std::size_t trailer = 0;
    for (;;) {
      const std::string line = read_line("trailer");
      if (line.empty()) return;
      trailer += line.size() + 2;
      if (trailer > kMaxHttpHead) http_stop(HttpFailure::http, "trailer over 16 KiB");
    }
  }

 private:
  std::string too_big() const {
    return "body exceeds the limit of " + std::to_string(limits_.max_bytes) + " bytes";
  }

  void deliver(std::string_view data) {
    if (data.size() > limits_.max_bytes - bytes_) http_stop(HttpFailure::size, too_big());
    if (!sink_(crypto::as_bytes(data))) http_stop(HttpFailure::sink, "cannot store the file");
    bytes_ += data.size();
  }

  /// One CRLF-terminated line of the chunked coding (at most 1 KiB), without the CRLF.
  std::string read_line(const char* what) {
    for (;;) {
      const auto end = buf_.find("\r\n");
      if (end != std::string::npos) {
        std::string line = buf_.substr(0, end);
        buf_.erase(0, end + 2);
        return line;
      }
      if (buf_.size() > 1024) http_stop(HttpFailure::http, std::string(what) + " over 1 KiB");
      if (!conn_.read_more(buf_)) http_stop(HttpFailure::server, std::string("connection closed in a ") + what);
    }
  }

  HttpConnection& conn_;
  std::string buf_;
  const HttpLimits& limits_;
  const std::function<bool(crypto::ByteView)>& sink_;
  std::uint64_t bytes_ = 0;
};

}  // namespace

bool is_public_address(const std::string& ip) {
  asio::error_code ec;
  const asio::ip::address address = asio::ip::make_address(ip, ec);
  if (ec) return false;
  if (address.is_v4()) return http_public_v4(address.to_v4().to_bytes());
  const auto a = address.to_v6().to_bytes();
  if (http_in_prefix(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96) ||  // IPv4-mapped
      http_in_prefix(a, {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}, 96)) {  // NAT64
    return http_public_v4({a[12], a[13], a[14], a[15]});
  }
  return http_in_prefix(a, {0x20}, 3) && !http_in_prefix(a, {0x20, 0x01, 0x0d, 0xb8}, 32) &&
         !http_in_prefix(a, {0x20, 0x02}, 16);
}

std::variant<HttpUrl, std::string> parse_http_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (url.size() > 2048) return std::string("URL over 2,048 bytes");
  if (url.substr(0, scheme.size()) != scheme) return std::string("not an http:// URL");
  if (!http_printable(url)) return std::string("URL holds a space or a byte outside printable ASCII");
  std::string_view rest = url.substr(scheme.size());
  const auto slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  HttpUrl u;
  u.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (u.target[0] == '?') u.target.insert(0, "/");
  if (u.target.find('#') != std::string::npos) return std::string("URL has a fragment");
  if (authority.find('@') != std::string_view::npos) return std::string("URL has user information (refused)");
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::string("URL has an unclosed '[' in its host");
    u.host = std::string(authority.substr(1, close - 1));
    const auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return std::string("URL has bytes after its IPv6 host");
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    const auto colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
  }
  if (u.host.empty()) return std::string("URL has no host");
  if (has_port) {
    unsigned p = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), p);
    if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() || p < 1 || p > 65535)
      return std::string("URL has a port outside 1..65535");
    u.port = static_cast<std::uint16_t>(p);
  }
  return u;
}

HttpResult http_get(const std::string& url_text, const HttpLimits& limits,
                    const std::function<bool(crypto::ByteView)>& sink, const std::atomic<bool>& cancel) {
  HttpResult result;
  const auto total_deadline = HttpClock::now() + std::chrono::milliseconds(limits.total_timeout_ms);
  auto parsed = parse_http_url(url_text);
  if (auto* msg = std::get_if<std::string>(&parsed)) return HttpResult{HttpFailure::http, *msg, 0};
  HttpUrl url = std::get<HttpUrl>(parsed);
  const HttpUrl origin = url;  // the server the C2 named
  try {
    for (int redirects = 0;; ++redirects) {
      HttpConnection conn(limits, total_deadline, cancel);
      conn.connect(url, !http_same_origin(url, origin));
      const bool v6 = url.host.find(':') != std::string::npos;
      std::string host_header = v6 ? "[" + url.host + "]" : url.host;
      if (url.port != 80) host_header.append(":").append(std::to_string(url.port));
      std::string request = "GET " + url.target + " HTTP/1.1\r\n";
      request.append("Host: ").append(host_header).append("\r\n");
      request.append("User-Agent: srup-device\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n");
      conn.write(request);
      std::string buf;
      std::size_t head_end = std::string::npos;
      while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
        if (buf.size() > kMaxHttpHead) http_stop(HttpFailure::http, "response head over 16 KiB");
        if (!conn.read_more(buf)) http_stop(HttpFailure::server, "connection closed before the response head");
      }
      if (head_end + 4 > kMaxHttpHead) http_stop(HttpFailure::http, "response head over 16 KiB");
      const HttpHead head = parse_head(std::string_view(buf).substr(0, head_end + 4));
      if (head.status == 301 || head.status == 302 || head.status == 303 || head.status == 307 || head.status == 308) {
        if (limits.redirects == UpdateRedirects::none)
          http_stop(HttpFailure::http, "HTTP " + std::to_string(head.status) + " redirect refused (update.redirects = none)");
        if (redirects == kMaxHttpRedirects) http_stop(HttpFailure::http, "more than 3 redirects");
        if (head.location.empty()) http_stop(HttpFailure::http, "redirect without Location");
        if (head.location[0] == '/' && (head.location.size() < 2 || head.location[1] != '/')) {
          if (!http_printable(head.location) || head.location.size() > 2048)
            http_stop(HttpFailure::http, "bad redirect Location");
          url.target = head.location;
        } else {
          auto next = parse_http_url(head.location);
          if (auto* msg = std::get_if<std::string>(&next))
            http_stop(HttpFailure::http, "redirect to " + http_quote(head.location) + " refused: " + *msg);
          url = std::get<HttpUrl>(next);
        }
        // Another server than the C2 named: only with "public", and then only to public
        // addresses (connect checks them), so a server or anyone on the path cannot send the
        // device to its own loopback, its LAN or a metadata service.
        if (!http_same_origin(url, origin) && limits.redirects != UpdateRedirects::public_hosts)
          http_stop(HttpFailure::http, "redirect to another server refused: " + http_quote(head.location) +
                                           " (update.redirects = same-origin)");
        continue;
      }
      if (head.status != 200) http_stop(HttpFailure::http, "HTTP " + std::to_string(head.status) + " " + head.reason);
      BodyReader body(conn, buf.substr(head_end + 4), limits, sink);
      try {
        if (head.chunked) body.chunked();
        else if (head.content_length) body.with_length(*head.content_length);
        else body.to_end();
      } catch (HttpStop&) {
        result.bytes = body.bytes();
        throw;
      }
      result.bytes = body.bytes();
      return result;
    }
  } catch (const HttpStop& stop) {
    result.failure = stop.failure;
    result.detail = stop.detail;
    return result;
  }
}

}  // namespace pqot::srup_device
