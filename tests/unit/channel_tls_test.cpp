// The channel layer's TLS helpers (docs/channel.md, "TLS"; SRMCP uses them for §2).
#include <gtest/gtest.h>

#include "pqot/channel/tls.hpp"

namespace pqot::channel {
namespace {

// The client checks the server certificate against the name or address it dialled. If that
// check cannot be set up, the connection must fail rather than accept any certificate of the CA.
TEST(ChannelTls, ServerIdentityFailsClosed) {
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  TlsStream ok(io, ctx);
  EXPECT_NO_THROW(set_server_identity(ok, "127.0.0.1"));
  EXPECT_NO_THROW(set_server_identity(ok, "plant-gw.example"));
  TlsStream too_long(io, ctx);
  EXPECT_THROW(set_server_identity(too_long, std::string(300, 'a')), std::runtime_error) << "SNI over 255 bytes";
  TlsStream empty(io, ctx);
  EXPECT_THROW(set_server_identity(empty, ""), std::runtime_error);
  TlsStream nul(io, ctx);
  EXPECT_THROW(set_server_identity(nul, std::string("host\0evil", 9)), std::runtime_error);
  TlsStream ip_nul(io, ctx);
  EXPECT_THROW(set_server_identity(ip_nul, std::string("10.0.0.1\0x", 10)), std::runtime_error)
      << "an address followed by a NUL";
}

}  // namespace
}  // namespace pqot::channel
