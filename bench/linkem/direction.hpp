// One direction of the emulated link: loss, rate (a serialisation queue), delay and jitter decide
// when each packet is delivered; the packets wait here until then. No I/O: the event loop in
// linkem.cpp reads the packets, asks `schedule`, and writes what `pop_due` hands back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <vector>

namespace pqot::bench::linkem {

// Nanoseconds on CLOCK_MONOTONIC.
using Nanos = std::int64_t;

struct DirectionConfig {
  double delay_ms = 0;                   // one-way delay
  double jitter_ms = 0;                  // uniform in [-jitter, +jitter], added per packet
  double loss = 0;                       // probability that a packet is dropped, 0..1
  double rate_mbit = 0;                  // 0: unlimited
  std::size_t queue_packets = 1000;      // drop-tail limit of the serialisation queue
  std::size_t max_held_packets = 40000;  // memory bound on everything held (queue + delay line)
  bool reorder = false;  // let jitter reorder packets (default: delivery times are monotone)
};

struct DirectionStats {
  std::uint64_t packets = 0;        // delivered (written to the other side)
  std::uint64_t bytes = 0;          // IP bytes delivered
  std::uint64_t dropped_loss = 0;   // dropped by the loss probability
  std::uint64_t dropped_queue = 0;  // dropped because the queue (or the memory bound) was full
  std::uint64_t dropped_error = 0;  // oversize packets and failed writes
};

struct Packet {
  Nanos due = 0;
  std::uint64_t seq = 0;  // arrival order, breaks ties in the heap
  std::size_t len = 0;
  std::vector<std::uint8_t> data;  // capacity >= len; recycled by the caller
};

class Direction {
 public:
  Direction(const DirectionConfig& config, std::uint64_t seed);

  // The fate of a packet of `size` bytes arriving at `now`: its delivery time, or nullopt when it
  // is dropped (counted in the stats).
  std::optional<Nanos> schedule(std::size_t size, Nanos now);

  // Holds a packet whose delivery time came from `schedule`.
  void hold(Packet packet);
  bool empty() const { return held_.empty(); }
  // Delivery time of the next packet; only when !empty().
  Nanos next_due() const { return held_.front().due; }
  // Removes and returns the next packet; only when !empty().
  Packet pop();

  void count_delivered(std::size_t size) {
    ++stats_.packets;
    stats_.bytes += size;
  }
  void count_error() { ++stats_.dropped_error; }
  const DirectionStats& stats() const { return stats_; }

 private:
  DirectionConfig config_;
  Nanos delay_ns_;
  Nanos jitter_ns_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};

  Nanos last_tx_end_ = 0;      // when the serialisation of the last accepted packet ends
  Nanos last_due_ = 0;         // delivery time of the last accepted packet
  std::deque<Nanos> backlog_;  // serialisation end times of packets still in the rate queue
  std::vector<Packet> held_;   // min-heap on (due, seq)
  std::uint64_t next_seq_ = 0;
  DirectionStats stats_;
};

}  // namespace pqot::bench::linkem
