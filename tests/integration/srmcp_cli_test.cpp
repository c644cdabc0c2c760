// srmcpd and srmcp as an operator runs them: config checks, a running daemon, the client's table
// and JSON output, exit codes, and SIGTERM.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "../cli/run_process.hpp"
#include "pqot/crypto/pki.hpp"
#include "raw_session.hpp"

namespace {

namespace fs = std::filesystem;
using pqot::test::run_process;

std::string bin(const std::string& name) { return std::string(PQOT_BIN_DIR) + "/" + name; }
const std::string kPlant = std::string(PQOT_SOURCE_DIR) + "/examples/srmcp/plant.toml";

class SrmcpCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pqot-srmcp-cli-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    pqot::crypto::PkiOptions o;
    o.dir = dir_;
    o.clients = 2;
    pqot::crypto::create_test_pki(o);
  }
  void TearDown() override {
    stop();
    fs::remove_all(dir_);
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  int start(const std::string& extra = "") {
    cmd_ = bin("srmcpd") + " --config " + kPlant + " --listen 127.0.0.1:0 --ca " + file("ca.crt") + " --cert " +
           file("server.crt") + " --key " + file("server.key") + extra;
    server_ = ::popen(("exec " + cmd_ + " 2>&1").c_str(), "r");
    char line[512];
    while (server_ && std::fgets(line, sizeof(line), server_)) {
      const char* at = std::strstr(line, "listening on 127.0.0.1:");
      if (at) return std::atoi(at + std::strlen("listening on 127.0.0.1:"));
    }
    return 0;
  }
  int stop() {
    if (!server_) return -1;
    std::system(("pkill -TERM -f '^" + cmd_ + "'").c_str());
    char line[512];
    while (std::fgets(line, sizeof(line), server_)) {
      log_ += line;  // drain the log until srmcpd exits, so it never writes into a closed pipe
    }
    const int rc = ::pclose(server_);
    server_ = nullptr;
    return rc;
  }
  std::vector<std::string> client_args(int port, std::vector<std::string> rest) const {
    std::vector<std::string> a = {"--server", "127.0.0.1:" + std::to_string(port), "--ca", file("ca.crt"), "--cert",
                                  file("client1.crt"), "--key", file("client1.key")};
    a.insert(a.end(), rest.begin(), rest.end());
    return a;
  }

  fs::path dir_;
  std::string cmd_;
  std::string log_;
  FILE* server_ = nullptr;
};

TEST_F(SrmcpCli, CheckConfigAcceptsThePlantAndReportsErrorsWithTheLine) {
  auto r = run_process(bin("srmcpd"), {"--check-config", "--config", kPlant});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OK"), std::string::npos);
  const std::string bad = file("bad.toml");
  std::ofstream(bad) << "[server]\nlisten = \"127.0.0.1:4843\"\n\n[[node]]\nid = \"a\"\ntype = \"double\"\nvalue = \"x\"\n";
  r = run_process(bin("srmcpd"), {"--check-config", "--config", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.toml:"), std::string::npos) << r.err;
  r = run_process(bin("srmcpd"), {"--config", "/nonexistent.toml"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(SrmcpCli, ClientAgainstARunningDaemon) {
  const int port = start();
  ASSERT_GT(port, 0);
  auto r = run_process(bin("srmcp"), client_args(port, {"read", "plant.line1.oven.setpoint", "plant.line1.oven.temp"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plant.line1.oven.setpoint"), std::string::npos) << r.out;

  r = run_process(bin("srmcp"), client_args(port, {"--json", "write", "plant.line1.oven.setpoint=181.5"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("181.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"connect_ms\""), std::string::npos) << r.out;

  // A per-node error: exit code 3 and the status name.
  r = run_process(bin("srmcp"), client_args(port, {"read", "no.such.node"}));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("UNKNOWN_NODE (2)"), std::string::npos) << r.out;

  r = run_process(bin("srmcp"), client_args(port, {"--links", "0", "ping", "--count", "2"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run_process(bin("srmcp"), client_args(port, {"--kem", "X-Wing", "discover", "--depth", "0"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plant"), std::string::npos);

  EXPECT_EQ(stop(), 0) << "SIGTERM shuts srmcpd down cleanly";
}

TEST_F(SrmcpCli, LogsNeverContainSecrets) {
  const int port = start(" --log-level trace");
  ASSERT_GT(port, 0);
  std::string token;
  {
    pqot::srmcp::test::RawSession s(static_cast<std::uint16_t>(port),
                                    {file("ca.crt"), file("client1.crt"), file("client1.key")});
    const auto offer = s.call(pqot::srmcp::MessageType::link_request, "{}");
    ASSERT_TRUE(offer);
    token = offer->body["token"].get<std::string>();
    // A failed bind and a protocol violation make the server log about this very link.
    s.bind_link({file("ca.crt"), file("client2.crt"), file("client2.key")}, offer->body["port"].get<std::uint16_t>(),
                offer->body["link_id"].get<std::uint32_t>(), pqot::crypto::from_hex(token), s.session_id());
    s.send(pqot::srmcp::Bytes(64, 0x41));
  }
  ASSERT_EQ(stop(), 0);
  ASSERT_NE(log_.find("refused"), std::string::npos) << "the failed bind is logged:\n" << log_;
  EXPECT_EQ(log_.find(token), std::string::npos) << "the one-time token appears in the log";
  EXPECT_EQ(log_.find(token.substr(0, 16)), std::string::npos);
}

TEST_F(SrmcpCli, ClientUsageAndConnectionErrors) {
  auto r = run_process(bin("srmcp"), {"read", "x"});
  EXPECT_EQ(r.exit_code, 2) << "missing --ca/--cert/--key";
  r = run_process(bin("srmcp"), client_args(1, {"--kem", "RSA", "ping"}));
  EXPECT_EQ(r.exit_code, 2);
  r = run_process(bin("srmcp"), client_args(1, {"ping"}));  // nothing listens on port 1
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("connect to 127.0.0.1:1 failed"), std::string::npos) << r.err;
}

}  // namespace
