// libFuzzer target: the request head of the metrics endpoint (src/metrics/http_request.hpp,
// docs/metrics.md "Limits"): where the head ends, the request line and header fields, the target's
// path. Whatever comes in, what is accepted as method and target is printable and lies inside the
// input, so it is safe to log and to compare.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http_request.hpp"

using namespace pqot::metrics;

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
bool inside(std::string_view part, std::string_view whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t end = http::find_head_end(input);
  const std::string_view head = end == std::string_view::npos ? input : input.substr(0, end + 1);
  check(end == std::string_view::npos || end < input.size());
  const auto request = http::parse_request(head);
  if (!request) return 0;
  check(!request->method.empty() && !request->target.empty());
  check(inside(request->method, head) && inside(request->target, head));
  for (const char c : request->method) check(c > 0x20 && c < 0x7f);
  for (const char c : request->target) check(c > 0x20 && c < 0x7f);
  const std::string_view path = http::target_path(request->target);
  check(path == "/" || inside(path, request->target));  // ("/" for an absolute form without a path)
  check(path.empty() || path.front() == '/');
  check(path.find_first_of("?#") == std::string_view::npos);
  return 0;
}
