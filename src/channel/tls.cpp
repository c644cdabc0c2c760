#include "pqot/channel/tls.hpp"

#include "pqot/channel/tls_socket.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <stdexcept>

#include "pqot/channel/tls_resumption.hpp"

namespace pqot::channel {

namespace {

void configure_common(asio::ssl::context& ctx, const TlsFiles& files) {
  SSL_CTX* native = ctx.native_handle();
  if (SSL_CTX_set_min_proto_version(native, TLS1_3_VERSION) != 1 ||
      SSL_CTX_set_max_proto_version(native, TLS1_3_VERSION) != 1) {
    throw std::runtime_error("TLS: cannot restrict to TLS 1.3");
  }
  // No resumption unless asked for: tls_resumption.hpp confines it to scopes (SRMCP: a session's
  // data links), so that every other connection proves its certificate afresh.
  SSL_CTX_set_options(native, SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  auto load = [](const std::string& path, const char* what, auto&& fn) {
    if (path.empty()) throw std::runtime_error(std::string("TLS: no ") + what + " file configured");
    try {
      fn();
    } catch (const std::system_error& e) {
      throw std::runtime_error(std::string("TLS: cannot load ") + what + " '" + path + "': " + e.what());
    }
  };
  load(files.ca, "CA certificate", [&] { ctx.load_verify_file(files.ca); });
  load(files.cert, "certificate", [&] { ctx.use_certificate_chain_file(files.cert); });
  load(files.key, "private key", [&] { ctx.use_private_key_file(files.key, asio::ssl::context::pem); });
  if (SSL_CTX_check_private_key(native) != 1) {
    throw std::runtime_error("TLS: private key '" + files.key + "' does not match certificate '" + files.cert + "'");
  }
}

std::string entry_text(X509_NAME_ENTRY* entry) {
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
  if (n < 0) return {};
  std::string s(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  return s;
}

}  // namespace

asio::ssl::context make_server_tls(const TlsFiles& files) {
  asio::ssl::context ctx(asio::ssl::context::tls_server);
  configure_common(ctx, files);
  ctx.set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
  return ctx;
}

asio::ssl::context make_client_tls(const TlsFiles& files) {
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  configure_common(ctx, files);
  ctx.set_verify_mode(asio::ssl::verify_peer);
  enable_ticket_slots(ctx);  // tickets reach a TicketSlot only on connections it watches
  return ctx;
}

// Fails closed: if the expected name or address cannot be set, the handshake must not go ahead
// (it would accept any certificate the CA signed).
void set_server_identity(SSL* ssl, const std::string& host) {
  if (host.empty() || host.size() > 255 || host.find('\0') != std::string::npos) {
    throw std::runtime_error("TLS: cannot check the server's identity against '" + host.substr(0, 64) +
                             "': empty, over 255 bytes or with a NUL byte");
  }
  asio::error_code ec;
  (void)asio::ip::make_address(host, ec);  // an IP literal is checked as an IP SAN
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  bool ok = false;
  if (!ec) {
    ok = X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1;
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    ok = !host.empty() && SSL_set_tlsext_host_name(ssl, host.c_str()) == 1 &&
         X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size()) == 1;
  }
  if (!ok) {
    ERR_clear_error();
    throw std::runtime_error("TLS: cannot check the server's identity against '" + host + "'");
  }
}

Principal peer_principal(const SSL* ssl) {
  Principal p;
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return p;
  X509_NAME* subject = X509_get_subject_name(cert);
  const int cn = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (cn >= 0) p.identity = entry_text(X509_NAME_get_entry(subject, cn));
  for (int i = X509_NAME_get_index_by_NID(subject, NID_organizationalUnitName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(subject, NID_organizationalUnitName, i)) {
    p.roles.push_back(entry_text(X509_NAME_get_entry(subject, i)));
  }
  return p;
}

crypto::Bytes tls_exporter(SSL* ssl, std::string_view label) {
  crypto::Bytes out(32);
  const std::string l(label);
  if (SSL_export_keying_material(ssl, out.data(), out.size(), l.data(), l.size(),
                                 nullptr, 0, 0) != 1) {
    throw std::runtime_error("TLS exporter failed");
  }
  return out;
}

void set_server_identity(TlsStream& stream, const std::string& host) { set_server_identity(stream.native_handle(), host); }
void set_server_identity(TlsSocket& socket, const std::string& host) { set_server_identity(socket.native_handle(), host); }
Principal peer_principal(TlsStream& stream) { return peer_principal(stream.native_handle()); }
Principal peer_principal(TlsSocket& socket) { return peer_principal(socket.native_handle()); }
crypto::Bytes tls_exporter(TlsStream& stream, std::string_view label) { return tls_exporter(stream.native_handle(), label); }
crypto::Bytes tls_exporter(TlsSocket& socket, std::string_view label) { return tls_exporter(socket.native_handle(), label); }

}  // namespace pqot::channel
