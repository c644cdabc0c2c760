// Enrolment certificates (docs/pki.md, "Enrolment certificates"): a device's key and request, the
// C2's certificate from it checked with OpenSSL's own verifier, and every refusal of a request.
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>

#include "../support/temp_dir.hpp"
#include "pqot/common/files.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/pki/enrol.hpp"
#include "pqot/pki/test_pki.hpp"

namespace pqot::pki::enrol_test {
namespace {

namespace fs = std::filesystem;
using crypto::Error;
using crypto::ErrorCode;
using pqot::test::TempDir;

template <auto Free>
struct Free_ {
  template <class T>
  void operator()(T* p) const noexcept {
    Free(p);
  }
};
using Cert = std::unique_ptr<X509, Free_<X509_free>>;
using Req = std::unique_ptr<X509_REQ, Free_<X509_REQ_free>>;
using Key = std::unique_ptr<EVP_PKEY, Free_<EVP_PKEY_free>>;
using Bio = std::unique_ptr<BIO, Free_<BIO_free_all>>;
using Store = std::unique_ptr<X509_STORE, Free_<X509_STORE_free>>;
using StoreCtx = std::unique_ptr<X509_STORE_CTX, Free_<X509_STORE_CTX_free>>;

constexpr const char* kDevice = "dev-0123456789abcdef";

Cert cert_of(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

Cert cert_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return cert_of(s.str());
}

Req req_of(const std::string& pem) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return Req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
}

std::string pem_of(X509_REQ* req) {
  Bio bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509_REQ(bio.get(), req);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

// A request for `cn` with a key of our choosing and, optionally, a requested extension.
std::string request_with(EVP_PKEY* key, const std::string& cn, const char* requested_bc = nullptr) {
  Req req(X509_REQ_new());
  X509_NAME_add_entry_by_txt(X509_REQ_get_subject_name(req.get()), "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(X509_REQ_get_subject_name(req.get()), "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("evil"), -1, -1, 0);
  X509_REQ_set_pubkey(req.get(), key);
  if (requested_bc != nullptr) {
    STACK_OF(X509_EXTENSION)* exts = sk_X509_EXTENSION_new_null();
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, nullptr, NID_basic_constraints, requested_bc);
    sk_X509_EXTENSION_push(exts, ext);
    X509_REQ_add_extensions(req.get(), exts);
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
  }
  X509_REQ_sign(req.get(), key, EVP_sha256());
  return pem_of(req.get());
}

// The chain check a broker makes for a TLS client: CA, signature, validity, purpose sslclient.
int verify_client(X509* leaf, X509* ca) {
  Store store(X509_STORE_new());
  X509_STORE_add_cert(store.get(), ca);
  StoreCtx ctx(X509_STORE_CTX_new());
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr);
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  const int ok = X509_verify_cert(ctx.get());
  return ok == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx.get());
}

std::string san_of(X509* cert) {
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  std::string out;
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names, i);
    if (n->type == GEN_URI) {
      out += std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(n->d.uniformResourceIdentifier)),
                         static_cast<std::size_t>(ASN1_STRING_length(n->d.uniformResourceIdentifier)));
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

class PkiEnrol : public ::testing::Test {
 protected:
  void SetUp() override {
    PkiOptions o;
    o.dir = tmp_.path() / "ca";
    o.clients = 0;
    o.days = 10;
    o.ca_days = 100;
    create_test_pki(o);
    ca_ = CaFiles::in_dir(o.dir);
  }
  TempDir tmp_;
  CaFiles ca_;
};

