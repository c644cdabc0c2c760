// A TLS 1.3 connection that calls OpenSSL directly on a non-blocking TCP socket (docs/channel.md,
// "TLS"): a read or write that the kernel can serve at once completes inline, without a suspension
// or an allocation; only when it cannot does the caller wait for the socket to be ready. What
// asio::ssl::stream does with a BIO pair, an operation object per call and a copy per record,
// this does with SSL_read and SSL_write on the socket itself. Contexts come from make_server_tls
// and make_client_tls. One strand (or thread) at a time; no operation may be in progress in two
// places at once.
#pragma once

#include <openssl/ssl.h>

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <cstdint>
#include <memory>
#include <span>

namespace pqot::channel {

class TlsSocket {
 public:
  using Tcp = asio::ip::tcp;

  /// A connection that is not connected yet (client) or just accepted (server).
  TlsSocket(Tcp::socket socket, asio::ssl::context& context);
  TlsSocket(TlsSocket&&) noexcept = default;
  TlsSocket& operator=(TlsSocket&&) noexcept = default;
  ~TlsSocket();

  SSL* native_handle() const noexcept { return ssl_.get(); }
  Tcp::socket& lowest_layer() noexcept { return socket_; }
  Tcp::socket& next_layer() noexcept { return socket_; }
  asio::any_io_executor get_executor() { return socket_.get_executor(); }

  /// The TLS handshake on the connected socket. Throws std::system_error (category asio's SSL
  /// category: the message is OpenSSL's reason, e.g. "certificate verify failed") or the socket's
  /// error, and asio::error::operation_aborted when the socket is closed meanwhile.
  asio::awaitable<void> async_handshake(asio::ssl::stream_base::handshake_type type);
  asio::awaitable<void> async_handshake(asio::ssl::stream_base::handshake_type type,
                                        const asio::use_awaitable_t<>&) {
    return async_handshake(type);
  }

  /// Reads what is there, at most buf.size() bytes, without waiting: the count (0: nothing yet;
  /// call wait_for_read). After a read that emptied the socket, the next read_now answers 0
  /// without a system call (whatever came meanwhile, wait_for_read reports at once): a caller
  /// must wait after a 0, not poll.
  /// Throws std::system_error when the connection has ended (asio::error::eof for the peer's
  /// close_notify or a plain close) or failed.
  std::size_t read_now(std::span<std::uint8_t> buf);
  /// Writes as much of `data` as the socket takes now: the count (0: no room yet). Throws
  /// std::system_error when the connection has failed. A write that took part of `data` must be
  /// continued with the rest before anything else is written.
  std::size_t write_now(std::span<const std::uint8_t> data);
  /// Waits until the socket is readable or writable (what the last read_now or write_now that
  /// returned 0 needs; TLS may need the other direction, which this takes care of).
  asio::awaitable<void> wait_for_read();
  asio::awaitable<void> wait_for_write();

  /// What the socket BIO keeps (internal; at a stable address, as the TlsSocket may move): the
  /// descriptor, and whether the last recv emptied the socket (tls_socket.cpp, bio_read).
  struct BioState {
    int fd = -1;
    bool drained = false;
  };

 private:
  // What the last SSL call that made no progress waits for.
  enum class Want : std::uint8_t { read, write };
  [[noreturn]] void fail(int ssl_error, int ret);
  asio::awaitable<void> wait(Want w);

  Tcp::socket socket_;
  std::unique_ptr<BioState> bio_state_;  // before ssl_: outlives the BIO that points to it
  std::unique_ptr<SSL, void (*)(SSL*)> ssl_;
  Want read_wants_ = Want::read;
  Want write_wants_ = Want::write;
};

}  // namespace pqot::channel
