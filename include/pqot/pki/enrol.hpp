// Enrolment certificates (docs/pki.md, "Enrolment certificates"): a device makes its broker TLS key
// (ECDSA P-256) and a PKCS#10 request for the name its C2 gave it; the C2 issues a client
// certificate from that request with the broker CA, taking only the public key from it: the
// subject, the validity and every extension are the C2's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "pqot/crypto/key_file.hpp"

namespace pqot::pki {

/// A certificate request longer than this is refused before it is parsed.
inline constexpr std::size_t kMaxCsrBytes = 16 * 1024;
/// CA certificate and key files longer than this are refused.
inline constexpr std::size_t kMaxCaFileBytes = 64 * 1024;
/// Validity of an issued certificate: 1..kMaxEnrolDays days.
inline constexpr int kMaxEnrolDays = 3650;
/// Common names: 1..kMaxEnrolNameLength characters of [A-Za-z0-9._-] ("dev-0123456789abcdef").
inline constexpr std::size_t kMaxEnrolNameLength = 64;
/// RSA keys in a request: kMinRsaBits..kMaxRsaBits.
inline constexpr int kMinRsaBits = 2048;
inline constexpr int kMaxRsaBits = 8192;

/// True if `name` is a valid enrolment common name (see kMaxEnrolNameLength).
bool is_enrol_name(std::string_view name) noexcept;

/// A device's new TLS key and its request.
struct KeyAndRequest {
  crypto::SecretString key_pem;  ///< PKCS#8 "PRIVATE KEY", unencrypted
  std::string csr_pem;           ///< PKCS#10 "CERTIFICATE REQUEST", subject CN=`common_name`
};

/// A fresh ECDSA P-256 key and a request signed by it for CN=`common_name`.
/// Throws crypto::Error{invalid_argument} for an invalid name, Error{internal} if OpenSSL fails.
KeyAndRequest make_key_and_request(std::string_view common_name);

/// The broker CA as `pqot pki init` writes it: DIR/ca.crt and DIR/ca.key (PEM).
struct CaFiles {
  std::filesystem::path cert;
  std::filesystem::path key;
  static CaFiles in_dir(const std::filesystem::path& dir) { return {dir / "ca.crt", dir / "ca.key"}; }
};

struct IssuedCertificate {
  std::string pem;             ///< the certificate, PEM
  std::string serial_hex;      ///< 32 lower-case hex digits (16 bytes, leading zeros kept)
  std::int64_t not_after_ms = 0;  ///< notAfter, milliseconds since the Unix epoch
  std::string not_after;       ///< notAfter as "YYYY-MM-DDTHH:MM:SSZ"
};

/// Issues a client certificate for the request `csr_pem` (at most kMaxCsrBytes, PEM):
/// - the request's self-signature must verify, its subject must hold exactly one CN and that CN
///   must equal `expected_cn` (the caller's choice, is_enrol_name); any other subject attribute
///   or requested extension is ignored;
/// - its key must be ECDSA P-256 or RSA of kMinRsaBits..kMaxRsaBits bits;
/// - `days` is 1..kMaxEnrolDays, and the certificate may not outlive the CA.
/// The certificate: version 3, 16-byte random positive serial, subject CN=`expected_cn`, issuer
/// the CA's subject, notBefore 5 minutes ago, basicConstraints critical CA:FALSE, keyUsage critical
/// digitalSignature, extendedKeyUsage clientAuth, subjectAltName URI:urn:pqot:client:<CN>,
/// subject and authority key identifiers; signed with the CA key and SHA-256.
/// Throws crypto::Error{invalid_argument} for every refusal of the request or the arguments
/// (what() says which), Error{invalid_key} for a refused key type or size, and
/// Error{invalid_encoding} for CA files that are not a CA certificate and its key; Error{internal}
/// if OpenSSL fails.
IssuedCertificate issue_client_certificate(const CaFiles& ca, std::string_view csr_pem,
                                           std::string_view expected_cn, int days);

}  // namespace pqot::pki
