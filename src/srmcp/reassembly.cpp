#include "pqot/srmcp/reassembly.hpp"

namespace pqot::srmcp {

static_assert(channel::Reassembler::kMaxFragments >= Limits{}.max_segments);

Reassembler::Reassembler(const Limits& limits, std::size_t max_bytes,
                         std::shared_ptr<ReassemblyBudget> shared)
    : inner_(limits.max_reassemblies,
             max_bytes != 0 ? max_bytes : std::size_t{limits.max_message} * limits.max_reassemblies,
             std::move(shared)) {}

namespace {

channel::Fragment fragment_of(const Segment& segment) {
  const SegmentHeader& h = segment.header;
  return channel::Fragment{h.msg_seq, h.tid, h.index, h.count, h.total, segment.data};
}

[[noreturn]] void refuse(const channel::ReassemblyError& e) {
  using Kind = channel::ReassemblyError::Kind;
  const bool size = e.kind() == Kind::too_many_messages || e.kind() == Kind::over_limit ||
                    e.kind() == Kind::over_budget;
  throw ProtocolError(Action::drop, size ? Status::too_large : Status::bad_request, e.what());
}

}  // namespace

std::optional<Bytes> Reassembler::add(const Segment& segment, Clock::time_point now) {
  try {
    return inner_.add(fragment_of(segment), now);
  } catch (const channel::ReassemblyError& e) {
    refuse(e);
  }
}

bool Reassembler::is_whole(const Segment& segment) {
  try {
    return channel::Reassembler::is_whole(fragment_of(segment));
  } catch (const channel::ReassemblyError& e) {
    refuse(e);
  }
}

}  // namespace pqot::srmcp
