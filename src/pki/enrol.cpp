// Enrolment certificates (docs/pki.md, "Enrolment certificates"). The issued profile is the test
// PKI's client profile (RFC 5280 section 4.2.1); from the request only the public key is taken.
#include "pqot/pki/enrol.hpp"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <ctime>
#include <system_error>

#include "pqot/crypto/error.hpp"
#include "x509_util.hpp"

namespace pqot::pki {

namespace fs = std::filesystem;

namespace {

using crypto::Error;
using crypto::ErrorCode;
using x509::BioPtr;
using x509::check;
using x509::PkeyPtr;
using x509::ReqPtr;
using x509::X509Ptr;

constexpr long kEnrolBackdateSeconds = 300;  // as the test PKI: small clock differences

[[noreturn]] void enrol_refuse(const std::string& message) {
  throw Error(ErrorCode::invalid_argument, message);
}

std::string enrol_os_error(int err) { return std::system_category().message(err); }

// The whole file, refused if longer than `max` (checked before reading); wiped when dropped.
crypto::SecretString read_bounded(const fs::path& path, std::size_t max, const char* what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) enrol_refuse(std::string("cannot open the ") + what + " '" + path.string() + "': " + enrol_os_error(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    enrol_refuse(std::string("the ") + what + " '" + path.string() + "' is not a regular file");
  }
  crypto::SecretString out;
  out.resize(max + 1);
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      enrol_refuse(std::string("cannot read the ") + what + " '" + path.string() + "': " + enrol_os_error(err));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got > max) {
    enrol_refuse(std::string("the ") + what + " '" + path.string() + "' is longer than " +
                 std::to_string(max) + " bytes");
  }
  out.resize(got);
  return out;
}

BioPtr mem_bio(std::string_view text) {
  BioPtr bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  check(bio != nullptr, "BIO_new_mem_buf");
  return bio;
}

void require_name(std::string_view name) {
  if (!is_enrol_name(name)) {
    enrol_refuse("invalid common name '" + std::string(name.substr(0, kMaxEnrolNameLength + 1)) +
                 "': expected 1.." + std::to_string(kMaxEnrolNameLength) +
                 " characters of A-Z a-z 0-9 . _ -");
  }
}

// ECDSA P-256, or RSA of 2048..8192 bits; nothing else (docs/pki.md).
void require_key_type(EVP_PKEY* key) {
  if (EVP_PKEY_is_a(key, "EC")) {
    std::array<char, 64> group{};
    std::size_t len = 0;
    if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group.data(), group.size(),
                                       &len) != 1 ||
        std::string_view(group.data(), len) != "prime256v1") {
      ERR_clear_error();
      throw Error(ErrorCode::invalid_key, "the request's EC key is not on P-256 (prime256v1)");
    }
    return;
  }
  if (EVP_PKEY_is_a(key, "RSA")) {
    const int bits = EVP_PKEY_get_bits(key);
    if (bits < kMinRsaBits || bits > kMaxRsaBits) {
      throw Error(ErrorCode::invalid_key, "the request's RSA key has " + std::to_string(bits) +
                                              " bits; expected " + std::to_string(kMinRsaBits) +
                                              ".." + std::to_string(kMaxRsaBits));
    }
    return;
  }
  throw Error(ErrorCode::invalid_key, "the request's key is neither ECDSA P-256 nor RSA");
}

// Exactly one CN in the subject, equal to `expected` byte for byte (as UTF-8).
void require_common_name(X509_REQ* req, std::string_view expected) {
  X509_NAME* subject = X509_REQ_get_subject_name(req);
  const int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (at < 0) enrol_refuse("the request's subject has no CN (expected CN=" + std::string(expected) + ")");
  if (X509_NAME_get_index_by_NID(subject, NID_commonName, at) >= 0) {
    enrol_refuse("the request's subject has more than one CN");
  }
  unsigned char* utf8 = nullptr;
  const int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at)));
  if (len < 0) {
    ERR_clear_error();
    enrol_refuse("the request's CN is not a valid string");
  }
  const std::string cn(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(len));
  OPENSSL_free(utf8);
  if (cn != expected) {
    const std::string shown = is_enrol_name(cn) ? "'" + cn + "'" : "a different name";
    enrol_refuse("the request is for CN " + shown + ", expected '" + std::string(expected) + "'");
  }
}

