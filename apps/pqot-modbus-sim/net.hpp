// The few socket calls the simulator makes itself: IPv4 name resolution and the listener.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <string>

#include "pqot/common/resolve.hpp"

namespace pqot::modbus_sim {

/// The dotted IPv4 address of `host` (a name or an address), or nullopt.
using common::resolve_ipv4;

/// A non-blocking, close-on-exec IPv4 listening socket on ip:port (port 0: any free port), with
/// SO_REUSEADDR so that it can be reopened on the same port. Throws std::system_error.
int open_listener(const std::string& ip, std::uint16_t port, int backlog);

/// The port a bound socket has.
std::uint16_t local_port(int fd);

/// "a.b.c.d:port".
std::string address_text(const sockaddr_in& addr);

/// Replaces `path` atomically (temporary file in the same directory, then rename).
/// Throws std::system_error.
void write_file_atomically(const std::string& path, const std::string& content);

/// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

}  // namespace pqot::modbus_sim
