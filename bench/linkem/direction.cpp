#include "direction.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace pqot::bench::linkem {
namespace {

Nanos ms_to_ns(double ms) {
  return std::llround(ms * 1e6);
}

// Min-heap order on (due, seq): std::*_heap keep the largest element first, so compare reversed.
bool later(const Packet& a, const Packet& b) {
  return a.due != b.due ? a.due > b.due : a.seq > b.seq;
}

}  // namespace

Direction::Direction(const DirectionConfig& config, std::uint64_t seed)
    : config_(config),
      delay_ns_(ms_to_ns(config.delay_ms)),
      jitter_ns_(ms_to_ns(config.jitter_ms)),
      rng_(seed) {}

std::optional<Nanos> Direction::schedule(std::size_t size, Nanos now) {
  // Loss first, as on a real link (and netem): a lost packet takes no room in the queue.
  if (config_.loss > 0 && unit_(rng_) < config_.loss) {
    ++stats_.dropped_loss;
    return std::nullopt;
  }
  if (held_.size() >= config_.max_held_packets) {
    ++stats_.dropped_queue;
    return std::nullopt;
  }
  // Rate: the packet is serialised after the previous one, taking size * 8 / rate; the queue of
  // packets waiting for (or in) serialisation is drop-tail.
  Nanos sent = now;
  if (config_.rate_mbit > 0) {
    while (!backlog_.empty() && backlog_.front() <= now) backlog_.pop_front();
    if (backlog_.size() >= config_.queue_packets) {
      ++stats_.dropped_queue;
      return std::nullopt;
    }
    const auto serialise_ns = std::llround(static_cast<double>(size) * 8000.0 / config_.rate_mbit);
    sent = std::max(now, last_tx_end_) + serialise_ns;
    last_tx_end_ = sent;
    backlog_.push_back(sent);
  }
  // Propagation delay and jitter; never before the packet has left.
  Nanos due = sent + delay_ns_;
  if (jitter_ns_ > 0) {
    const double u = unit_(rng_) * 2.0 - 1.0;  // uniform in [-1, 1)
    due += std::llround(u * static_cast<double>(jitter_ns_));
    due = std::max(due, sent);
  }
  // Without reordering a packet never overtakes the one before it in this direction.
  if (!config_.reorder) due = std::max(due, last_due_);
  last_due_ = std::max(last_due_, due);
  return due;
}

void Direction::hold(Packet packet) {
  packet.seq = next_seq_++;
  held_.push_back(std::move(packet));
  std::push_heap(held_.begin(), held_.end(), later);
}

Packet Direction::pop() {
  std::pop_heap(held_.begin(), held_.end(), later);
  Packet packet = std::move(held_.back());
  held_.pop_back();
  return packet;
}

}  // namespace pqot::bench::linkem
