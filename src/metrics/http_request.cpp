#include "http_request.hpp"

#include <algorithm>

namespace pqot::metrics::http {

namespace {

bool is_alpha_(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// tchar of RFC 9110 §5.6.2.
bool is_tchar(char c) {
  return is_alpha_(c) || is_digit(c) ||
         std::string_view("!#$%&'*+-.^`|~").find(c) != std::string_view::npos;
}

std::string_view strip_cr(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

}  // namespace

// The end of the request head: the index of the line feed that ends its last line, or npos while
// the blank line has not arrived. Lines end in CRLF or, leniently, LF (RFC 9112 §2.2).
std::size_t find_head_end(std::string_view data) {
  for (std::size_t i = data.find('\n'); i != std::string_view::npos; i = data.find('\n', i + 1)) {
    const std::string_view rest = data.substr(i + 1);
    if (rest.starts_with("\n") || rest.starts_with("\r\n")) return i;
  }
  return std::string_view::npos;
}

// The request line (RFC 9112 §3) and a sanity check of the header lines; nullopt means 400.
// Method and target are checked character by character, so they are safe to log.
std::optional<Request> parse_request(std::string_view head) {
  const std::size_t eol = head.find('\n');
  const std::string_view line = strip_cr(head.substr(0, eol));
  const std::size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return std::nullopt;
  const std::size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return std::nullopt;
  Request r{line.substr(0, sp1), line.substr(sp1 + 1, sp2 - sp1 - 1)};
  const std::string_view version = line.substr(sp2 + 1);
  if (r.method.empty() || !std::all_of(r.method.begin(), r.method.end(), is_tchar))
    return std::nullopt;
  if (r.target.empty() ||
      !std::all_of(r.target.begin(), r.target.end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
    return std::nullopt;
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") return std::nullopt;
  // Header fields are ignored, but each must look like "name: value" (RFC 9112 §5).
  std::size_t pos = eol;
  while (pos != std::string_view::npos) {
    const std::size_t next = head.find('\n', pos + 1);
    const std::string_view field =
        strip_cr(head.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1));
    const std::size_t colon = field.find(':');
    if (colon == 0 || colon == std::string_view::npos ||
        !std::all_of(field.begin(), field.begin() + static_cast<std::ptrdiff_t>(colon), is_tchar)) {
      return std::nullopt;
    }
    pos = next;
  }
  return r;
}

// The path of an origin-form ("/metrics?x=1") or absolute-form ("http://h:9/metrics") target,
// without the query; empty for other forms.
std::string_view target_path(std::string_view target) {
  if (!target.starts_with('/')) {
    const std::size_t scheme_end = target.find("://");
    if (scheme_end == std::string_view::npos) return {};
    const std::size_t slash = target.find('/', scheme_end + 3);
    if (slash == std::string_view::npos) return "/";
    target = target.substr(slash);
  }
  return target.substr(0, target.find_first_of("?#"));
}

}  // namespace pqot::metrics::http
