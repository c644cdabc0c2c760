// Test PKI: one CA, a server and N client certificates with OpenSSL 3.0 (docs/pki.md).
// Profile follows RFC 5280 section 4.2.1; everything is generated in memory before any file is
// written, so a failure leaves no half-made PKI behind.
#include "pqot/pki/test_pki.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <ctime>
#include <memory>
#include <system_error>
#include <utility>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/error.hpp"
#include "x509_util.hpp"

namespace pqot::pki {

namespace fs = std::filesystem;

namespace {

using crypto::Bytes;
using crypto::Error;
using crypto::ErrorCode;
using crypto::ossl::throw_error;
using x509::add_extension;
using x509::BioPtr;
using x509::check;
using x509::NamePtr;
using x509::NamesPtr;
using x509::not_after_date;
using x509::PkeyPtr;
using x509::set_random_serial;
using x509::StringPtr;
using x509::X509Ptr;

constexpr const char* kCaName = "pqot test CA";
constexpr std::size_t kMaxCommonName = 64;  // ub-common-name, RFC 5280 appendix A.1
constexpr long kBackdateSeconds = 300;      // tolerate small clock differences between hosts

// --- errors --------------------------------------------------------------------------------

[[noreturn]] void throw_invalid(const std::string& message) {
  throw Error(ErrorCode::invalid_argument, message);
}

// std::strerror is not thread-safe; the system category's message is.
std::string os_message(int err) {
  return std::system_category().message(err);
}

[[noreturn]] void throw_os(const std::string& what, const fs::path& path, int err) {
  throw Error(ErrorCode::invalid_argument,
              "cannot " + what + " '" + path.string() + "': " + os_message(err));
}

// --- subject alternative names -------------------------------------------------------------

struct San {
  int type = GEN_DNS;  // GEN_DNS, GEN_IPADD or GEN_URI
  std::string value;   // DNS name or URI; for GEN_IPADD the canonical text form
  Bytes ip;            // GEN_IPADD: 4 or 16 bytes, network order

