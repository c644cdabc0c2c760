// Test PKI (docs/pki.md): files and modes, the certificate profile checked with OpenSSL's own
// verifier, and a real TLS 1.3 mutual-auth handshake over in-memory BIO pairs.
#include "../support/temp_dir.hpp"
#include "pqot/pki/test_pki.hpp"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "pqot/crypto/error.hpp"

namespace pqot::pki {
namespace {

using crypto::Error;
using crypto::ErrorCode;

namespace fs = std::filesystem;

template <auto Free>
struct Deleter {
  template <class T>
  void operator()(T* p) const noexcept {
    Free(p);
  }
};
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, Deleter<SSL_CTX_free>>;
using SslPtr = std::unique_ptr<SSL, Deleter<SSL_free>>;

using pqot::test::TempDir;

X509Ptr load_cert(const fs::path& path) {
  std::unique_ptr<BIO, Deleter<BIO_free_all>> bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) return nullptr;
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

PkeyPtr load_key(const fs::path& path) {
  std::unique_ptr<BIO, Deleter<BIO_free_all>> bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) return nullptr;
  return PkeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string common_name(X509* cert) {
  X509_NAME* name = X509_get_subject_name(cert);
  const int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (i < 0) return {};
  const ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                     static_cast<std::size_t>(ASN1_STRING_length(data)));
}

std::string serial_hex(X509* cert) {
  const BnPtr bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  char* hex = bn ? BN_bn2hex(bn.get()) : nullptr;
  std::string text = hex ? hex : "";
  OPENSSL_free(hex);
  return text;
}

bool extension_is_critical(X509* cert, int nid) {
  const int i = X509_get_ext_by_NID(cert, nid, -1);
  return i >= 0 && X509_EXTENSION_get_critical(X509_get_ext(cert, i)) == 1;
}

// X509_V_OK when `cert` chains to `ca` for `purpose` (X509_PURPOSE_SSL_SERVER, ...).
int verify(X509* ca, X509* cert, int purpose) {
  StorePtr store(X509_STORE_new());
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert, nullptr) != 1 ||
      X509_STORE_CTX_set_purpose(ctx.get(), purpose) != 1) {
    return X509_V_ERR_UNSPECIFIED;
  }
  const int ok = X509_verify_cert(ctx.get());
  const int err = X509_STORE_CTX_get_error(ctx.get());
  ERR_clear_error();
  return ok == 1 ? X509_V_OK : (err == X509_V_OK ? X509_V_ERR_UNSPECIFIED : err);
}

PkiOptions options_in(const fs::path& dir) {
  PkiOptions o;
  o.dir = dir;
  return o;
}

void expect_invalid(const PkiOptions& o, const std::string& needle) {
  try {
    create_test_pki(o);
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// --- files ---------------------------------------------------------------------------------

TEST(TestPki, WritesEveryFileWithItsMode) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "new" / "pki";  // parents are created too
  const PkiSummary summary = create_test_pki(options_in(dir));

  const std::vector<std::string> expected{"ca.crt",      "ca.key",      "server.crt",
                                          "server.key",  "client1.crt", "client1.key",
                                          "client2.crt", "client2.key"};
  EXPECT_EQ(pki_file_names(options_in(dir)), expected);
  ASSERT_EQ(summary.files.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const PkiFile& f = summary.files[i];
    EXPECT_EQ(f.name, expected[i]);
    EXPECT_EQ(f.path, dir / expected[i]);
    ASSERT_TRUE(fs::is_regular_file(f.path)) << f.path;
    const bool is_key = f.name.ends_with(".key");
    EXPECT_EQ(f.is_private_key, is_key);
    EXPECT_EQ(mode_of(f.path), is_key ? 0600u : 0644u) << f.name;
    EXPECT_EQ(f.mode, is_key ? 0600u : 0644u) << f.name;
    if (is_key) {
      EXPECT_NE(load_key(f.path), nullptr) << f.name;
      EXPECT_EQ(f.key_description, "ECDSA P-256");
    } else {
      EXPECT_NE(load_cert(f.path), nullptr) << f.name;
      EXPECT_EQ(f.not_after.size(), 10u);
    }
  }
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mode_of(dir.parent_path()), 0700u);
  EXPECT_EQ(summary.files[0].subject, "CN=pqot test CA");
  EXPECT_TRUE(summary.files[0].is_ca);
  EXPECT_EQ(summary.files[2].subject, "CN=localhost");
  EXPECT_EQ(summary.files[2].sans, (std::vector<std::string>{"DNS:localhost", "IP:127.0.0.1"}));
  EXPECT_EQ(summary.files[4].sans, std::vector<std::string>{"URI:urn:pqot:client:client1"});
}

