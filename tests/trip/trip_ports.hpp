// A free port for TRIP's tests: a daemon's path listens on one port for TCP and UDP alike, and a
// flow's reflect address is a UDP port, so the port is checked free for both (bound and
// released: the daemon binds it a moment later).
#pragma once

#include <asio.hpp>
#include <cstdint>

namespace pqot::test {

inline std::uint16_t free_trip_port() {
  for (;;) {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const std::uint16_t port = a.local_endpoint().port();
    std::error_code ec;
    asio::ip::udp::socket u(io);
    u.open(asio::ip::udp::v4());
    u.bind(asio::ip::udp::endpoint(asio::ip::make_address("127.0.0.1"), port), ec);
    if (!ec) return port;
  }
}

}  // namespace pqot::test