  std::string text() const {
    const char* prefix = type == GEN_DNS ? "DNS:" : type == GEN_IPADD ? "IP:" : "URI:";
    return prefix + value;
  }
};

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Host name per RFC 1123 section 2.1: dot-separated labels of letters, digits and inner hyphens.
bool is_host_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string_view label = name.substr(start, dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
      return false;
    }
    for (char c : label) {
      if (!is_ascii_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Fills `san` as an IP SAN if `name` is an IPv4 or IPv6 literal; false for anything else.
bool parse_ip(const std::string& name, San& san) {
  std::array<std::uint8_t, 16> raw{};
  int family = AF_INET;
  std::size_t size = 4;
  if (inet_pton(AF_INET, name.c_str(), raw.data()) != 1) {
    family = AF_INET6;
    size = 16;
    if (inet_pton(AF_INET6, name.c_str(), raw.data()) != 1) return false;
  }
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (inet_ntop(family, raw.data(), text.data(), text.size()) == nullptr) return false;
  san.type = GEN_IPADD;
  san.value = text.data();
  san.ip.assign(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(size));
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::vector<San> server_sans(const std::vector<std::string>& names) {
  if (names.empty()) throw_invalid("at least one server name is needed");
  if (names.size() > PkiOptions::kMaxServerNames) {
    throw_invalid("too many server names (at most " + std::to_string(PkiOptions::kMaxServerNames) +
                  ")");
  }
  if (names.front().size() > kMaxCommonName) {
    throw_invalid("the first server name becomes the subject CN and may have at most " +
                  std::to_string(kMaxCommonName) + " characters: '" + names.front() + "'");
  }
  std::vector<San> sans;
  for (const auto& name : names) {
    San san;
    if (!parse_ip(name, san)) {
      if (!is_host_name(name)) {
        throw_invalid("server name '" + name + "' is neither an IP address nor a valid host name");
      }
      san.value = name;
    }
    // Repeats are harmless on the command line; keep the first.
    const bool seen = std::any_of(sans.begin(), sans.end(), [&](const San& s) {
      return s.type == san.type && lower(s.value) == lower(san.value);
    });
    if (!seen) sans.push_back(std::move(san));
  }
  return sans;
}

NamesPtr make_general_names(const std::vector<San>& sans) {
  NamesPtr names(GENERAL_NAMES_new());
  check(names != nullptr, "GENERAL_NAMES_new");
  for (const auto& san : sans) {
    StringPtr value(san.type == GEN_IPADD ? ASN1_OCTET_STRING_new() : ASN1_IA5STRING_new());
    check(value != nullptr, "ASN1_STRING_new");
    const bool set =
        san.type == GEN_IPADD
            ? ASN1_STRING_set(value.get(), san.ip.data(), static_cast<int>(san.ip.size())) == 1
            : ASN1_STRING_set(value.get(), san.value.data(), static_cast<int>(san.value.size())) ==
                  1;
    check(set, "ASN1_STRING_set");
    NamePtr name(GENERAL_NAME_new());
    check(name != nullptr, "GENERAL_NAME_new");
    GENERAL_NAME_set0_value(name.get(), san.type, value.release());
    check(sk_GENERAL_NAME_push(names.get(), name.get()) > 0, "sk_GENERAL_NAME_push");
    static_cast<void>(name.release());  // now owned by the stack
  }
  return names;
}

// --- keys and certificates -----------------------------------------------------------------

PkeyPtr generate_key(PkiKeyType type) {
  PkeyPtr key(type == PkiKeyType::ecdsa_p256
                  ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                  : EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(3072)));
  check(key != nullptr, std::string("generating an ") + to_string(type) + " key");
  return key;
}

const char* key_description(PkiKeyType type) {
  return type == PkiKeyType::ecdsa_p256 ? "ECDSA P-256" : "RSA 3072";
}

enum class Role { ca, server, client };

struct CertSpec {
  Role role = Role::ca;
  std::string common_name;
  std::vector<std::string> org_units;  // roles: organizationalUnitNames (clients, and the server if asked)
  std::vector<San> sans;
  int days = 0;
  PkiKeyType key_type = PkiKeyType::ecdsa_p256;
};

void add_extensions(X509* cert, X509* issuer, const CertSpec& spec) {
  add_extension(cert, issuer, NID_subject_key_identifier, "hash");
  add_extension(cert, issuer, NID_authority_key_identifier, "keyid:always");
  switch (spec.role) {
    case Role::ca:
      // pathlen:0: the CA signs leaves only, never another CA.
      add_extension(cert, issuer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
      add_extension(cert, issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
      break;
    case Role::server:
      add_extension(cert, issuer, NID_basic_constraints, "critical,CA:FALSE");
      // keyEncipherment only matters for TLS 1.2 RSA key transport; harmless otherwise.
      add_extension(cert, issuer, NID_key_usage,
                    spec.key_type == PkiKeyType::rsa_3072
                        ? "critical,digitalSignature,keyEncipherment"
                        : "critical,digitalSignature");
      add_extension(cert, issuer, NID_ext_key_usage, "serverAuth");
      break;
    case Role::client:
      add_extension(cert, issuer, NID_basic_constraints, "critical,CA:FALSE");
      add_extension(cert, issuer, NID_key_usage, "critical,digitalSignature");
      add_extension(cert, issuer, NID_ext_key_usage, "clientAuth");
      break;
  }
  if (!spec.sans.empty()) {
    const NamesPtr names = make_general_names(spec.sans);
    check(X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_APPEND) == 1,
          "adding subjectAltName");
  }
}

// `issuer` and `issuer_key` are null for the self-signed CA.
X509Ptr make_certificate(const CertSpec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key) {
  X509Ptr cert(X509_new());
  check(cert != nullptr, "X509_new");
  check(X509_set_version(cert.get(), X509_VERSION_3) == 1, "X509_set_version");
  set_random_serial(cert.get());

  X509_NAME* subject = X509_get_subject_name(cert.get());
  check(X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(spec.common_name.c_str()),
                                   -1, -1, 0) == 1,
        "setting CN '" + spec.common_name + "'");
  for (const auto& ou : spec.org_units) {
    check(X509_NAME_add_entry_by_txt(subject, "OU", MBSTRING_UTF8,
                                     reinterpret_cast<const unsigned char*>(ou.c_str()), -1, -1, 0) == 1,
          "setting OU '" + ou + "'");
  }
  check(X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : subject) == 1,
        "X509_set_issuer_name");

  check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -kBackdateSeconds) != nullptr,
        "setting notBefore");
  check(X509_time_adj_ex(X509_getm_notAfter(cert.get()), spec.days, 0, nullptr) != nullptr,
        "setting notAfter");
  check(X509_set_pubkey(cert.get(), key) == 1, "X509_set_pubkey");

