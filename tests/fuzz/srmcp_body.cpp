// libFuzzer target: SRMCP v2 request bodies (docs/srmcp.md §9, §12) as the server handles them:
// JSON with limits, each request schema, then the node store's read, write and browse; and the
// JSON writer (json_text.hpp) round trip.
#include <cstdint>
#include <cstdlib>

#include "pqot/srmcp/json_text.hpp"
#include "pqot/srmcp/node.hpp"
#include "pqot/srmcp/requests.hpp"
#include "srmcp_fuzz_store.hpp"

using namespace pqot::srmcp;
using fuzz::store;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Limits limits;
  limits.max_nodes_per_request = 64;
  const Principal who{"fuzzer", {"operator"}};
  try {
    const Json body = parse_json_body(ByteView(data, size), limits, 1);
    // The fast writer used for every body sent must give text that parses back to the same value.
    if (Json::parse(to_json_text(body)) != body) std::abort();
    if (!body.is_object()) return 0;
    for (int kind = 0; kind < 6; ++kind) {
      try {
        switch (kind) {
          case 0: {
            const auto r = decode_browse(body, 1);
            (void)store().browse(r.root, r.depth, who);
            break;
          }
          case 1: {
            const auto r = decode_read(body, limits, 1);
            if (r.ids.empty() || r.ids.size() > limits.max_nodes_per_request) std::abort();
            if (store().read(r.ids, who)["values"].size() != r.ids.size()) std::abort();
            break;
          }
          case 2: {
            const auto r = decode_write(body, limits, 1);
            if (store().write(r.values, who)["values"].size() != r.values.size()) std::abort();
            break;
          }
          case 3: (void)decode_subscribe(body, limits, 1); break;
          case 4: (void)decode_unsubscribe(body, 1); break;
          default: (void)decode_link_close(body, 1); break;
        }
      } catch (const ProtocolError& e) {
        if (e.action() != Action::reply) std::abort();
      }
    }
  } catch (const ProtocolError& e) {
    if (e.action() != Action::reply) std::abort();
  }
  return 0;
}
