// A throw-away test PKI for demos and tests: one CA, one server and N client certificates
// (docs/pki.md). Not for production: the private keys are written unencrypted. Built on OpenSSL
// X.509; not a cryptographic primitive, so it lives beside pqot::crypto, not in it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pqot::pki {

enum class PkiKeyType {
  ecdsa_p256,  ///< ECDSA on NIST P-256 (default: small and fast)
  rsa_3072,    ///< RSA 3072 (for peers without ECDSA)
};

/// "ecdsa" or "rsa"; throws crypto::Error{invalid_argument} for anything else.
PkiKeyType parse_pki_key_type(std::string_view name);
/// "ecdsa" or "rsa".
const char* to_string(PkiKeyType type) noexcept;

struct PkiOptions {
  static constexpr int kMaxClients = 1000;
  static constexpr int kMaxDays = 36500;
  static constexpr std::size_t kMaxServerNames = 100;

  std::filesystem::path dir;  ///< created (mode 0700) if missing
  /// The server certificate's SANs: an IPv4/IPv6 literal becomes an IP SAN, anything else a DNS
  /// SAN (checked as a host name). The first name is also the subject CN (at most 64 characters).
  std::vector<std::string> server_names{"localhost", "127.0.0.1"};
  int clients = 2;  ///< client1 .. clientN, 0..kMaxClients
  PkiKeyType key_type = PkiKeyType::ecdsa_p256;
  int days = 825;          ///< validity of server and client certificates, 1..kMaxDays
  int ca_days = 3650;      ///< validity of the CA; never less than `days`
  bool overwrite = false;  ///< replace existing files instead of refusing
  /// Roles of client K (1-based): each becomes an organizationalUnitName in its subject, which
  /// SRMCP reads as a role ("role:NAME" in node ACLs).
  std::map<int, std::vector<std::string>> client_roles;
  /// Roles of the server certificate, organizationalUnitNames as above (TRIP's daemons require
  /// `trip` of the side they connect to, docs/trip.md §3).
  std::vector<std::string> server_roles;
};

/// One file written by create_test_pki().
struct PkiFile {
  std::string name;            ///< inside the directory: "ca.crt", "server.key", ...
  std::filesystem::path path;  ///< dir / name
  bool is_private_key = false;
  unsigned mode = 0;  ///< permission bits set on the file: 0600 for keys, 0644 for certificates
  // Certificates only:
  std::string subject;  ///< RFC 2253: "CN=localhost"
  /// "DNS:localhost", "IP:127.0.0.1", "URI:urn:pqot:client:client1"
  std::vector<std::string> sans;
  bool is_ca = false;
  std::string not_after;  ///< UTC date "YYYY-MM-DD"
  // Private keys only:
  std::string key_description;  ///< "ECDSA P-256" or "RSA 3072"
};

struct PkiSummary {
  std::filesystem::path dir;
  std::vector<PkiFile> files;  ///< in the order written: ca, server, client1..N; .crt before .key
};

/// File names create_test_pki() writes for `options` (ca.crt, ca.key, server.crt, ...).
std::vector<std::string> pki_file_names(const PkiOptions& options);

/// The files among pki_file_names() that already exist in options.dir (symlinks included).
std::vector<std::filesystem::path> existing_pki_files(const PkiOptions& options);

/// Creates the test PKI in options.dir. Throws crypto::Error{invalid_argument} for bad options, a
/// target that exists while !overwrite (checked before anything is written) or a file the OS will
/// not let us create; Error{internal} when OpenSSL fails. Keys and certificates are all generated before
/// the first file is written; if writing fails, files this call created are removed again.
PkiSummary create_test_pki(const PkiOptions& options);

}  // namespace pqot::pki