  X509* signer = issuer ? issuer : cert.get();
  add_extensions(cert.get(), signer, spec);
  check(X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) > 0,
        "signing the certificate for '" + spec.common_name + "'");
  return cert;
}

std::string subject_text(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr, "BIO_new");
  check(X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0,
        "X509_NAME_print_ex");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(std::max(size, 0L)));
}

// One key pair with its certificate, ready to be written.
struct Entity {
  std::string base;  // "ca", "server", "client1", ...
  CertSpec spec;
  PkeyPtr key;
  X509Ptr cert;
};

// --- files ---------------------------------------------------------------------------------

constexpr unsigned kKeyMode = 0600;
constexpr unsigned kCertMode = 0644;

// Undoes what a failed create_test_pki() made: its new files, then its new (empty) directories.
class Rollback {
 public:
  Rollback() = default;
  Rollback(const Rollback&) = delete;
  Rollback& operator=(const Rollback&) = delete;
  ~Rollback() {
    if (committed_) return;
    for (auto it = files_.rbegin(); it != files_.rend(); ++it) ::unlink(it->c_str());
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) ::rmdir(it->c_str());
  }
  void created_file(const fs::path& p) { files_.push_back(p); }
  void created_dir(const fs::path& p) { dirs_.push_back(p); }
  void commit() noexcept { committed_ = true; }

 private:
  std::vector<fs::path> files_;
  std::vector<fs::path> dirs_;
  bool committed_ = false;
};

// Without trailing separators, so parent_path() walks up component by component.
fs::path strip_trailing_separators(fs::path dir) {
  while (dir.has_relative_path() && !dir.has_filename()) dir = dir.parent_path();
  return dir;
}

