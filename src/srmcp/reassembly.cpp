#include "pqot/srmcp/reassembly.hpp"

#include <algorithm>

namespace pqot::srmcp {

std::optional<Bytes> Reassembler::add(const Segment& segment, Clock::time_point now) {
  const SegmentHeader& h = segment.header;
  if (h.count == 1) return Bytes(segment.data.begin(), segment.data.end());

  auto it = partial_.find(h.msg_seq);
  if (it == partial_.end()) {
    if (partial_.size() >= limits_.max_reassemblies) {
      throw ProtocolError(Action::drop, Status::too_large, "too many partial messages");
    }
    Partial p{h, Bytes(h.total), 0, now};  // total was bounded by parse_segment()
    it = partial_.emplace(h.msg_seq, std::move(p)).first;
  }
  Partial& p = it->second;
  if (p.first.tid != h.tid || p.first.count != h.count || p.first.total != h.total) {
    throw ProtocolError(Action::drop, Status::bad_request, "segment disagrees with its message");
  }
  const std::uint32_t bit = std::uint32_t{1} << h.index;
  if (p.received_mask & bit) {
    throw ProtocolError(Action::drop, Status::bad_request, "duplicate segment");
  }
  std::copy(segment.data.begin(), segment.data.end(), p.buffer.begin() + h.offset);
  p.received_mask |= bit;
  if (p.received_mask != (std::uint32_t{1} << h.count) - 1) return std::nullopt;
  Bytes whole = std::move(p.buffer);
  partial_.erase(it);
  return whole;
}

std::size_t Reassembler::expire(Clock::time_point cutoff) {
  return std::erase_if(partial_, [&](const auto& kv) { return kv.second.started < cutoff; });
}

}  // namespace pqot::srmcp
