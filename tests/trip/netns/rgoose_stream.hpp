// An R-GOOSE-like legacy flow for TRIP's system tests: a sender of 162-byte datagrams every 10 ms,
// each carrying its sequence number (u32, big-endian) and a pattern derived from it, and a receiver
// that counts how often each sequence number arrived and how many datagrams were not what the
// sender sent. Their sockets are opened by the caller (in the namespaces of the test).
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <netinet/in.h>
#include <string>
#include <thread>
#include <vector>

namespace pqot::test {

class RgooseStream {
 public:
  static constexpr std::size_t kSize = 162;
  static constexpr std::chrono::milliseconds kInterval{10};

  /// `sender` is an unconnected UDP socket, `to` the reflector's address; `receiver` a bound UDP
  /// socket where the filter delivers. Both are owned (closed) by the stream.
  RgooseStream(int sender, sockaddr_in to, int receiver) : sender_(sender), to_(to), receiver_(receiver) {
    receiving_thread_ = std::thread([this] { receive_loop(); });
  }
  RgooseStream(const RgooseStream&) = delete;
  RgooseStream& operator=(const RgooseStream&) = delete;
  ~RgooseStream() {
    stop_sending();
    stop_receiving_ = true;
    if (receiving_thread_.joinable()) receiving_thread_.join();
    ::close(sender_);
    ::close(receiver_);
  }

  void start_sending() {
    if (sending_thread_.joinable()) return;
    sending_thread_ = std::thread([this] { send_loop(); });
  }
  void stop_sending() {
    stop_sending_ = true;
    if (sending_thread_.joinable()) sending_thread_.join();
  }

  /// Datagrams sent so far (sequence numbers 0 .. sent() - 1).
  std::uint32_t sent() const { return sent_; }

  /// How often each sequence number arrived (index = sequence number), and the datagrams that
  /// were not one the sender made.
  struct Tally {
    std::vector<std::uint32_t> arrivals;
    std::uint32_t foreign = 0;
    std::uint32_t delivered(std::uint32_t from, std::uint32_t to) const {
      std::uint32_t n = 0;
      for (std::uint32_t s = from; s < to && s < arrivals.size(); ++s) n += arrivals[s] > 0 ? 1 : 0;
      return n;
    }
    std::uint32_t duplicated() const {
      std::uint32_t n = 0;
      for (std::uint32_t a : arrivals) n += a > 1 ? 1 : 0;
      return n;
    }
    /// The first few missing sequence numbers in [from, to), for a failure message.
    std::string missing(std::uint32_t from, std::uint32_t to) const {
      std::string out;
      int shown = 0;
      for (std::uint32_t s = from; s < to && shown < 20; ++s) {
        if (s >= arrivals.size() || arrivals[s] == 0) {
          out += std::to_string(s) + " ";
          ++shown;
        }
      }
      return out;
    }
  };
  Tally tally() const {
    std::lock_guard lock(mutex_);
    return tally_;
  }

  /// The datagram for sequence number `seq`.
  static std::array<std::uint8_t, kSize> datagram(std::uint32_t seq) {
    std::array<std::uint8_t, kSize> d{};
    d[0] = static_cast<std::uint8_t>(seq >> 24);
    d[1] = static_cast<std::uint8_t>(seq >> 16);
    d[2] = static_cast<std::uint8_t>(seq >> 8);
    d[3] = static_cast<std::uint8_t>(seq);
    std::uint32_t x = seq * 2654435761u + 1;
    for (std::size_t i = 4; i < kSize; ++i) {
      x = x * 1664525u + 1013904223u;
      d[i] = static_cast<std::uint8_t>(x >> 24);
    }
    return d;
  }

 private:
  void send_loop() {
    auto next = std::chrono::steady_clock::now();
    while (!stop_sending_) {
      const auto d = datagram(sent_);
      // A send refused by the kernel (the reflector is down: nothing listens) still counts: the
      // datagram is gone, as it would be from a legacy device.
      (void)::sendto(sender_, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to_), sizeof to_);
      sent_ = sent_ + 1;
      next += kInterval;
      std::this_thread::sleep_until(next);
    }
  }

  void receive_loop() {
    std::array<std::uint8_t, 2048> buf{};
    while (!stop_receiving_) {
      pollfd p{receiver_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(receiver_, buf.data(), buf.size(), MSG_DONTWAIT);
      if (n < 0) continue;
      std::lock_guard lock(mutex_);
      const std::uint32_t seq = (std::uint32_t{buf[0]} << 24) | (std::uint32_t{buf[1]} << 16) |
                                (std::uint32_t{buf[2]} << 8) | buf[3];
      bool ours = n == static_cast<ssize_t>(kSize) && seq < 1'000'000;
      if (ours) {
        const auto expected = datagram(seq);
        ours = std::equal(expected.begin(), expected.end(), buf.begin());
      }
      if (!ours) {
        ++tally_.foreign;
        continue;
      }
      if (tally_.arrivals.size() <= seq) tally_.arrivals.resize(seq + 1);
      ++tally_.arrivals[seq];
    }
  }

  int sender_;
  sockaddr_in to_;
  int receiver_;
  std::atomic<std::uint32_t> sent_{0};
  std::atomic<bool> stop_sending_{false};
  std::atomic<bool> stop_receiving_{false};
  std::thread sending_thread_;
  std::thread receiving_thread_;
  mutable std::mutex mutex_;
  Tally tally_;
};

}  // namespace pqot::test