void expect_refused(const std::function<void()>& f, ErrorCode code, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST_F(PkiEnrol, IssuedCertificateVerifiesAsAClientOfTheCa) {
  const KeyAndRequest made = make_key_and_request(kDevice);
  EXPECT_NE(std::string(made.key_pem.c_str()).find("BEGIN PRIVATE KEY"), std::string::npos);
  EXPECT_NE(made.csr_pem.find("BEGIN CERTIFICATE REQUEST"), std::string::npos);

  const IssuedCertificate issued = issue_client_certificate(ca_, made.csr_pem, kDevice, 30);
  const Cert leaf = cert_of(issued.pem);
  const Cert ca = cert_file(ca_.cert);
  ASSERT_TRUE(leaf && ca);
  EXPECT_EQ(verify_client(leaf.get(), ca.get()), X509_V_OK);

  // The key is the request's; the profile is the test PKI's client profile.
  const Req req = req_of(made.csr_pem);
  EXPECT_EQ(EVP_PKEY_eq(X509_get0_pubkey(leaf.get()), X509_REQ_get0_pubkey(req.get())), 1);
  EXPECT_EQ(X509_check_ca(leaf.get()), 0);
  EXPECT_TRUE(X509_get_key_usage(leaf.get()) & KU_DIGITAL_SIGNATURE);
  EXPECT_EQ(X509_get_key_usage(leaf.get()) & KU_KEY_CERT_SIGN, 0u);
  EXPECT_EQ(X509_get_extended_key_usage(leaf.get()), static_cast<std::uint32_t>(XKU_SSL_CLIENT));
  EXPECT_EQ(san_of(leaf.get()), std::string("urn:pqot:client:") + kDevice);
  EXPECT_NE(X509_get0_subject_key_id(leaf.get()), nullptr);
  EXPECT_NE(X509_get0_authority_key_id(leaf.get()), nullptr);
  EXPECT_EQ(X509_NAME_entry_count(X509_get_subject_name(leaf.get())), 1);

  ASSERT_EQ(issued.serial_hex.size(), 32u);
  EXPECT_EQ(issued.serial_hex.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(issued.not_after.size(), 20u);
  const std::int64_t now_ms = static_cast<std::int64_t>(std::time(nullptr)) * 1000;
  EXPECT_GT(issued.not_after_ms, now_ms + 29LL * 86400 * 1000);
  EXPECT_LT(issued.not_after_ms, now_ms + 31LL * 86400 * 1000);
}

TEST_F(PkiEnrol, RequestedSubjectAndExtensionsAreIgnored) {
  const Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  const std::string csr = request_with(key.get(), kDevice, "critical,CA:TRUE");
  const IssuedCertificate issued = issue_client_certificate(ca_, csr, kDevice, 10);
  const Cert leaf = cert_of(issued.pem);
  EXPECT_EQ(X509_check_ca(leaf.get()), 0);
  EXPECT_EQ(X509_NAME_entry_count(X509_get_subject_name(leaf.get())), 1);  // no O=evil
}

TEST_F(PkiEnrol, CommonNameMismatchIsRefused) {
  const KeyAndRequest made = make_key_and_request("dev-ffffffffffffffff");
  expect_refused([&] { issue_client_certificate(ca_, made.csr_pem, kDevice, 30); },
                 ErrorCode::invalid_argument, "expected 'dev-0123456789abcdef'");
}

TEST_F(PkiEnrol, TamperedRequestIsRefused) {
  const KeyAndRequest made = make_key_and_request(kDevice);
  const Req req = req_of(made.csr_pem);
  // Change the signed part (the subject) without signing again.
  X509_NAME* name = X509_NAME_dup(X509_REQ_get_subject_name(req.get()));
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>("x"), -1, -1, 0);
  X509_REQ_set_subject_name(req.get(), name);
  X509_NAME_free(name);
  expect_refused([&] { issue_client_certificate(ca_, pem_of(req.get()), kDevice, 30); },
                 ErrorCode::invalid_argument, "signature does not verify");
}

TEST_F(PkiEnrol, WeakOrForeignKeysAreRefused) {
  const Key rsa1024(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(1024)));
  expect_refused([&] { issue_client_certificate(ca_, request_with(rsa1024.get(), kDevice), kDevice, 30); },
                 ErrorCode::invalid_key, "1024 bits");
  const Key p384(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"));
  expect_refused([&] { issue_client_certificate(ca_, request_with(p384.get(), kDevice), kDevice, 30); },
                 ErrorCode::invalid_key, "P-256");
  const Key rsa2048(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<std::size_t>(2048)));
  const IssuedCertificate ok = issue_client_certificate(ca_, request_with(rsa2048.get(), kDevice), kDevice, 30);
  EXPECT_EQ(verify_client(cert_of(ok.pem).get(), cert_file(ca_.cert).get()), X509_V_OK);
}