TEST(TestPki, ExistingDirectoryKeepsItsMode) {
  TempDir tmp;
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0755), 0);
  create_test_pki(options_in(tmp.path()));
  EXPECT_EQ(mode_of(tmp.path()), 0755u);
}

TEST(TestPki, ZeroClientsWritesCaAndServerOnly) {
  TempDir tmp;
  PkiOptions o = options_in(tmp.path());
  o.clients = 0;
  EXPECT_EQ(create_test_pki(o).files.size(), 4u);
  EXPECT_FALSE(fs::exists(tmp.path() / "client1.crt"));
}

TEST(TestPki, RefusesToOverwriteBeforeWritingAnything) {
  TempDir tmp;
  const fs::path planted = tmp.path() / "client2.key";
  std::ofstream(planted) << "old";
  ASSERT_EQ(::chmod(planted.c_str(), 0644), 0);

  expect_invalid(options_in(tmp.path()), "client2.key");
  EXPECT_EQ(read_file(planted), "old");
  EXPECT_FALSE(fs::exists(tmp.path() / "ca.crt"));  // checked before the first write
  EXPECT_FALSE(fs::exists(tmp.path() / "ca.key"));

  PkiOptions o = options_in(tmp.path());
  o.overwrite = true;
  create_test_pki(o);
  EXPECT_NE(load_key(planted), nullptr);
  EXPECT_EQ(mode_of(planted), 0600u);  // the old 0644 is not kept
}

TEST(TestPki, SecondRunNeedsOverwrite) {
  TempDir tmp;
  create_test_pki(options_in(tmp.path()));
  const std::string ca = read_file(tmp.path() / "ca.crt");
  expect_invalid(options_in(tmp.path()), "ca.crt");
  EXPECT_EQ(read_file(tmp.path() / "ca.crt"), ca);

  PkiOptions o = options_in(tmp.path());
  o.overwrite = true;
  create_test_pki(o);
  EXPECT_NE(read_file(tmp.path() / "ca.crt"), ca);  // a new CA
}

TEST(TestPki, NeverFollowsASymlinkEvenWhenOverwriting) {
  TempDir tmp;
  const fs::path victim = tmp.path() / "victim";
  std::ofstream(victim) << "keep me";
  const fs::path dir = tmp.path() / "pki";
  create_test_pki(options_in(dir));
  fs::remove(dir / "server.key");
  fs::create_symlink(victim, dir / "server.key");

  PkiOptions o = options_in(dir);
  o.overwrite = true;
  expect_invalid(o, "server.key");
  EXPECT_EQ(read_file(victim), "keep me");
}

TEST(TestPki, DirectoryUnderAFileIsRejected) {
  TempDir tmp;
  std::ofstream(tmp.path() / "file") << "x";
  expect_invalid(options_in(tmp.path() / "file" / "pki"), "not a directory");
}

