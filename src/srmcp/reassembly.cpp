#include "pqot/srmcp/reassembly.hpp"

#include <algorithm>

namespace pqot::srmcp {

Reassembler::Reassembler(const Limits& limits, std::size_t max_bytes, std::shared_ptr<ReassemblyBudget> shared)
    : limits_(limits),
      max_bytes_(max_bytes != 0 ? max_bytes : std::size_t{limits.max_message} * limits.max_reassemblies),
      shared_(std::move(shared)) {}

Reassembler::~Reassembler() { release(bytes_); }

void Reassembler::release(std::size_t n) noexcept {
  bytes_ -= n;
  if (shared_) shared_->give_back(n);
}

std::optional<Bytes> Reassembler::add(const Segment& segment, Clock::time_point now) {
  const SegmentHeader& h = segment.header;
  if (h.count == 1) return Bytes(segment.data.begin(), segment.data.end());

  auto it = partial_.find(h.msg_seq);
  if (it == partial_.end()) {
    if (partial_.size() >= limits_.max_reassemblies) {
      throw ProtocolError(Action::drop, Status::too_large, "too many partial messages");
    }
  } else {
    const Partial& p = it->second;
    if (p.first.tid != h.tid || p.first.count != h.count || p.first.total != h.total) {
      throw ProtocolError(Action::drop, Status::bad_request, "segment disagrees with its message");
    }
    if (p.received_mask & (std::uint32_t{1} << h.index)) {
      throw ProtocolError(Action::drop, Status::bad_request, "duplicate segment");
    }
  }
  // The bytes are counted before they are kept (§8.2: a bound per session and per server).
  const std::size_t n = segment.data.size();
  if (bytes_ + n > max_bytes_) {
    throw ProtocolError(Action::drop, Status::too_large, "partial messages over this session's byte limit");
  }
  if (shared_ && !shared_->take(n)) {
    throw ProtocolError(Action::drop, Status::too_large, "partial messages over the server's byte budget");
  }
  bytes_ += n;
  if (it == partial_.end()) {
    Partial p{h, std::vector<Bytes>(h.count), 0, 0, now};
    it = partial_.emplace(h.msg_seq, std::move(p)).first;
  }
  Partial& p = it->second;
  p.parts[h.index].assign(segment.data.begin(), segment.data.end());
  p.received_mask |= std::uint32_t{1} << h.index;
  p.bytes += n;
  if (p.received_mask != (std::uint32_t{1} << h.count) - 1) return std::nullopt;
  // parse_segment() checked each part's offset and size against total and count, so the parts in
  // index order are the message.
  Bytes whole;
  whole.reserve(h.total);
  for (const Bytes& part : p.parts) whole.insert(whole.end(), part.begin(), part.end());
  release(p.bytes);
  partial_.erase(it);
  return whole;
}

std::size_t Reassembler::expire(Clock::time_point cutoff) {
  std::size_t n = 0;
  for (auto it = partial_.begin(); it != partial_.end();) {
    if (it->second.started < cutoff) {
      release(it->second.bytes);
      it = partial_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

std::optional<Reassembler::Clock::time_point> Reassembler::oldest() const {
  std::optional<Clock::time_point> t;
  for (const auto& [seq, p] : partial_) {
    if (!t || p.started < *t) t = p.started;
  }
  return t;
}

}  // namespace pqot::srmcp