TEST_F(PkiEnrol, BoundsAndArgumentsAreChecked) {
  const KeyAndRequest made = make_key_and_request(kDevice);
  expect_refused([&] { issue_client_certificate(ca_, std::string(kMaxCsrBytes + 1, 'A'), kDevice, 30); },
                 ErrorCode::invalid_argument, "longer than 16384");
  expect_refused([&] { issue_client_certificate(ca_, "not a request", kDevice, 30); },
                 ErrorCode::invalid_argument, "not a PEM PKCS#10");
  expect_refused([&] { issue_client_certificate(ca_, made.csr_pem, kDevice, 0); },
                 ErrorCode::invalid_argument, "validity");
  expect_refused([&] { issue_client_certificate(ca_, made.csr_pem, kDevice, kMaxEnrolDays + 1); },
                 ErrorCode::invalid_argument, "validity");
  // The CA lives 100 days: 101 days from now is past its end.
  expect_refused([&] { issue_client_certificate(ca_, made.csr_pem, kDevice, 101); },
                 ErrorCode::invalid_argument, "outlive the CA");
  expect_refused([&] { issue_client_certificate(ca_, made.csr_pem, "dev-x,URI:evil", 30); },
                 ErrorCode::invalid_argument, "invalid common name");
  expect_refused([&] { make_key_and_request(""); }, ErrorCode::invalid_argument, "invalid common name");
  expect_refused([&] { make_key_and_request(std::string(65, 'a')); }, ErrorCode::invalid_argument,
                 "invalid common name");
  // A CA key that does not belong to the certificate.
  CaFiles wrong = ca_;
  const fs::path other = tmp_.path() / "other";
  PkiOptions o;
  o.dir = other;
  o.clients = 0;
  create_test_pki(o);
  wrong.key = other / "ca.key";
  expect_refused([&] { issue_client_certificate(wrong, made.csr_pem, kDevice, 30); },
                 ErrorCode::invalid_encoding, "is not the key of");
  wrong = CaFiles::in_dir(tmp_.path() / "missing");
  expect_refused([&] { issue_client_certificate(wrong, made.csr_pem, kDevice, 30); },
                 ErrorCode::invalid_argument, "cannot open the CA certificate");
}

// The writer `pqot pki csr/issue` (and every key and identity file) goes through:
// common::write_new_file, include/pqot/common/files.hpp.
TEST_F(PkiEnrol, NewFilesAreNeverOverwrittenNorWrittenThroughALinkAndGetExactlyTheirMode) {
  const fs::path p = tmp_.path() / "f.key";
  const ::mode_t old_umask = ::umask(077);  // would clear 0644's group and other bits
  common::write_new_file(p, "secret", 0600);
  common::write_new_file(tmp_.path() / "f.pub", "public", 0644);
  ::umask(old_umask);
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((tmp_.path() / "f.pub").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  const auto code_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const std::system_error& e) {
      return e.code().value();
    }
    return 0;
  };
  EXPECT_EQ(code_of([&] { common::write_new_file(p, "other", 0600); }), EEXIST);
  // A link to a file that does not exist yet is not followed: its target is not created.
  const fs::path link = tmp_.path() / "link.key", target = tmp_.path() / "target.key";
  fs::create_symlink(target, link);
  EXPECT_EQ(code_of([&] { common::write_new_file(link, "other", 0600); }), EEXIST);
  EXPECT_FALSE(fs::exists(target));
  std::ifstream in(p);
  std::string text;
  in >> text;
  EXPECT_EQ(text, "secret");
}

}  // namespace
}  // namespace pqot::pki::enrol_test
