#include "pqot/channel/reassembly.hpp"

#include <algorithm>

namespace pqot::channel {

using Kind = ReassemblyError::Kind;

Reassembler::Reassembler(std::size_t max_messages, std::size_t max_bytes,
                         std::shared_ptr<ReassemblyBudget> shared)
    : max_messages_(max_messages), max_bytes_(max_bytes), shared_(std::move(shared)) {}

Reassembler::~Reassembler() {
  release(bytes_);
}

void Reassembler::release(std::size_t n) noexcept {
  bytes_ -= n;
  if (shared_) shared_->give_back(n);
}

bool Reassembler::is_whole(const Fragment& f) {
  if (f.count == 0 || f.count > kMaxFragments || f.index >= f.count) {
    throw ReassemblyError(Kind::inconsistent, "fragment index or count out of range");
  }
  // A part of a fragmented message carries at least one byte: pending messages cost memory that
  // only their bytes are charged for.
  if (f.count > 1 && f.data.empty()) throw ReassemblyError(Kind::inconsistent, "empty fragment");
  if (f.count == 1 && f.data.size() != f.total) {
    throw ReassemblyError(Kind::inconsistent, "fragment size differs from the total");
  }
  return f.count == 1;
}

std::optional<Bytes> Reassembler::add(const Fragment& f, Clock::time_point now) {
  if (is_whole(f)) return Bytes(f.data.begin(), f.data.end());

  auto it = partial_.find(f.message);
  if (it == partial_.end()) {
    if (partial_.size() >= max_messages_)
      throw ReassemblyError(Kind::too_many_messages, "too many partial messages");
  } else {
    const Partial& p = it->second;
    if (p.first.tag != f.tag || p.first.count != f.count || p.first.total != f.total) {
      throw ReassemblyError(Kind::inconsistent, "fragment disagrees with its message");
    }
    if (p.received_mask & (std::uint32_t{1} << f.index))
      throw ReassemblyError(Kind::duplicate, "duplicate fragment");
  }
  // The bytes are counted before they are kept: a bound per reassembler and per server.
  const std::size_t n = f.data.size();
  const std::size_t held = it == partial_.end() ? 0 : it->second.bytes;
  if (held + n > f.total)
    throw ReassemblyError(Kind::inconsistent, "fragments larger than their message");
  if (bytes_ + n > max_bytes_)
    throw ReassemblyError(Kind::over_limit, "partial messages over this session's byte limit");
  if (shared_ && !shared_->take(n)) {
    throw ReassemblyError(Kind::over_budget, "partial messages over the server's byte budget");
  }
  bytes_ += n;
  try {
    if (it == partial_.end()) {
      Fragment first = f;
      first.data = {};
      it =
          partial_.emplace(f.message, Partial{first, std::vector<Bytes>(f.count), 0, 0, now}).first;
    }
    it->second.parts[f.index].assign(f.data.begin(), f.data.end());
  } catch (...) {  // out of memory: keep nothing of the fragment, as for any refusal
    release(n);
    if (it != partial_.end() && it->second.received_mask == 0) partial_.erase(it);
    throw;
  }
  Partial& p = it->second;
  p.received_mask |= std::uint32_t{1} << f.index;
  p.bytes += n;
  if (p.received_mask != (std::uint64_t{1} << f.count) - 1) return std::nullopt;
  if (p.bytes != f.total) {  // every part is in, but they do not make the announced message
    release(p.bytes);
    partial_.erase(it);
    throw ReassemblyError(Kind::inconsistent, "fragments do not add up to their message");
  }
  Bytes whole;
  whole.reserve(f.total);
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
  for (const auto& [message, p] : partial_) {
    if (!t || p.started < *t) t = p.started;
  }
  return t;
}

}  // namespace pqot::channel