TEST(TestPki, RejectsBadOptions) {
  TempDir tmp;
  auto with = [&](auto change) {
    PkiOptions o = options_in(tmp.path() / "pki");
    change(o);
    return o;
  };
  expect_invalid(with([](PkiOptions& o) { o.clients = -1; }), "clients");
  expect_invalid(with([](PkiOptions& o) { o.clients = 1001; }), "clients");
  expect_invalid(with([](PkiOptions& o) { o.days = 0; }), "days");
  expect_invalid(with([](PkiOptions& o) { o.days = PkiOptions::kMaxDays + 1; }), "days");
  expect_invalid(with([](PkiOptions& o) { o.server_names.clear(); }), "server name");
  expect_invalid(with([](PkiOptions& o) { o.server_names = {"bad name"}; }), "bad name");
  expect_invalid(with([](PkiOptions& o) { o.server_names = {"-dash.example"}; }), "-dash");
  expect_invalid(with([](PkiOptions& o) { o.server_names = {"a..b"}; }), "a..b");
  expect_invalid(with([](PkiOptions& o) { o.server_names = {std::string(65, 'a')}; }), "CN");
  expect_invalid(with([](PkiOptions& o) { o.dir.clear(); }), "directory");
  EXPECT_FALSE(fs::exists(tmp.path() / "pki"));  // nothing made for rejected options

  EXPECT_EQ(parse_pki_key_type("ecdsa"), PkiKeyType::ecdsa_p256);
  EXPECT_EQ(parse_pki_key_type("rsa"), PkiKeyType::rsa_3072);
  try {
    parse_pki_key_type("dsa");
    ADD_FAILURE() << "dsa accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
}

// --- certificate profile -------------------------------------------------------------------

TEST(TestPki, CaIsASelfSignedLeafOnlyCa) {
  TempDir tmp;
  create_test_pki(options_in(tmp.path()));
  const X509Ptr ca = load_cert(tmp.path() / "ca.crt");
  ASSERT_NE(ca, nullptr);
  EXPECT_EQ(common_name(ca.get()), "pqot test CA");
  EXPECT_EQ(verify(ca.get(), ca.get(), X509_PURPOSE_ANY), X509_V_OK);
  EXPECT_NE(X509_get_extension_flags(ca.get()) & EXFLAG_CA, 0u);
  EXPECT_EQ(X509_get_pathlen(ca.get()), 0);
  EXPECT_TRUE(extension_is_critical(ca.get(), NID_basic_constraints));
  EXPECT_TRUE(extension_is_critical(ca.get(), NID_key_usage));
  EXPECT_EQ(X509_get_key_usage(ca.get()),
            static_cast<std::uint32_t>(KU_KEY_CERT_SIGN | KU_CRL_SIGN));
  EXPECT_NE(X509_get0_subject_key_id(ca.get()), nullptr);
  EXPECT_EQ(X509_get_signature_nid(ca.get()), NID_ecdsa_with_SHA256);
  EXPECT_EQ(X509_get_version(ca.get()), X509_VERSION_3);
}

TEST(TestPki, ServerCertChainsForServerAuthOnly) {
  TempDir tmp;
  create_test_pki(options_in(tmp.path()));
  const X509Ptr ca = load_cert(tmp.path() / "ca.crt");
  const X509Ptr server = load_cert(tmp.path() / "server.crt");
  ASSERT_TRUE(ca && server);
  EXPECT_EQ(verify(ca.get(), server.get(), X509_PURPOSE_SSL_SERVER), X509_V_OK);
  EXPECT_NE(verify(ca.get(), server.get(), X509_PURPOSE_SSL_CLIENT), X509_V_OK);
  EXPECT_EQ(common_name(server.get()), "localhost");
  EXPECT_EQ(X509_check_host(server.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(server.get(), "example.com", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.0.0.2", 0), 0);
  EXPECT_EQ(X509_get_extension_flags(server.get()) & EXFLAG_CA, 0u);
  EXPECT_EQ(X509_get_key_usage(server.get()), static_cast<std::uint32_t>(KU_DIGITAL_SIGNATURE));
  EXPECT_EQ(X509_get_extended_key_usage(server.get()), static_cast<std::uint32_t>(XKU_SSL_SERVER));
  // authorityKeyIdentifier names the CA's key.
  ASSERT_NE(X509_get0_authority_key_id(server.get()), nullptr);
  EXPECT_EQ(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(server.get()),
                                  X509_get0_subject_key_id(ca.get())),
            0);
}

TEST(TestPki, ServerNamesBecomeDnsAndIpSans) {
  TempDir tmp;
  PkiOptions o = options_in(tmp.path());
  o.server_names = {"plc1.plant.example", "10.0.0.5", "gateway", "::1", "fd00::0:5", "gateway"};
  const PkiSummary summary = create_test_pki(o);
  EXPECT_EQ(summary.files[2].sans,
            (std::vector<std::string>{"DNS:plc1.plant.example", "IP:10.0.0.5", "DNS:gateway",
                                      "IP:::1", "IP:fd00::5"}));
  const X509Ptr server = load_cert(tmp.path() / "server.crt");
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(common_name(server.get()), "plc1.plant.example");
  EXPECT_EQ(X509_check_host(server.get(), "plc1.plant.example", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(server.get(), "gateway", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "10.0.0.5", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "::1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "fd00::5", 0), 1);
  // The defaults are replaced, not extended.
  EXPECT_EQ(X509_check_host(server.get(), "localhost", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(server.get(), "127.0.0.1", 0), 0);
  // An address is an IP SAN only, never a DNS SAN.
  EXPECT_EQ(X509_check_host(server.get(), "10.0.0.5", 0, 0, nullptr), 0);
}

TEST(TestPki, ClientCertsChainForClientAuthWithDistinctIdentities) {
  TempDir tmp;
  PkiOptions o = options_in(tmp.path());
  o.clients = 5;
  create_test_pki(o);
  const X509Ptr ca = load_cert(tmp.path() / "ca.crt");
  ASSERT_NE(ca, nullptr);
  std::set<std::string> names;
  std::set<std::string> serials;
  for (const char* base : {"ca", "server"}) {
    const X509Ptr cert = load_cert(tmp.path() / (std::string(base) + ".crt"));
    ASSERT_NE(cert, nullptr);
    serials.insert(serial_hex(cert.get()));
  }
  for (int i = 1; i <= 5; ++i) {
    const std::string id = "client" + std::to_string(i);
    const X509Ptr cert = load_cert(tmp.path() / (id + ".crt"));
    ASSERT_NE(cert, nullptr) << id;
    EXPECT_EQ(verify(ca.get(), cert.get(), X509_PURPOSE_SSL_CLIENT), X509_V_OK) << id;
    EXPECT_NE(verify(ca.get(), cert.get(), X509_PURPOSE_SSL_SERVER), X509_V_OK) << id;
    EXPECT_EQ(common_name(cert.get()), id);
    EXPECT_EQ(X509_get_extended_key_usage(cert.get()), static_cast<std::uint32_t>(XKU_SSL_CLIENT));
    names.insert(common_name(cert.get()));
    BnPtr bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr));
    ASSERT_NE(bn, nullptr);
    EXPECT_LE(BN_num_bits(bn.get()), 128);
    EXPECT_GT(BN_num_bits(bn.get()), 64);  // fails with probability 2^-64
    EXPECT_EQ(BN_is_negative(bn.get()), 0);
    serials.insert(serial_hex(cert.get()));
  }
  EXPECT_EQ(names.size(), 5u);
  EXPECT_EQ(serials.size(), 7u);
}

TEST(TestPki, EveryKeyMatchesItsCertificate) {
  TempDir tmp;
  const PkiSummary summary = create_test_pki(options_in(tmp.path()));
  for (const char* base : {"ca", "server", "client1", "client2"}) {
    const X509Ptr cert = load_cert(tmp.path() / (std::string(base) + ".crt"));
    const PkeyPtr key = load_key(tmp.path() / (std::string(base) + ".key"));
    ASSERT_TRUE(cert && key) << base;
    EXPECT_EQ(X509_check_private_key(cert.get(), key.get()), 1) << base;
    EXPECT_EQ(EVP_PKEY_get_base_id(key.get()), EVP_PKEY_EC);
    std::array<char, 64> group{};
    ASSERT_EQ(EVP_PKEY_get_group_name(key.get(), group.data(), group.size(), nullptr), 1);
    EXPECT_STREQ(group.data(), "prime256v1");
  }
  const X509Ptr client1 = load_cert(tmp.path() / "client1.crt");
  const PkeyPtr client2_key = load_key(tmp.path() / "client2.key");
  EXPECT_NE(X509_check_private_key(client1.get(), client2_key.get()), 1);
  ERR_clear_error();
}

TEST(TestPki, ValidityFollowsDays) {
  TempDir tmp;
  PkiOptions o = options_in(tmp.path());
  o.days = 30;
  create_test_pki(o);
  auto seconds_left = [](X509* cert) {
    int days = 0, secs = 0;
    EXPECT_EQ(ASN1_TIME_diff(&days, &secs, nullptr, X509_get0_notAfter(cert)), 1);
    return static_cast<long>(days) * 86400 + secs;
  };
  auto seconds_valid_already = [](X509* cert) {
    int days = 0, secs = 0;
    EXPECT_EQ(ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(cert), nullptr), 1);
    return static_cast<long>(days) * 86400 + secs;
  };
  const X509Ptr server = load_cert(tmp.path() / "server.crt");
  const X509Ptr ca = load_cert(tmp.path() / "ca.crt");
  ASSERT_TRUE(server && ca);
  EXPECT_NEAR(seconds_left(server.get()), 30L * 86400, 3600);
  EXPECT_NEAR(seconds_left(ca.get()), 3650L * 86400, 3600);
  EXPECT_GT(seconds_valid_already(server.get()), 0);  // backdated against clock skew

  // A leaf validity beyond the CA default stretches the CA with it.
  TempDir tmp2;
  PkiOptions longer = options_in(tmp2.path());
  longer.days = 5000;
  longer.clients = 0;
  create_test_pki(longer);
  const X509Ptr ca2 = load_cert(tmp2.path() / "ca.crt");
  ASSERT_NE(ca2, nullptr);
  EXPECT_NEAR(seconds_left(ca2.get()), 5000L * 86400, 3600);
}

// --- TLS 1.3 mutual authentication ---------------------------------------------------------

SslCtxPtr make_ctx(bool server, const fs::path& ca, const fs::path& crt, const fs::path& key) {
  SslCtxPtr ctx(SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()));
  if (!ctx) return nullptr;
  const bool ok = SSL_CTX_set_min_proto_version(ctx.get(), TLS1_3_VERSION) == 1 &&
                  SSL_CTX_load_verify_locations(ctx.get(), ca.c_str(), nullptr) == 1 &&
                  (crt.empty() ||
                   (SSL_CTX_use_certificate_file(ctx.get(), crt.c_str(), SSL_FILETYPE_PEM) == 1 &&
                    SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) == 1));
  if (!ok) return nullptr;
  SSL_CTX_set_verify(ctx.get(),
                     server ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER,
                     nullptr);
  return ctx;
}

struct TlsOutcome {
  bool handshake_ok = false;  // both ends finished and application data went both ways
  long server_verify = X509_V_OK;
  long client_verify = X509_V_OK;
  std::string peer_cn;  // the client identity the server saw
};

enum class Step { pending, done, failed };

Step handshake_step(SSL* ssl) {
  const int r = SSL_do_handshake(ssl);
  if (r == 1) return Step::done;
  const int e = SSL_get_error(ssl, r);
  return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? Step::pending : Step::failed;
}

// Client and server SSL objects joined by a BIO pair, driven in turn until both settle.
TlsOutcome run_tls(SSL_CTX* client_ctx, SSL_CTX* server_ctx, const char* host) {
  TlsOutcome outcome;
  SslPtr client(SSL_new(client_ctx));
  SslPtr server(SSL_new(server_ctx));
  BIO* client_bio = nullptr;
  BIO* server_bio = nullptr;
  if (!client || !server || BIO_new_bio_pair(&client_bio, 0, &server_bio, 0) != 1) return outcome;
  SSL_set_bio(client.get(), client_bio, client_bio);  // each SSL now owns its end
  SSL_set_bio(server.get(), server_bio, server_bio);
  SSL_set_connect_state(client.get());
  SSL_set_accept_state(server.get());
  SSL_set1_host(client.get(), host);

  Step c = Step::pending;
  Step s = Step::pending;
  for (int round = 0; round < 20 && (c == Step::pending || s == Step::pending); ++round) {
    if (c == Step::pending) c = handshake_step(client.get());
    if (s == Step::pending) s = handshake_step(server.get());
  }
  outcome.server_verify = SSL_get_verify_result(server.get());
  outcome.client_verify = SSL_get_verify_result(client.get());
  if (X509* peer = SSL_get0_peer_certificate(server.get())) outcome.peer_cn = common_name(peer);

  // In TLS 1.3 the client finishes before the server has judged its certificate, so only a
  // round trip of application data shows that both sides accepted each other.
  if (c == Step::done && s == Step::done && SSL_version(client.get()) == TLS1_3_VERSION) {
    std::array<char, 8> buf{};
    const bool ping = SSL_write(client.get(), "ping", 4) == 4 &&
                      SSL_read(server.get(), buf.data(), buf.size()) == 4 &&
                      std::string(buf.data(), 4) == "ping";
    const bool pong = SSL_write(server.get(), "pong", 4) == 4 &&
                      SSL_read(client.get(), buf.data(), buf.size()) == 4 &&
                      std::string(buf.data(), 4) == "pong";
    outcome.handshake_ok = ping && pong;
  } else if (c == Step::done) {
    // Let the client read the server's alert, as a real peer would.
    std::array<char, 8> buf{};
    EXPECT_LE(SSL_read(client.get(), buf.data(), buf.size()), 0);
  }
  ERR_clear_error();
  return outcome;
}

struct Pki {
  TempDir tmp;
  fs::path file(const std::string& name) const { return tmp.path() / name; }
};

std::unique_ptr<Pki> make_pki(PkiKeyType type, int clients) {
  auto pki = std::make_unique<Pki>();
  PkiOptions o = options_in(pki->tmp.path());
  o.key_type = type;
  o.clients = clients;
  create_test_pki(o);
  return pki;
}

TEST(TestPkiTls, MutualAuthHandshakeSucceeds) {
  const auto pki = make_pki(PkiKeyType::ecdsa_p256, 2);
  const SslCtxPtr server =
      make_ctx(true, pki->file("ca.crt"), pki->file("server.crt"), pki->file("server.key"));
  ASSERT_NE(server, nullptr);
  for (const char* id : {"client1", "client2"}) {
    const SslCtxPtr client =
        make_ctx(false, pki->file("ca.crt"), pki->file(std::string(id) + ".crt"),
                 pki->file(std::string(id) + ".key"));
    ASSERT_NE(client, nullptr);
    for (const char* host : {"localhost", "127.0.0.1"}) {
      const TlsOutcome r = run_tls(client.get(), server.get(), host);
      EXPECT_TRUE(r.handshake_ok) << id << " to " << host;
      EXPECT_EQ(r.server_verify, X509_V_OK);
      EXPECT_EQ(r.client_verify, X509_V_OK);
      EXPECT_EQ(r.peer_cn, id);
    }
  }
}

TEST(TestPkiTls, ClientFromAnotherCaIsRejected) {
  const auto pki = make_pki(PkiKeyType::ecdsa_p256, 1);
  const auto other = make_pki(PkiKeyType::ecdsa_p256, 1);
  const SslCtxPtr server =
      make_ctx(true, pki->file("ca.crt"), pki->file("server.crt"), pki->file("server.key"));
  // The stranger trusts our CA (so it accepts the server) but holds a certificate of its own CA.
  const SslCtxPtr stranger =
      make_ctx(false, pki->file("ca.crt"), other->file("client1.crt"), other->file("client1.key"));
  ASSERT_TRUE(server && stranger);
  const TlsOutcome r = run_tls(stranger.get(), server.get(), "localhost");
  EXPECT_FALSE(r.handshake_ok);
  EXPECT_NE(r.server_verify, X509_V_OK);
  EXPECT_EQ(r.client_verify, X509_V_OK);
}

TEST(TestPkiTls, ClientWithoutCertificateIsRejected) {
  const auto pki = make_pki(PkiKeyType::ecdsa_p256, 0);
  const SslCtxPtr server =
      make_ctx(true, pki->file("ca.crt"), pki->file("server.crt"), pki->file("server.key"));
  const SslCtxPtr anonymous = make_ctx(false, pki->file("ca.crt"), {}, {});
  ASSERT_TRUE(server && anonymous);
  EXPECT_FALSE(run_tls(anonymous.get(), server.get(), "localhost").handshake_ok);
}

TEST(TestPkiTls, ClientRejectsServerUnderAnotherName) {
  const auto pki = make_pki(PkiKeyType::ecdsa_p256, 1);
  const SslCtxPtr server =
      make_ctx(true, pki->file("ca.crt"), pki->file("server.crt"), pki->file("server.key"));
  const SslCtxPtr client =
      make_ctx(false, pki->file("ca.crt"), pki->file("client1.crt"), pki->file("client1.key"));
  ASSERT_TRUE(server && client);
  const TlsOutcome r = run_tls(client.get(), server.get(), "plc.example");
  EXPECT_FALSE(r.handshake_ok);
  EXPECT_EQ(r.client_verify, X509_V_ERR_HOSTNAME_MISMATCH);
}

TEST(TestPkiTls, RsaKeyTypeWorksEndToEnd) {
  const auto pki = make_pki(PkiKeyType::rsa_3072, 1);
  for (const char* base : {"ca", "server", "client1"}) {
    const X509Ptr cert = load_cert(pki->file(std::string(base) + ".crt"));
    const PkeyPtr key = load_key(pki->file(std::string(base) + ".key"));
    ASSERT_TRUE(cert && key) << base;
    EXPECT_EQ(EVP_PKEY_get_base_id(key.get()), EVP_PKEY_RSA);
    EXPECT_EQ(EVP_PKEY_get_bits(key.get()), 3072);
    EXPECT_EQ(X509_check_private_key(cert.get(), key.get()), 1) << base;
    EXPECT_EQ(X509_get_signature_nid(cert.get()), NID_sha256WithRSAEncryption);
  }
  const X509Ptr ca = load_cert(pki->file("ca.crt"));
  const X509Ptr server_cert = load_cert(pki->file("server.crt"));
  const X509Ptr client_cert = load_cert(pki->file("client1.crt"));
  EXPECT_EQ(verify(ca.get(), server_cert.get(), X509_PURPOSE_SSL_SERVER), X509_V_OK);
  EXPECT_EQ(verify(ca.get(), client_cert.get(), X509_PURPOSE_SSL_CLIENT), X509_V_OK);
  EXPECT_EQ(X509_get_key_usage(server_cert.get()),
            static_cast<std::uint32_t>(KU_DIGITAL_SIGNATURE | KU_KEY_ENCIPHERMENT));

  const SslCtxPtr server =
      make_ctx(true, pki->file("ca.crt"), pki->file("server.crt"), pki->file("server.key"));
  const SslCtxPtr client =
      make_ctx(false, pki->file("ca.crt"), pki->file("client1.crt"), pki->file("client1.key"));
  ASSERT_TRUE(server && client);
  EXPECT_TRUE(run_tls(client.get(), server.get(), "localhost").handshake_ok);
}

}  // namespace
}  // namespace pqot::pki
