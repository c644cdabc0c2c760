// One path's control connection (control_connection.hpp; docs/trip.md §3).
#include "control_connection.hpp"

#include <array>

namespace pqot::tripd {

using asio::use_awaitable;

ControlConnection::ControlConnection(asio::ip::tcp::socket socket, asio::ssl::context& tls)
    : stream_(std::move(socket), tls) {
  note_remote();
}

void ControlConnection::note_remote() {
  std::error_code ec;
  const auto ep = stream_.lowest_layer().remote_endpoint(ec);
  if (!ec) remote_ = ep;
}

asio::awaitable<trip::FrameReader::Frame> ControlConnection::read_frame() {
  std::array<std::uint8_t, 4096> buf{};
  for (;;) {
    if (auto f = reader_.next()) co_return std::move(*f);
    const std::size_t n = co_await stream_.async_read_some(asio::buffer(buf), use_awaitable);
    reader_.feed(crypto::ByteView(buf.data(), n));
  }
}

asio::awaitable<void> ControlConnection::write_frame(trip::FrameType type, crypto::ByteView body) {
  const crypto::Bytes frame = trip::control_frame(type, body);
  co_await asio::async_write(stream_, asio::buffer(frame), use_awaitable);
}

void ControlConnection::send(trip::FrameType type, crypto::ByteView body) {
  if (closed_ || (closing_ && type != trip::FrameType::close)) return;
  crypto::Bytes frame = trip::control_frame(type, body);
  if (queued_bytes_ + frame.size() > kMaxQueued) {
    abort();  // the peer does not read what it asks for
    return;
  }
  queued_bytes_ += frame.size();
  queue_.push_back(std::move(frame));
  if (!writing_) {
    writing_ = true;
    asio::co_spawn(stream_.get_executor(), [self = shared_from_this()]() { return self->write_queue(); }, asio::detached);
  }
}

asio::awaitable<void> ControlConnection::write_queue() {
  try {
    while (!queue_.empty() && !closed_) {
      const crypto::Bytes frame = std::move(queue_.front());
      queue_.pop_front();
      queued_bytes_ -= frame.size();
      co_await asio::async_write(stream_, asio::buffer(frame), use_awaitable);
    }
  } catch (const std::system_error&) {
    abort();
  }
  writing_ = false;
  if (closing_) abort();
}

void ControlConnection::close(trip::CloseCode code, const std::string& reason) {
  if (closing_ || closed_) return;
  send(trip::FrameType::close, trip::encode(trip::Close{code, reason}));
  closing_ = true;
  if (!writing_) {
    abort();
    return;
  }
  // A peer that does not read cannot keep the connection: it is closed after kCloseGrace anyway.
  auto timer = std::make_shared<asio::steady_timer>(stream_.get_executor(), kCloseGrace);
  timer->async_wait([self = shared_from_this(), timer](std::error_code ec) {
    if (!ec) self->abort();
  });
}

void ControlConnection::abort() {
  if (closed_) return;
  closed_ = true;
  std::error_code ec;
  stream_.lowest_layer().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  stream_.lowest_layer().close(ec);
}

}  // namespace pqot::tripd
