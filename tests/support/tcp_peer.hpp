// Plain TCP connections to 127.0.0.1 from a chosen loopback source address (127.0.0.2, ...), for
// tests of per-source limits: a connection that sends nothing, or whatever the test tells it to.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pqot::test {

/// A connected socket from `source` to 127.0.0.1:port, or -1.
inline int connect_from(const std::string& source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &a.sin_addr);
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_port = htons(static_cast<std::uint16_t>(port));
  s.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&s), sizeof s) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

/// connect_from() as an object that closes the connection at the end of its scope.
class TcpPeer {
 public:
  TcpPeer(const std::string& source, int port) : fd_(connect_from(source, port)) {
    if (fd_ < 0) throw std::runtime_error("cannot connect from " + source);
  }
  TcpPeer(const TcpPeer&) = delete;
  TcpPeer& operator=(const TcpPeer&) = delete;
  ~TcpPeer() { ::close(fd_); }
  void send(const std::vector<std::uint8_t>& b) { (void)!::send(fd_, b.data(), b.size(), MSG_NOSIGNAL); }

 private:
  int fd_;
};

}  // namespace pqot::test
