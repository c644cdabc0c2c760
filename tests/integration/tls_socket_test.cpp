// channel::TlsSocket (docs/channel.md, "TLS") on loopback: a handshake both ways, reads that
// complete inline when data are there and report "nothing yet" otherwise, the peer's close as
// end of stream, and a write to a peer that has gone as an error rather than SIGPIPE.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "../support/test_pki.hpp"
#include "pqot/channel/tls.hpp"
#include "pqot/channel/tls_socket.hpp"

namespace pqot::channel {
namespace {

using Tcp = asio::ip::tcp;

struct Pair {
  explicit Pair(const test::TestPki& pki)
      : server_ctx(make_server_tls(pki.files<TlsFiles>("server"))),
        client_ctx(make_client_tls(pki.files<TlsFiles>("client1"))),
        acceptor(io, Tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    Tcp::socket c(io);
    c.connect(acceptor.local_endpoint());
    Tcp::socket s = acceptor.accept();
    client = std::make_unique<TlsSocket>(std::move(c), client_ctx);
    server = std::make_unique<TlsSocket>(std::move(s), server_ctx);
    set_server_identity(*client, "127.0.0.1");
    std::exception_ptr failure;
    auto done = [&](std::exception_ptr e) {
      if (e) failure = e;
    };
    asio::co_spawn(io, client->async_handshake(asio::ssl::stream_base::client), done);
    asio::co_spawn(io, server->async_handshake(asio::ssl::stream_base::server), done);
    io.run();
    io.restart();
    if (failure) std::rethrow_exception(failure);
  }
  // Reads until `n` bytes came, waiting for the socket when there is nothing.
  std::string read(TlsSocket& s, std::size_t n) {
    std::string out;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          std::uint8_t buf[256];
          while (out.size() < n) {
            const std::size_t k = s.read_now(std::span(buf, std::min(sizeof buf, n - out.size())));
            if (k == 0) {
              co_await s.wait_for_read();
            } else {
              out.append(reinterpret_cast<char*>(buf), k);
            }
          }
        },
        asio::detached);
    io.run();
    io.restart();
    return out;
  }

  asio::io_context io;
  asio::ssl::context server_ctx;
  asio::ssl::context client_ctx;
  Tcp::acceptor acceptor;
  std::unique_ptr<TlsSocket> client;
  std::unique_ptr<TlsSocket> server;
};

std::span<const std::uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST(TlsSocket, HandshakeReadsWritesAndThePeersIdentity) {
  test::TestPki pki(1);
  Pair p(pki);
  EXPECT_EQ(peer_principal(*p.server).identity, "client1");
  EXPECT_EQ(tls_exporter(*p.client, "x"), tls_exporter(*p.server, "x"));
  std::uint8_t buf[16];
  EXPECT_EQ(p.server->read_now(buf), 0u) << "nothing sent yet: no data, no wait";
  EXPECT_EQ(p.client->write_now(bytes("hello")), 5u) << "a small write completes inline";
  EXPECT_EQ(p.read(*p.server, 5), "hello");
}

TEST(TlsSocket, ThePeersCloseIsEndOfStreamAndAWriteToAGonePeerThrowsWithoutSigpipe) {
  test::TestPki pki(1);
  Pair p(pki);
  p.server->lowest_layer().close();
  std::uint8_t buf[16];
  bool ended = false;
  for (int i = 0; i < 1000 && !ended; ++i) {
    try {
      if (p.client->read_now(buf) == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } catch (const std::system_error&) {
      ended = true;
    }
  }
  EXPECT_TRUE(ended) << "the peer's close ends the stream";
  // Writes into a connection the peer reset: an error, never a signal (the test would die).
  const std::string chunk(16384, 'x');
  bool failed = false;
  for (int i = 0; i < 100 && !failed; ++i) {
    try {
      (void)p.client->write_now(bytes(chunk));
    } catch (const std::system_error&) {
      failed = true;
    }
  }
  EXPECT_TRUE(failed);
  // A closed socket is never read through again (its descriptor may be another connection's).
  p.client->lowest_layer().close();
  EXPECT_THROW((void)p.client->read_now(buf), std::system_error);
}

TEST(TlsSocket, AClientRefusesAServerCertificateForAnotherName) {
  test::TestPki pki(1);
  asio::io_context io;
  auto server_ctx = make_server_tls(pki.files<TlsFiles>("server"));
  auto client_ctx = make_client_tls(pki.files<TlsFiles>("client1"));
  Tcp::acceptor acceptor(io, Tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  Tcp::socket c(io);
  c.connect(acceptor.local_endpoint());
  TlsSocket client(std::move(c), client_ctx);
  TlsSocket server(acceptor.accept(), server_ctx);
  set_server_identity(client, "not-this-server.example");
  std::string client_error;
  asio::co_spawn(io, client.async_handshake(asio::ssl::stream_base::client), [&](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const std::exception& x) {
      client_error = x.what();
    }
    server.lowest_layer().close();
  });
  asio::co_spawn(io, server.async_handshake(asio::ssl::stream_base::server), asio::detached);
  io.run();
  EXPECT_NE(client_error.find("certificate verify failed"), std::string::npos) << client_error;
}

}  // namespace
}  // namespace pqot::channel
