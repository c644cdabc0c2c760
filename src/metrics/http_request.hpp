// The request head of the metrics endpoint's HTTP/1.1 (RFC 9112), parsed without any I/O so that
// it can be fuzzed (tests/fuzz/metrics_http.cpp): where the head ends, the request line, and the
// path of the target. Internal to the library.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace pqot::metrics::http {

struct Request {
  std::string_view method;  ///< RFC 9110 token characters only
  std::string_view target;  ///< visible ASCII only (0x21..0x7e)
};

/// The index of the line feed that ends the head's last line, or npos while the blank line has not
/// arrived. Lines end in CRLF or, leniently, LF.
std::size_t find_head_end(std::string_view data);
/// The request line and a sanity check of the header lines; nullopt means 400. Method and target
/// are checked character by character, so they are safe to log.
std::optional<Request> parse_request(std::string_view head);
/// The path of an origin-form ("/metrics?x=1") or absolute-form ("http://h:9/metrics") target,
/// without the query; empty for other forms.
std::string_view target_path(std::string_view target);

}  // namespace pqot::metrics::http
