// libFuzzer target: SRMCP compact bodies (docs/srmcp.md §9.2) on untrusted bytes. The first byte
// picks the decoder: the server's READ and WRITE request decoders (what decodes is then run
// through the node store, and the compact response it writes must decode again, one entry per
// id), or the client's READ response, WRITE response and NOTIFICATION decoders. Every failure must
// be a ProtocolError asking for a reply.
#include <cstdint>
#include <cstdlib>

#include "pqot/srmcp/compact.hpp"
#include "pqot/srmcp/node.hpp"
#include "srmcp_fuzz_store.hpp"

using namespace pqot::srmcp;

namespace {
using fuzz::store;

const std::vector<std::string> kIds{"f.d", "f.i", "x"};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const ByteView body(data + 1, size - 1);
  Limits limits;
  limits.max_nodes_per_request = 64;
  const Principal who{"fuzzer", {"operator"}};
  const auto never = [](std::string) { std::abort(); };  // memory nodes answer at once
  try {
    switch (data[0] % 5) {
      case 0: {
        const auto r = compact::decode_read_request(body, limits, 1);
        if (r.ids.empty() || r.ids.size() > limits.max_nodes_per_request) std::abort();
        std::string out;
        if (!store().read_body(r.ids, who, BodyEncoding::compact, out, never)) std::abort();
        if (compact::decode_read_response(pqot::crypto::as_bytes(out), r.ids, limits).size() != r.ids.size()) {
          std::abort();
        }
        break;
      }
      case 1: {
        const auto r = compact::decode_write_request(body, limits, 1);
        if (r.values.empty() || r.values.size() > limits.max_nodes_per_request) std::abort();
        std::vector<std::string> ids;
        for (const auto& v : r.values) ids.push_back(v.first);
        std::string out;
        if (!store().write_body(r.values, who, BodyEncoding::compact, out, never)) std::abort();
        if (compact::decode_write_response(pqot::crypto::as_bytes(out), ids, limits).size() != ids.size()) {
          std::abort();
        }
        break;
      }
      case 2: (void)compact::decode_read_response(body, kIds, limits); break;
      case 3: (void)compact::decode_write_response(body, kIds, limits); break;
      default: (void)compact::decode_notification(body, limits); break;
    }
  } catch (const ProtocolError& e) {
    if (e.action() != Action::reply) std::abort();
  }
  return 0;
}
