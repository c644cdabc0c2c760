// A loopback TCP port where every connect is refused, for as long as the object lives.
//
// The socket stays bound but never listens: the kernel answers a SYN with a reset, and, without
// SO_REUSEADDR on this socket, nothing else (an ephemeral bind, a server under test) can take the
// port. Binding, reading the port and closing is not enough: the next ephemeral bind in the same
// process, such as the server the test starts next, may be given that very port.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>

namespace pqot::test {

class RefusedPort {
 public:
  RefusedPort() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      if (fd_ >= 0) ::close(fd_);
      throw std::runtime_error("cannot bind a loopback port");
    }
    port_ = ntohs(a.sin_port);
  }
  ~RefusedPort() { ::close(fd_); }
  RefusedPort(const RefusedPort&) = delete;
  RefusedPort& operator=(const RefusedPort&) = delete;

  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

}  // namespace pqot::test