std::int64_t unix_ms(const ASN1_TIME* t) {
  std::tm tm{};
  check(ASN1_TIME_to_tm(t, &tm) == 1, "ASN1_TIME_to_tm");
  return static_cast<std::int64_t>(timegm(&tm)) * 1000;
}

std::string iso_time(const ASN1_TIME* t) {
  std::tm tm{};
  check(ASN1_TIME_to_tm(t, &tm) == 1, "ASN1_TIME_to_tm");
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text.data();
}

std::string serial_hex(X509* cert) {
  x509::BnPtr bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  check(bn != nullptr, "ASN1_INTEGER_to_BN");
  std::array<unsigned char, 16> bytes{};
  check(BN_bn2binpad(bn.get(), bytes.data(), static_cast<int>(bytes.size())) == 16, "BN_bn2binpad");
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(32);
  for (unsigned char b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0x0f]);
  }
  return out;
}

struct LoadedCa {
  X509Ptr cert;
  PkeyPtr key;
};

LoadedCa load_ca(const CaFiles& files) {
  LoadedCa ca;
  {
    const crypto::SecretString text = read_bounded(files.cert, kMaxCaFileBytes, "CA certificate");
    BioPtr bio = mem_bio(text);
    ca.cert.reset(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  }
  if (!ca.cert) {
    ERR_clear_error();
    throw Error(ErrorCode::invalid_encoding, "'" + files.cert.string() + "' holds no PEM certificate");
  }
  if (X509_check_ca(ca.cert.get()) == 0) {
    throw Error(ErrorCode::invalid_encoding, "'" + files.cert.string() + "' is not a CA certificate");
  }
  {
    const crypto::SecretString text = read_bounded(files.key, kMaxCaFileBytes, "CA key");
    BioPtr bio = mem_bio(text);
    ca.key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  }
  if (!ca.key) {
    ERR_clear_error();
    throw Error(ErrorCode::invalid_encoding,
                "'" + files.key.string() + "' holds no unencrypted PEM private key");
  }
  if (X509_check_private_key(ca.cert.get(), ca.key.get()) != 1) {
    ERR_clear_error();
    throw Error(ErrorCode::invalid_encoding, "'" + files.key.string() + "' is not the key of '" +
                                                 files.cert.string() + "'");
  }
  return ca;
}

ReqPtr parse_request(std::string_view csr_pem) {
  if (csr_pem.size() > kMaxCsrBytes) {
    enrol_refuse("the certificate request is longer than " + std::to_string(kMaxCsrBytes) + " bytes");
  }
  BioPtr bio = mem_bio(csr_pem);
  ReqPtr req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  if (!req) {
    ERR_clear_error();
    enrol_refuse("the certificate request is not a PEM PKCS#10 request");
  }
  return req;
}

}  // namespace

bool is_enrol_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxEnrolNameLength) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

KeyAndRequest make_key_and_request(std::string_view common_name) {
  require_name(common_name);
  ERR_clear_error();
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  check(key != nullptr, "generating an ECDSA P-256 key");
  ReqPtr req(X509_REQ_new());
  check(req != nullptr, "X509_REQ_new");
  check(X509_REQ_set_version(req.get(), X509_REQ_VERSION_1) == 1, "X509_REQ_set_version");
  const std::string cn(common_name);
  check(X509_NAME_add_entry_by_txt(X509_REQ_get_subject_name(req.get()), "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0) == 1,
        "setting the request's CN");
  check(X509_REQ_set_pubkey(req.get(), key.get()) == 1, "X509_REQ_set_pubkey");
  check(X509_REQ_sign(req.get(), key.get(), EVP_sha256()) > 0, "signing the request");

  KeyAndRequest out;
  {
    // Secure-heap BIO: the PEM key is wiped when the BIO is freed.
    BioPtr bio(BIO_new(BIO_s_secmem()));
    check(bio != nullptr, "BIO_new");
    check(PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1,
          "PEM_write_bio_PrivateKey");
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    if (size > 0) out.key_pem.assign(data, static_cast<std::size_t>(size));
  }
  BioPtr bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr, "BIO_new");
  check(PEM_write_bio_X509_REQ(bio.get(), req.get()) == 1, "PEM_write_bio_X509_REQ");
  out.csr_pem = x509::bio_text(bio.get());
  return out;
}

