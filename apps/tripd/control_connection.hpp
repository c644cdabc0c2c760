// One path's control connection (docs/trip.md §3): TLS over TCP carrying control frames. Reads
// are one coroutine's (read_frame); frames to send are queued and written in order by a writer of
// their own, so a PONG, a keepalive's CLOSE or a replacing session's CLOSE may be sent from
// anywhere on the daemon's thread. The queue is bounded (docs/trip.md §10): past it the
// connection is closed.
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <string>

#include "pqot/channel/tls.hpp"
#include "pqot/trip/control.hpp"

namespace pqot::tripd {

class ControlConnection : public std::enable_shared_from_this<ControlConnection> {
 public:
  static constexpr std::size_t kMaxQueued = 64 * 1024;
  /// How long close() waits for its CLOSE frame to be written before closing the socket.
  static constexpr std::chrono::seconds kCloseGrace{2};

  ControlConnection(asio::ip::tcp::socket socket, asio::ssl::context& tls);

  channel::TlsStream& tls() noexcept { return stream_; }
  /// The next whole frame. Throws std::system_error at EOF or a socket error, trip::ControlError
  /// for a malformed frame header.
  asio::awaitable<trip::FrameReader::Frame> read_frame();
  /// Writes one frame now (the handshake's frames, before anything else is queued).
  asio::awaitable<void> write_frame(trip::FrameType type, crypto::ByteView body);
  /// Queues a frame; closes the connection if the queue would pass kMaxQueued.
  void send(trip::FrameType type, crypto::ByteView body);
  /// Queues CLOSE, then shuts the connection down once it is written, or after kCloseGrace if
  /// it cannot be. Idempotent.
  void close(trip::CloseCode code, const std::string& reason);
  /// Closes the socket at once (pending reads end with an error). Idempotent.
  void abort();
  bool closed() const noexcept { return closed_; }
  /// The peer's address as TCP saw it (for logs and admission); call note_remote() once a
  /// connecting socket is connected.
  const asio::ip::tcp::endpoint& remote() const noexcept { return remote_; }
  void note_remote();

 private:
  asio::awaitable<void> write_queue();

  channel::TlsStream stream_;
  asio::ip::tcp::endpoint remote_;
  trip::FrameReader reader_;
  std::deque<crypto::Bytes> queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool closing_ = false;
  bool closed_ = false;
};

}  // namespace pqot::tripd
