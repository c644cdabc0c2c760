// The envelope header the `srup` benchmarks seal with (bench, bench-payload): now as the time,
// five minutes' lifetime, the suite and sender of `from`, the topic's tag. Benchmarks only; the
// programs build theirs from their configuration (pqot::srup::Endpoint).
#pragma once

#include <cstdint>
#include <string_view>

#include "pqot/common/clock.hpp"
#include "pqot/srup/envelope.hpp"
#include "pqot/srup/identity.hpp"

namespace pqot::srup_tool {

inline srup::Header bench_header(srup::MessageType type, srup::Mode mode, const srup::Identity& from,
                                 std::uint64_t to, std::uint64_t seq, std::string_view topic) {
  srup::Header h;
  h.type = type;
  h.mode = mode;
  h.suite = from.suite;
  h.sender = from.id;
  h.recipient = to;
  h.sequence = seq;
  h.timestamp_ms = common::unix_time_ms();
  h.lifetime_ms = 300'000;
  h.topic = srup::topic_tag(topic);
  return h;
}

}  // namespace pqot::srup_tool