// mkdir -p with mode 0700 for every directory we make; existing ones keep their mode.
void make_directories(const fs::path& dir, Rollback& rollback) {
  std::vector<fs::path> missing;
  for (fs::path p = strip_trailing_separators(dir); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) throw_invalid("'" + p.string() + "' is not a directory");
      break;
    }
    // ENOTDIR: some ancestor is a file; walking up reports which one.
    if (errno != ENOENT && errno != ENOTDIR) throw_os("access", p, errno);
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0700) != 0) throw_os("create directory", *it, errno);
    rollback.created_dir(*it);
    if (::chmod(it->c_str(), 0700) != 0) throw_os("set the mode of", *it, errno);
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd& operator=(Fd&&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Opens `path` for writing with `mode` from the first moment; O_NOFOLLOW so a planted symlink
// cannot redirect a private key elsewhere.
Fd open_target(const fs::path& path, unsigned mode, bool overwrite, Rollback& rollback) {
  constexpr int kFlags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::open(path.c_str(), kFlags | O_CREAT | O_EXCL, mode);
  if (fd >= 0) {
    rollback.created_file(path);
  } else if (errno == EEXIST && overwrite) {
    fd = ::open(path.c_str(), kFlags | O_TRUNC);
  } else if (errno == EEXIST) {
    throw_invalid("'" + path.string() + "' already exists; refusing to overwrite it");
  }
  if (fd < 0) throw_os("create", path, errno);
  Fd file(fd);
  struct stat st {};
  if (::fstat(file.get(), &st) != 0) throw_os("stat", path, errno);
  if (!S_ISREG(st.st_mode)) throw_invalid("'" + path.string() + "' is not a regular file");
  // The umask may have cleared bits, and an overwritten file keeps its old mode: set it exactly.
  if (::fchmod(file.get(), mode) != 0) throw_os("set the mode of", path, errno);
  return file;
}

template <class WritePem>
void write_pem(const fs::path& path, unsigned mode, bool overwrite, Rollback& rollback,
               WritePem write) {
  Fd file = open_target(path, mode, overwrite, rollback);
  {
    // An fd BIO writes straight through: no buffer of ours is left holding the PEM key.
    BioPtr bio(BIO_new_fd(file.get(), BIO_NOCLOSE));
    check(bio != nullptr, "BIO_new_fd");
    errno = 0;
    if (write(bio.get()) != 1 || BIO_flush(bio.get()) != 1) {
      const int err = errno;
      if (err != 0) {
        ERR_clear_error();
        throw Error(ErrorCode::internal,
                    "writing '" + path.string() + "' failed: " + os_message(err));
      }
      throw_error("writing '" + path.string() + "'");
    }
  }
  if (::close(file.release()) != 0) {
    throw Error(ErrorCode::internal,
                "writing '" + path.string() + "' failed: " + os_message(errno));
  }
}

PkiFile describe_cert(const fs::path& dir, const Entity& e) {
  PkiFile f;
  f.name = e.base + ".crt";
  f.path = dir / f.name;
  f.mode = kCertMode;
  f.subject = subject_text(e.cert.get());
  for (const auto& san : e.spec.sans) f.sans.push_back(san.text());
  f.is_ca = e.spec.role == Role::ca;
  f.not_after = not_after_date(e.cert.get());
  return f;
}

PkiFile describe_key(const fs::path& dir, const Entity& e) {
  PkiFile f;
  f.name = e.base + ".key";
  f.path = dir / f.name;
  f.mode = kKeyMode;
  f.is_private_key = true;
  f.key_description = key_description(e.spec.key_type);
  return f;
}

void validate(const PkiOptions& o) {
  if (o.dir.empty()) throw_invalid("the output directory is empty");
  if (o.clients < 0 || o.clients > PkiOptions::kMaxClients) {
    throw_invalid("number of clients must be 0.." + std::to_string(PkiOptions::kMaxClients) +
                  ", got " + std::to_string(o.clients));
  }
  if (o.days < 1 || o.days > PkiOptions::kMaxDays) {
    throw_invalid("validity must be 1.." + std::to_string(PkiOptions::kMaxDays) + " days, got " +
                  std::to_string(o.days));
  }
  if (o.ca_days < 1 || o.ca_days > PkiOptions::kMaxDays) {
    throw_invalid("CA validity must be 1.." + std::to_string(PkiOptions::kMaxDays) + " days, got " +
                  std::to_string(o.ca_days));
  }
  if (o.key_type != PkiKeyType::ecdsa_p256 && o.key_type != PkiKeyType::rsa_3072) {
    throw_invalid("unknown key type");
  }
  const auto check_roles = [](const std::vector<std::string>& roles) {
    for (const auto& role : roles) {
      const bool printable = std::all_of(role.begin(), role.end(), [](unsigned char c) { return c > 32 && c < 127; });
      if (role.empty() || role.size() > 64 || !printable) {
        throw_invalid("role '" + role + "' must be 1..64 printable characters without spaces");
      }
    }
  };
  for (const auto& [client, roles] : o.client_roles) {
    if (client < 1 || client > o.clients) {
      throw_invalid("role for client " + std::to_string(client) + ", but there are only " +
                    std::to_string(o.clients) + " clients");
    }
    check_roles(roles);
  }
  check_roles(o.server_roles);
}

// Every target is checked before anything is created: refuse the run as a whole, not halfway.
void check_targets(const PkiOptions& o) {
  for (const auto& name : pki_file_names(o)) {
    const fs::path path = o.dir / name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) continue;  // ENOTDIR: make_directories reports it
      throw_os("access", path, errno);
    }
    if (!o.overwrite)
      throw_invalid("'" + path.string() + "' already exists; refusing to overwrite it");
    if (!S_ISREG(st.st_mode)) {
      throw_invalid("'" + path.string() + "' exists and is not a regular file");
    }
  }
}

}  // namespace

