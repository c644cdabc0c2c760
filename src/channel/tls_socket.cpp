#include "pqot/channel/tls_socket.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <system_error>

namespace pqot::channel {

namespace {

// OpenSSL's error queue is per thread: a failure leaves it clean, so that the next SSL_get_error
// on this thread (ours or anyone's) is not misled by a stale entry.
void clear_stale_errors() {
  if (ERR_peek_error() != 0) ERR_clear_error();
}

// The BIO between OpenSSL and the socket: OpenSSL's own socket BIO writes with write(2), which
// raises SIGPIPE when the peer has gone; a library must not, so this one sends with MSG_NOSIGNAL.
// Its data is the TlsSocket's BioState (descriptor and read state); closing the descriptor is the
// socket's business.
TlsSocket::BioState& state_of(BIO* b) {
  return *static_cast<TlsSocket::BioState*>(BIO_get_data(b));
}

bool would_block(int e) {
  return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

int bio_write(BIO* b, const char* data, int len) {
  BIO_clear_retry_flags(b);
  const ssize_t n = ::send(state_of(b).fd, data, static_cast<std::size_t>(len), MSG_NOSIGNAL);
  if (n >= 0) return static_cast<int>(n);
  if (would_block(errno)) BIO_set_retry_write(b);
  return -1;
}

// With read-ahead OpenSSL asks for as much as its buffer holds, so one recv takes every record
// there is. A recv that got less than it asked for emptied the socket: the next one would most
// likely find nothing (EAGAIN) and cost a system call for it, so it is not made; the caller waits
// for readiness instead, which reports at once data that came in meanwhile (the wait re-arms the
// descriptor: asio's async_wait is not speculative and, on epoll, re-registers the descriptor with
// EPOLL_CTL_MOD, which reports a socket already readable), and the read after the wait goes to the
// kernel again. Test: TlsSocket.DataThatComeAfterAReadEmptiedTheSocketArriveThroughTheWait.
int bio_read(BIO* b, char* data, int len) {
  BIO_clear_retry_flags(b);
  auto& st = state_of(b);
  if (st.drained) {
    BIO_set_retry_read(b);
    return -1;
  }
  const ssize_t n = ::recv(st.fd, data, static_cast<std::size_t>(len), 0);
  if (n >= 0) {
    st.drained = n > 0 && n < len;
    return static_cast<int>(n);
  }
  if (would_block(errno)) BIO_set_retry_read(b);
  return -1;
}

long bio_ctrl(BIO*, int cmd, long, void*) {
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int bio_create(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

const BIO_METHOD* socket_bio_method() {
  static const BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "pqot socket");
    if (m == nullptr || BIO_meth_set_write(m, bio_write) != 1 ||
        BIO_meth_set_read(m, bio_read) != 1 || BIO_meth_set_ctrl(m, bio_ctrl) != 1 ||
        BIO_meth_set_create(m, bio_create) != 1) {
      throw std::runtime_error("TLS: cannot create the socket BIO method");
    }
    return m;
  }();
  return method;
}

}  // namespace

TlsSocket::TlsSocket(Tcp::socket socket, asio::ssl::context& context)
    : socket_(std::move(socket)),
      bio_state_(std::make_unique<BioState>()),
      ssl_(SSL_new(context.native_handle()), SSL_free) {
  if (!ssl_) {
    ERR_clear_error();
    throw std::runtime_error("TLS: cannot create a connection object");
  }
  // Whole records, and all that are there, in one recv (not a header and then a body).
  SSL_set_read_ahead(ssl_.get(), 1);
  // A write that took part of a buffer goes on from where it stopped; the buffer may move (the
  // caller's queue owns it).
  SSL_set_mode(ssl_.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

TlsSocket::~TlsSocket() = default;

void TlsSocket::fail(int ssl_error, int ret) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (ssl_error == SSL_ERROR_ZERO_RETURN) throw std::system_error(asio::error::eof);
  if (e != 0)
    throw std::system_error(asio::error_code(static_cast<int>(e), asio::error::get_ssl_category()));
  // SSL_ERROR_SYSCALL: the socket's own error, or (ret 0) the peer closed without close_notify.
  if (ssl_error == SSL_ERROR_SYSCALL && ret < 0 && errno != 0) {
    throw std::system_error(asio::error_code(errno, asio::error::get_system_category()));
  }
  throw std::system_error(asio::error::eof);
}

asio::awaitable<void> TlsSocket::wait(Want w) {
  co_await socket_.async_wait(w == Want::read ? Tcp::socket::wait_read : Tcp::socket::wait_write,
                              asio::use_awaitable);
  // Readable (or, for a write, able to go on): the next read asks the kernel again.
  bio_state_->drained = false;
}

asio::awaitable<void> TlsSocket::async_handshake(asio::ssl::stream_base::handshake_type type) {
  SSL* ssl = ssl_.get();
  if (!socket_.is_open()) throw std::system_error(asio::error::bad_descriptor);
  socket_.non_blocking(true);
  BIO* bio = BIO_new(socket_bio_method());
  if (bio == nullptr) {
    ERR_clear_error();
    throw std::runtime_error("TLS: cannot attach the socket");
  }
  bio_state_->fd = socket_.native_handle();
  BIO_set_data(bio, bio_state_.get());
  SSL_set_bio(ssl, bio, bio);  // (one reference, owned by the SSL from here on)
  if (type == asio::ssl::stream_base::client) {
    SSL_set_connect_state(ssl);
  } else {
    SSL_set_accept_state(ssl);
  }
  for (;;) {
    // Closed meanwhile (a deadline, an eviction): its descriptor number may already be another
    // connection's, so OpenSSL must not touch it again.
    if (!socket_.is_open()) throw std::system_error(asio::error::operation_aborted);
    clear_stale_errors();
    const int r = SSL_do_handshake(ssl);
    if (r == 1) {
      // The first read after the handshake asks the kernel, whatever the handshake's last read.
      bio_state_->drained = false;
      co_return;
    }
    const int err = SSL_get_error(ssl, r);
    if (err == SSL_ERROR_WANT_READ) {
      co_await wait(Want::read);
    } else if (err == SSL_ERROR_WANT_WRITE) {
      co_await wait(Want::write);
    } else {
      fail(err, r);
    }
  }
}

std::size_t TlsSocket::read_now(std::span<std::uint8_t> buf) {
  // A closed socket's descriptor number may already belong to another connection.
  if (!socket_.is_open()) throw std::system_error(asio::error::bad_descriptor);
  if (buf.empty()) return 0;
  clear_stale_errors();
  const int n =
      static_cast<int>(std::min<std::size_t>(buf.size(), std::numeric_limits<int>::max()));
  const int r = SSL_read(ssl_.get(), buf.data(), n);
  if (r > 0) return static_cast<std::size_t>(r);
  const int err = SSL_get_error(ssl_.get(), r);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    read_wants_ = err == SSL_ERROR_WANT_READ ? Want::read : Want::write;
    return 0;
  }
  fail(err, r);
}

std::size_t TlsSocket::write_now(std::span<const std::uint8_t> data) {
  if (!socket_.is_open()) throw std::system_error(asio::error::bad_descriptor);
  if (data.empty()) return 0;
  clear_stale_errors();
  const int n =
      static_cast<int>(std::min<std::size_t>(data.size(), std::numeric_limits<int>::max()));
  const int r = SSL_write(ssl_.get(), data.data(), n);
  if (r > 0) return static_cast<std::size_t>(r);
  const int err = SSL_get_error(ssl_.get(), r);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    write_wants_ = err == SSL_ERROR_WANT_WRITE ? Want::write : Want::read;
    return 0;
  }
  fail(err, r);
}

asio::awaitable<void> TlsSocket::wait_for_read() {
  return wait(read_wants_);
}
asio::awaitable<void> TlsSocket::wait_for_write() {
  return wait(write_wants_);
}

}  // namespace pqot::channel
