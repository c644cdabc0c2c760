// TLS 1.3 with mutual authentication over asio::ssl (docs/channel.md, "TLS"): SRMCP's links, and
// any later protocol that runs over TLS with the project's PKI.
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <string>
#include <string_view>

#include "pqot/channel/principal.hpp"
#include "pqot/crypto/bytes.hpp"

namespace pqot::channel {

using Tcp = asio::ip::tcp;
using TlsStream = asio::ssl::stream<Tcp::socket>;
class TlsSocket;  // tls_socket.hpp: the same over OpenSSL directly, completing inline

struct TlsFiles {
  std::string ca;    ///< CA certificate (PEM) that peers must chain to
  std::string cert;  ///< own certificate chain (PEM)
  std::string key;   ///< own private key (PEM)
};

/// Server context: TLS 1.3 only, client certificate required and verified against the CA.
/// Throws std::runtime_error naming the file that could not be loaded.
asio::ssl::context make_server_tls(const TlsFiles& files);
/// Client context: TLS 1.3 only, server certificate verified against the CA; the host name is
/// checked per connection (set_server_identity).
asio::ssl::context make_client_tls(const TlsFiles& files);
/// Before the handshake: SNI and the host name or IP address the server certificate must match.
void set_server_identity(SSL* ssl, const std::string& host);
void set_server_identity(TlsStream& stream, const std::string& host);
void set_server_identity(TlsSocket& socket, const std::string& host);

/// The verified peer certificate's commonName and organizationalUnit values (empty without one).
Principal peer_principal(const SSL* ssl);
Principal peer_principal(TlsStream& stream);
Principal peer_principal(TlsSocket& socket);
/// RFC 8446 section 7.5 exporter, 32 bytes, empty context.
crypto::Bytes tls_exporter(SSL* ssl, std::string_view label);
crypto::Bytes tls_exporter(TlsStream& stream, std::string_view label);
crypto::Bytes tls_exporter(TlsSocket& socket, std::string_view label);

}  // namespace pqot::channel