PkiKeyType parse_pki_key_type(std::string_view name) {
  if (name == "ecdsa") return PkiKeyType::ecdsa_p256;
  if (name == "rsa") return PkiKeyType::rsa_3072;
  throw Error(ErrorCode::invalid_argument,
              "unknown key type '" + std::string(name) + "' (expected ecdsa or rsa)");
}

const char* to_string(PkiKeyType type) noexcept {
  return type == PkiKeyType::rsa_3072 ? "rsa" : "ecdsa";
}

std::vector<std::string> pki_file_names(const PkiOptions& options) {
  std::vector<std::string> names{"ca.crt", "ca.key", "server.crt", "server.key"};
  for (int i = 1; i <= std::clamp(options.clients, 0, PkiOptions::kMaxClients); ++i) {
    names.push_back("client" + std::to_string(i) + ".crt");
    names.push_back("client" + std::to_string(i) + ".key");
  }
  return names;
}

std::vector<fs::path> existing_pki_files(const PkiOptions& options) {
  std::vector<fs::path> existing;
  for (const auto& name : pki_file_names(options)) {
    struct stat st {};
    const fs::path path = options.dir / name;
    if (::lstat(path.c_str(), &st) == 0) existing.push_back(path);
  }
  return existing;
}

PkiSummary create_test_pki(const PkiOptions& options) {
  validate(options);
  std::vector<San> names = server_sans(options.server_names);
  check_targets(options);
  ERR_clear_error();  // so error messages name only this call's failures

  Rollback rollback;
  make_directories(options.dir, rollback);

  // Generate everything first: an OpenSSL failure then leaves no files behind.
  std::vector<Entity> entities;
  entities.reserve(2 + static_cast<std::size_t>(options.clients));
  auto add = [&](std::string base, Role role, std::string cn, std::vector<San> sans, int days,
                 std::vector<std::string> org_units = {}) {
    Entity e;
    e.base = std::move(base);
    e.spec = CertSpec{role, std::move(cn), std::move(org_units), std::move(sans), days, options.key_type};
    e.key = generate_key(options.key_type);
    X509* issuer = entities.empty() ? nullptr : entities.front().cert.get();
    EVP_PKEY* issuer_key = entities.empty() ? nullptr : entities.front().key.get();
    e.cert = make_certificate(e.spec, e.key.get(), issuer, issuer_key);
    entities.push_back(std::move(e));
  };
  // The CA outlives its leaves, so a chain is never cut short by its root.
  add("ca", Role::ca, kCaName, {}, std::max(options.ca_days, options.days));
  const std::string server_cn = names.front().value;
  add("server", Role::server, server_cn, std::move(names), options.days, options.server_roles);
  for (int i = 1; i <= options.clients; ++i) {
    const std::string id = "client" + std::to_string(i);
    San uri;
    uri.type = GEN_URI;
    uri.value = "urn:pqot:client:" + id;
    const auto roles = options.client_roles.find(i);
    add(id, Role::client, id, {uri}, options.days,
        roles == options.client_roles.end() ? std::vector<std::string>{} : roles->second);
  }

  PkiSummary summary;
  summary.dir = options.dir;
  for (const auto& e : entities) {
    PkiFile crt = describe_cert(options.dir, e);
    write_pem(crt.path, crt.mode, options.overwrite, rollback,
              [&](BIO* bio) { return PEM_write_bio_X509(bio, e.cert.get()); });
    PkiFile key = describe_key(options.dir, e);
    // PKCS#8, unencrypted: this is a test PKI (docs/pki.md).
    write_pem(key.path, key.mode, options.overwrite, rollback, [&](BIO* bio) {
      return PEM_write_bio_PrivateKey(bio, e.key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    });
    summary.files.push_back(std::move(crt));
    summary.files.push_back(std::move(key));
  }
  rollback.commit();
  return summary;
}

}  // namespace pqot::pki
