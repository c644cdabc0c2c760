// A Modbus TCP "device" on loopback that reads requests properly and answers them badly, one way
// per instance: garbage, a length beyond any ADU, another transaction id, unit or function, a byte
// count that does not fit, nothing at all, one byte at a time, or half an answer and a close. For
// the gateway's hostile-device tests (tests/integration/modbus_hostile_device_test.cpp).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace pqot::test {

class HostileModbusDevice {
 public:
  explicit HostileModbusDevice(std::string behaviour) : behaviour_(std::move(behaviour)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 8) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      throw std::runtime_error("hostile device: cannot listen");
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~HostileModbusDevice() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);  // ends a blocking accept()
    if (const int c = client_fd_.load(); c >= 0) ::shutdown(c, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
  }
  HostileModbusDevice(const HostileModbusDevice&) = delete;
  HostileModbusDevice& operator=(const HostileModbusDevice&) = delete;

  int port() const { return port_; }
  /// Requests read in full so far, over all connections.
  int requests() const { return requests_.load(); }
  /// Connections accepted so far.
  int connections() const { return connections_.load(); }

 private:
  void serve() {
    while (!stop_) {
      const int c = ::accept(listen_fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      client_fd_ = c;
      if (!stop_) handle(c);
      client_fd_ = -1;
      ::close(c);
    }
  }

  static bool recv_all(int fd, std::uint8_t* p, std::size_t n) {
    while (n > 0) {
      const auto got = ::recv(fd, p, n, 0);
      if (got <= 0) return false;
      p += got;
      n -= static_cast<std::size_t>(got);
    }
    return true;
  }
  static bool send_all(int fd, const std::vector<std::uint8_t>& b) {
    return ::send(fd, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size());
  }

  // One connection: each request in full, then the instance's kind of wrong answer.
  void handle(int c) {
    for (;;) {
      std::array<std::uint8_t, 7> h{};
      std::array<std::uint8_t, 260> pdu{};
      if (!recv_all(c, h.data(), h.size())) return;
      const std::size_t len = static_cast<std::size_t>(h[4] << 8 | h[5]);
      if (len < 2 || len > 254 || !recv_all(c, pdu.data(), len - 1)) return;
      ++requests_;
      // A well-formed answer to a register read of one register (what the tests ask for).
      std::vector<std::uint8_t> good{h[0], h[1], 0, 0, 0, 5, h[6], pdu[0], 2, 0x12, 0x34};
      if (behaviour_ == "silent") continue;
      if (behaviour_ == "garbage") {
        send_all(c, std::vector<std::uint8_t>(64, 0xFF));
      } else if (behaviour_ == "huge-length") {  // announces 65,534 PDU bytes, then keeps sending
        auto b = good;
        b[4] = 0xFF;
        b[5] = 0xFF;
        b.resize(4096, 0x00);
        send_all(c, b);
      } else if (behaviour_ == "wrong-tid") {
        good[1] = static_cast<std::uint8_t>(good[1] + 1);
        send_all(c, good);
      } else if (behaviour_ == "wrong-unit") {
        good[6] = static_cast<std::uint8_t>(good[6] + 1);
        send_all(c, good);
      } else if (behaviour_ == "wrong-function") {
        good[7] = static_cast<std::uint8_t>(good[7] == 3 ? 4 : 3);
        send_all(c, good);
      } else if (behaviour_ == "bad-count") {  // byte count 4 for one register, and 4 bytes
        good[5] = 7;
        good[8] = 4;
        good.push_back(0);
        good.push_back(0);
        send_all(c, good);
      } else if (behaviour_ == "drip") {  // the right answer, one byte every 150 ms
        for (const std::uint8_t b : good) {
          if (stop_ || !send_all(c, {b})) return;
          std::this_thread::sleep_for(std::chrono::milliseconds(150));
        }
      } else if (behaviour_ == "close-mid") {
        good.resize(9);
        send_all(c, good);
        return;
      }
    }
  }

  const std::string behaviour_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<int> client_fd_{-1};
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace pqot::test
