// Fuzzes TRIP's receive path (docs/trip.md §2.1): a datagram from the network is parsed, opened
// under a session's receiving keys and filtered. A parsed header must write back to the same 12
// bytes; nothing the fuzzer makes opens under the session key (it cannot forge a tag), and what
// the sender seals from fuzzed header fields and payload opens to the same payload.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <stdexcept>

#include "pqot/trip/datagram.hpp"
#include "pqot/trip/filter.hpp"
#include "pqot/trip/session_keys.hpp"

namespace {

pqot::channel::Key fuzz_key() {
  pqot::channel::Key k;
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(0x5a ^ i);
  return k;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pqot::trip;
  if (size == 0) return 0;
  static const pqot::channel::Key key = fuzz_key();
  const auto now = Clock::now();
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  if (data[0] & 1) {
    // The receive path on hostile bytes.
    const auto h = parse_header(input);
    if (!h) return 0;
    std::array<std::uint8_t, kHeaderSize> again{};
    write_header(*h, again);
    if (!std::equal(again.begin(), again.end(), input.begin())) std::abort();
    ReceiveKeys rx(key);
    pqot::crypto::Bytes out(input.size() - kOverhead);
    if (rx.open(*h, input, out, now)) std::abort();  // a forgery opened
    if (h->type == DatagramType::keepalive && !decode_keepalive(out)) std::abort();
    return 0;
  }
  // The send path on fuzzed fields, then the receive path on what it made, then the filter.
  if (input.size() < 11) return 0;
  Header h;
  h.type = (input[0] & 1) ? DatagramType::keepalive : DatagramType::data;
  h.epoch_low = 0;
  h.session = input[1];
  h.flow = h.type == DatagramType::keepalive ? 0 : static_cast<std::uint16_t>(1 + ((input[2] << 8 | input[3]) % 65535));
  h.counter = 0;
  for (int i = 0; i < 7; ++i) h.counter = (h.counter << 8) | input[4 + i];
  const auto payload = h.type == DatagramType::keepalive ? input.subspan(0, std::min<std::size_t>(input.size(), kKeepaliveBodySize))
                                                         : input.subspan(11);
  if (h.type == DatagramType::keepalive && payload.size() != kKeepaliveBodySize) return 0;
  SendKeys tx(key, {}, now);
  const auto use = tx.next(now);
  const pqot::crypto::Bytes dg = seal_datagram(use.aead, h, payload);
  const auto parsed = parse_header(dg);
  if (!parsed || !(*parsed == h)) std::abort();
  ReceiveKeys rx(key);
  pqot::crypto::Bytes out(payload.size());
  if (!rx.open(*parsed, dg, out, now) || !std::equal(out.begin(), out.end(), payload.begin())) std::abort();
  FlowFilter filter(std::chrono::seconds(10), std::chrono::milliseconds(0));
  filter.start_boot(1, now);
  if (!delivers(filter.accept(1, h.counter, now)) || delivers(filter.accept(1, h.counter, now))) std::abort();
  return 0;
}
