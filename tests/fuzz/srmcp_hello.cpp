// libFuzzer target: SRMCP v2 handshake and link bodies (docs/srmcp.md §4, §7): CLIENT_HELLO,
// SERVER_HELLO, HELLO_RETRY, HELLO_REFUSED and LINK_BIND parsers on untrusted bytes; re-encoding what parsed must
// give the same bytes back.
#include <cstdint>
#include <cstdlib>

#include "pqot/srmcp/wire.hpp"

using namespace pqot::srmcp;

namespace {
template <class Parse, class Encode>
void round_trip(ByteView body, Parse&& parse, Encode&& encode) {
  try {
    const auto parsed = parse(body);
    const Bytes again = encode(parsed);
    if (again.size() != body.size() || !std::equal(again.begin(), again.end(), body.begin())) std::abort();
  } catch (const ProtocolError& e) {
    if (e.action() != Action::close) std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const ByteView body(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0: round_trip(body, parse_client_hello, [](const ClientHello& h) { return encode(h); }); break;
    case 1: round_trip(body, parse_server_hello, [](const ServerHello& h) { return encode(h); }); break;
    case 2: round_trip(body, parse_hello_retry, encode_hello_retry); break;
    case 3: round_trip(body, parse_link_bind, [](const LinkBind& b) { return encode(b); }); break;
    default: round_trip(body, parse_hello_refused, [](const HelloRefused& r) { return encode(r); }); break;
  }
  return 0;
}