IssuedCertificate issue_client_certificate(const CaFiles& files, std::string_view csr_pem,
                                           std::string_view expected_cn, int days) {
  require_name(expected_cn);
  if (days < 1 || days > kMaxEnrolDays) {
    enrol_refuse("validity must be 1.." + std::to_string(kMaxEnrolDays) + " days, got " +
                 std::to_string(days));
  }
  ERR_clear_error();
  ReqPtr req = parse_request(csr_pem);
  EVP_PKEY* req_key = X509_REQ_get0_pubkey(req.get());
  if (req_key == nullptr) {
    ERR_clear_error();
    enrol_refuse("the certificate request's public key cannot be decoded");
  }
  // The self-signature proves the requester holds the key; a tampered request fails here.
  if (X509_REQ_verify(req.get(), req_key) != 1) {
    ERR_clear_error();
    enrol_refuse("the certificate request's signature does not verify");
  }
  require_key_type(req_key);
  require_common_name(req.get(), expected_cn);
  const LoadedCa ca = load_ca(files);

  X509Ptr cert(X509_new());
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), X509_VERSION_3) == 1, "X509_set_version");
  x509::set_random_serial(cert.get());
  const std::string cn(expected_cn);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0) == 1,
        "setting the CN");
  check(X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.cert.get())) == 1,
        "X509_set_issuer_name");
  check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -kEnrolBackdateSeconds) != nullptr,
        "setting notBefore");
  check(X509_time_adj_ex(X509_getm_notAfter(cert.get()), days, 0, nullptr) != nullptr,
        "setting notAfter");
  if (ASN1_TIME_compare(X509_get0_notAfter(cert.get()), X509_get0_notAfter(ca.cert.get())) > 0) {
    enrol_refuse("a certificate valid for " + std::to_string(days) +
                 " days would outlive the CA (valid until " + iso_time(X509_get0_notAfter(ca.cert.get())) +
                 ")");
  }
  check(X509_set_pubkey(cert.get(), req_key) == 1, "X509_set_pubkey");
  X509* issuer = ca.cert.get();
  x509::add_extension(cert.get(), issuer, NID_subject_key_identifier, "hash");
  x509::add_extension(cert.get(), issuer, NID_authority_key_identifier, "keyid:always");
  x509::add_extension(cert.get(), issuer, NID_basic_constraints, "critical,CA:FALSE");
  x509::add_extension(cert.get(), issuer, NID_key_usage, "critical,digitalSignature");
  x509::add_extension(cert.get(), issuer, NID_ext_key_usage, "clientAuth");
  // The name is [A-Za-z0-9._-] only (require_name), so it cannot inject config syntax.
  const std::string san = "URI:urn:pqot:client:" + cn;
  x509::add_extension(cert.get(), issuer, NID_subject_alt_name, san.c_str());
  check(X509_sign(cert.get(), ca.key.get(), EVP_sha256()) > 0, "signing the certificate");

  IssuedCertificate out;
  BioPtr bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr, "BIO_new");
  check(PEM_write_bio_X509(bio.get(), cert.get()) == 1, "PEM_write_bio_X509");
  out.pem = x509::bio_text(bio.get());
  out.serial_hex = serial_hex(cert.get());
  out.not_after_ms = unix_ms(X509_get0_notAfter(cert.get()));
  out.not_after = iso_time(X509_get0_notAfter(cert.get()));
  return out;
}

}  // namespace pqot::pki
