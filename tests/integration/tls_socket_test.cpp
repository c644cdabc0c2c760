// channel::TlsSocket (docs/channel.md, "TLS") on loopback: a handshake both ways, reads that
// complete inline when data are there and report "nothing yet" otherwise, the peer's close as
// end of stream, and a write to a peer that has gone as an error rather than SIGPIPE.
#include "pqot/channel/tls_socket.hpp"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "../support/test_pki.hpp"
#include "pqot/channel/tls.hpp"

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
    io.run_for(std::chrono::seconds(10));
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

// A read that emptied the socket makes the next read_now answer 0 without asking the kernel;
// data that came meanwhile are then reported by wait_for_read at once, so nothing is lost or held.
TEST(TlsSocket, DataThatComeAfterAReadEmptiedTheSocketArriveThroughTheWait) {
  test::TestPki pki(1);
  Pair p(pki);
  for (int round = 0; round < 50; ++round) {
    const std::string a = "first " + std::to_string(round);
    const std::string b = "second " + std::to_string(round);
    ASSERT_EQ(p.client->write_now(bytes(a)), a.size());
    ASSERT_EQ(p.read(*p.server, a.size()), a);
    // The server's socket was emptied by that read; this record lands behind its back.
    ASSERT_EQ(p.client->write_now(bytes(b)), b.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 2));
    ASSERT_EQ(p.read(*p.server, b.size()), b);
  }
  // Several records in the kernel at once are all taken, none left behind.
  std::string all;
  for (int i = 0; i < 20; ++i) {
    const std::string r = "record " + std::to_string(i) + ";";
    ASSERT_EQ(p.client->write_now(bytes(r)), r.size());
    all += r;
  }
  EXPECT_EQ(p.read(*p.server, all.size()), all);
}

TEST(TlsSocket, ThePeersCloseIsEndOfStreamAndAWriteToAGonePeerThrowsWithoutSigpipe) {
  test::TestPki pki(1);
  Pair p(pki);
  p.server->lowest_layer().close();
  std::uint8_t buf[16];
  bool ended = false;
  asio::co_spawn(
      p.io,
      [&]() -> asio::awaitable<void> {
        try {
          for (;;) {
            if (p.client->read_now(buf) == 0) co_await p.client->wait_for_read();
          }
        } catch (const std::system_error&) {
          ended = true;
        }
      },
      asio::detached);
  p.io.run_for(std::chrono::seconds(10));
  p.io.restart();
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
  asio::co_spawn(io, client.async_handshake(asio::ssl::stream_base::client),
                 [&](std::exception_ptr e) {
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
