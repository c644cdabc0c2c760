// `pqot pki init` (docs/pki.md) through the real binary: what it prints, what it writes, and the
// usage-error convention (exit 2, one line on stderr, nothing on stdout).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../support/child_process.hpp"
#include "../support/temp_dir.hpp"
#include "../support/usage_error.hpp"

namespace {

namespace fs = std::filesystem;
using pqot::test::ProcessResult;
using pqot::test::expect_usage_error;
using pqot::test::run_process;

using pqot::test::TempDir;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

unsigned mode_of(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

ProcessResult pki_init(const fs::path& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"pki", "init", "--dir", dir.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_process(PQOT_BIN, args);
}

TEST(PqotPkiCli, InitListsEveryFileItWrote) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "pki";
  const ProcessResult r = pki_init(dir, {"--clients", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;

  const std::vector<std::string> out = lines(r.out);
  const std::vector<std::string> names{"ca.crt",     "ca.key",      "server.crt",
                                       "server.key", "client1.crt", "client1.key"};
  ASSERT_EQ(out.size(), names.size()) << r.out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(out[i].rfind(names[i] + " ", 0), 0u) << out[i];
    EXPECT_TRUE(fs::is_regular_file(dir / names[i])) << names[i];
    EXPECT_EQ(mode_of(dir / names[i]), names[i].ends_with(".key") ? 0600u : 0644u) << names[i];
  }
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_NE(out[0].find("CN=pqot test CA"), std::string::npos) << out[0];
  EXPECT_NE(out[1].find("ECDSA P-256 private key"), std::string::npos) << out[1];
  EXPECT_NE(out[2].find("CN=localhost  SAN=DNS:localhost,IP:127.0.0.1"), std::string::npos)
      << out[2];
  EXPECT_NE(out[4].find("CN=client1  SAN=URI:urn:pqot:client:client1"), std::string::npos)
      << out[4];
}

TEST(PqotPkiCli, ServerNamesReplaceTheDefaults) {
  TempDir tmp;
  const ProcessResult r =
      pki_init(tmp.path(), {"--server-name", "plc1.plant.example", "--server-name", "10.0.0.5",
                            "--server-name", "::1", "--clients", "0", "--days", "30"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> out = lines(r.out);
  ASSERT_EQ(out.size(), 4u) << r.out;
  EXPECT_NE(out[2].find("CN=plc1.plant.example  SAN=DNS:plc1.plant.example,IP:10.0.0.5,IP:::1"),
            std::string::npos)
      << out[2];
}

TEST(PqotPkiCli, RsaKeyType) {
  TempDir tmp;
  const ProcessResult r = pki_init(tmp.path(), {"--key-type", "rsa", "--clients", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("server.key  RSA 3072 private key"), std::string::npos) << r.out;
}

TEST(PqotPkiCli, ExistingFilesNeedForce) {
  TempDir tmp;
  ASSERT_EQ(pki_init(tmp.path()).exit_code, 0);
  std::ifstream in(tmp.path() / "ca.crt");
  const std::string ca((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  expect_usage_error(pki_init(tmp.path()), "--force");
  std::ifstream again(tmp.path() / "ca.crt");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()),
            ca);

  const ProcessResult forced = pki_init(tmp.path(), {"--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(lines(forced.out).size(), 8u);
}

TEST(PqotPkiCli, BadArgumentsAreUsageErrors) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "pki";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--key-type", "dsa"}, "--key-type"},
      {{"--clients", "-1"}, "--clients"},
      {{"--clients", "1001"}, "--clients"},
      {{"--clients", "two"}, "--clients"},
      {{"--days", "0"}, "--days"},
      {{"--server-name", "bad name"}, "bad name"},
      {{"--server-name", "under_score.example"}, "under_score"},
      {{"--frobnicate"}, "frobnicate"},
  };
  for (const auto& [args, needle] : cases) {
    SCOPED_TRACE(args.front() + " " + (args.size() > 1 ? args[1] : ""));
    expect_usage_error(pki_init(dir, args), needle);
    EXPECT_FALSE(fs::exists(dir));
  }
}

TEST(PqotPkiCli, MissingOrUnusableDirIsUsageError) {
  expect_usage_error(run_process(PQOT_BIN, {"pki", "init"}), "--dir");
  TempDir tmp;
  std::ofstream(tmp.path() / "file") << "x";
  // Running as root defeats permission bits, so "unwritable" here is a path through a file.
  expect_usage_error(pki_init(tmp.path() / "file" / "pki"), "not a directory");
}

TEST(PqotPkiCli, UnwritableDirIsUsageError) {
  TempDir tmp;
  ASSERT_EQ(::chmod(tmp.path().c_str(), 0555), 0);
  auto init_as_user = [](const fs::path& dir) {
    if (::geteuid() != 0) return pki_init(dir);
    // Root writes through permission bits (and CI runs as root): run the tool as nobody instead.
    return run_process("/usr/bin/setpriv", {"--reuid=65534", "--regid=65534", "--clear-groups", PQOT_BIN, "pki",
                                            "init", "--dir", dir.string()});
  };
  if (::geteuid() == 0 && run_process("/usr/bin/setpriv", {"--reuid=65534", "--regid=65534", "--clear-groups",
                                                           PQOT_BIN, "--version"}).exit_code != 0) {
    GTEST_SKIP() << "running as root and the pqot binary is not reachable for user nobody";
  }
  expect_usage_error(init_as_user(tmp.path()), "Permission denied");
  expect_usage_error(init_as_user(tmp.path() / "pki"), "Permission denied");
  ::chmod(tmp.path().c_str(), 0700);
}

TEST(PqotPkiCli, PkiWithoutSubcommandIsUsageError) {
  const ProcessResult r = run_process(PQOT_BIN, {"pki"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(r.err.rfind("pqot: error:", 0), 0u) << r.err;
}

TEST(PqotPkiCli, HelpDocumentsEveryOption) {
  const ProcessResult r = run_process(PQOT_BIN, {"pki", "init", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option :
       {"--dir", "--server-name", "--clients", "--key-type", "--days", "--force", "TEST"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing from\n" << r.out;
  }
}

}  // namespace

namespace {

TEST(PqotPkiCliRoles, ClientRoleBecomesAnOrganizationalUnit) {
  const TempDir tmp("pqot-pki-roles");
  const std::string dir = (tmp.path() / "pki").string();
  auto r = pqot::test::run_process(PQOT_BIN, {"pki", "init", "--dir", dir, "--clients", "2", "--client-role",
                                              "2=operator", "--client-role", "2=maintenance"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OU=operator"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OU=maintenance"), std::string::npos) << r.out;
  r = pqot::test::run_process(PQOT_BIN, {"pki", "init", "--dir", dir + "2", "--clients", "1", "--client-role",
                                         "3=operator"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  r = pqot::test::run_process(PQOT_BIN, {"pki", "init", "--dir", dir + "3", "--client-role", "operator"});
  EXPECT_EQ(r.exit_code, 2);
}

// The server certificate takes roles too (TRIP's connecting daemons require `trip` of it).
TEST(PqotPkiCliRoles, ServerRoleBecomesAnOrganizationalUnitOfTheServerOnly) {
  const TempDir tmp("pqot-pki-server-role");
  const std::string dir = (tmp.path() / "pki").string();
  auto r = pqot::test::run_process(PQOT_BIN, {"pki", "init", "--dir", dir, "--clients", "1", "--server-role", "trip"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("OU=trip"), r.out.rfind("OU=trip")) << r.out;  // once: the server's
  const auto server = r.out.find("server.crt");
  const auto client = r.out.find("client1.crt");
  ASSERT_NE(server, std::string::npos) << r.out;
  ASSERT_NE(client, std::string::npos) << r.out;
  const auto ou = r.out.find("OU=trip");
  EXPECT_TRUE(ou != std::string::npos && ou > server && ou < client) << r.out;
  r = pqot::test::run_process(PQOT_BIN, {"pki", "init", "--dir", dir + "2", "--server-role", "two words"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace

// `pqot pki csr` and `pqot pki issue` (docs/pki.md, "Enrolment certificates").
namespace {

std::string enrol_read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PqotPkiCliEnrol, CsrThenIssueMakesAVerifiableClientCertificate) {
  const TempDir tmp("pqot-pki-enrol");
  const fs::path ca = tmp.path() / "ca";
  ASSERT_EQ(run_process(PQOT_BIN, {"pki", "init", "--dir", ca.string(), "--clients", "0"}).exit_code, 0);
  const fs::path key = tmp.path() / "dev.key";
  const fs::path csr = tmp.path() / "dev.csr";
  const fs::path crt = tmp.path() / "dev.crt";
  ProcessResult r = run_process(PQOT_BIN, {"pki", "csr", "--key", key.string(), "--out", csr.string(),
                                           "--cn", "dev-0123456789abcdef"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(mode_of(key), 0600u);
  EXPECT_NE(enrol_read(csr).find("BEGIN CERTIFICATE REQUEST"), std::string::npos);
  EXPECT_NE(r.out.find("cn=dev-0123456789abcdef"), std::string::npos) << r.out;

  r = run_process(PQOT_BIN, {"pki", "issue", "--ca-dir", ca.string(), "--csr", csr.string(), "--cn",
                             "dev-0123456789abcdef", "--days", "30", "--out", crt.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("serial="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not_after="), std::string::npos) << r.out;
  EXPECT_NE(enrol_read(crt).find("BEGIN CERTIFICATE"), std::string::npos);

  // Never overwritten: the key, the request, the certificate.
  const std::string key_before = enrol_read(key);
  expect_usage_error(run_process(PQOT_BIN, {"pki", "csr", "--key", key.string(), "--out",
                                            (tmp.path() / "x.csr").string(), "--cn", "dev-1"}),
                     "already exists");
  EXPECT_EQ(enrol_read(key), key_before);
  EXPECT_FALSE(fs::exists(tmp.path() / "x.csr"));
  expect_usage_error(run_process(PQOT_BIN, {"pki", "issue", "--ca-dir", ca.string(), "--csr", csr.string(),
                                            "--cn", "dev-0123456789abcdef", "--out", crt.string()}),
                     "already exists");
}

TEST(PqotPkiCliEnrol, IssueRefusesAnotherName) {
  const TempDir tmp("pqot-pki-enrol");
  const fs::path ca = tmp.path() / "ca";
  ASSERT_EQ(run_process(PQOT_BIN, {"pki", "init", "--dir", ca.string(), "--clients", "0"}).exit_code, 0);
  const fs::path csr = tmp.path() / "dev.csr";
  ASSERT_EQ(run_process(PQOT_BIN, {"pki", "csr", "--key", (tmp.path() / "dev.key").string(), "--out",
                                   csr.string(), "--cn", "dev-aaaaaaaaaaaaaaaa"})
                .exit_code,
            0);
  const fs::path crt = tmp.path() / "dev.crt";
  expect_usage_error(run_process(PQOT_BIN, {"pki", "issue", "--ca-dir", ca.string(), "--csr", csr.string(),
                                            "--cn", "dev-bbbbbbbbbbbbbbbb", "--out", crt.string()}),
                     "expected 'dev-bbbbbbbbbbbbbbbb'");
  EXPECT_FALSE(fs::exists(crt));
  expect_usage_error(run_process(PQOT_BIN, {"pki", "csr", "--key", (tmp.path() / "k").string(), "--out",
                                            (tmp.path() / "c").string(), "--cn", "bad name"}),
                     "--cn");
}

}  // namespace
