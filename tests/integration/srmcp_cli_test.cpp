// srmcpd and srmcp as an operator runs them: config checks, a running daemon, the client's table
// and JSON output, where the client takes its server and credentials from (command line,
// environment, configuration file; docs/srmcp-cli.md), exit codes, and SIGTERM.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "../support/child_process.hpp"
#include "../support/temp_dir.hpp"
#include "../support/test_pki.hpp"
#include "../support/programs.hpp"
#include "raw_session.hpp"

namespace {

namespace fs = std::filesystem;
using pqot::test::ChildProcess;
using pqot::test::bin;
using pqot::test::ProcessResult;
using pqot::test::run_process;

const std::string kPlant = std::string(PQOT_SOURCE_DIR) + "/examples/srmcp/plant.toml";

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// The number right after `marker` in `text` (a port in a log line), or 0.
int number_after(const std::string& text, const std::string& marker) {
  const auto at = text.find(marker);
  return at == std::string::npos ? 0 : std::atoi(text.c_str() + at + marker.size());
}

// The first line of `text` that starts with `prefix`, or "".
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

class SrmcpCli : public ::testing::Test {
 protected:
  std::string file(const std::string& name) const { return pki_.file(name); }

  // Starts srmcpd on `config` (the example plant by default) with the test PKI; returns its port.
  int start(const std::string& log_level = "", const std::string& config = kPlant) {
    std::vector<std::string> args = {
        "--config",     config,   "--listen",         "127.0.0.1:0", "--ca",
        file("ca.crt"), "--cert", file("server.crt"), "--key",       file("server.key")};
    if (!log_level.empty()) args.insert(args.end(), {"--log-level", log_level});
    daemon_ = std::make_unique<ChildProcess>(bin("srmcpd"), args, false);
    int port = 0;
    pqot::test::eventually([&] {
      port = number_after(daemon_->out() + daemon_->log(), "listening on 127.0.0.1:");
      return port != 0 || daemon_->wait_exit(std::chrono::milliseconds(0)).has_value();
    });
    return port;
  }
  // SIGTERM; srmcpd's exit code (-1 if it did not end).
  int stop() {
    if (!daemon_) return -1;
    const int rc = daemon_->stop(SIGTERM);
    log_ = daemon_->out() + daemon_->log();
    return rc;
  }

  // srmcp with `args` in a clean environment: no SRMCP_* variables but those in `env`, and a
  // HOME without a configuration file unless `env` says otherwise.
  ProcessResult srmcp(const std::vector<std::string>& args,
                      std::map<std::string, std::string> env = {}) const {
    env.emplace("HOME", home_.path().string());
    return run_process(bin("srmcp"), args,
                       pqot::test::environment_with(env, {"SRMCP_SERVER", "SRMCP_CA", "SRMCP_CERT",
                                                          "SRMCP_KEY", "XDG_CONFIG_HOME"}));
  }
  std::vector<std::string> client_args(int port, std::vector<std::string> rest,
                                       int client = 1) const {
    const std::string who = "client" + std::to_string(client);
    std::vector<std::string> a = {"--server", "127.0.0.1:" + std::to_string(port),
                                  "--ca",     file("ca.crt"),
                                  "--cert",   file(who + ".crt"),
                                  "--key",    file(who + ".key")};
    a.insert(a.end(), rest.begin(), rest.end());
    return a;
  }
  // The same server and credentials as environment variables.
  std::map<std::string, std::string> client_env(int port, int client = 1) const {
    const std::string who = "client" + std::to_string(client);
    return {{"SRMCP_SERVER", "127.0.0.1:" + std::to_string(port)},
            {"SRMCP_CA", file("ca.crt")},
            {"SRMCP_CERT", file(who + ".crt")},
            {"SRMCP_KEY", file(who + ".key")}};
  }
  // A client configuration file with paths relative to its own directory.
  void write_client_file(const fs::path& path, const std::string& server, int client = 1) const {
    const fs::path rel = fs::relative(pki_.dir(), path.parent_path());
    const std::string who = "client" + std::to_string(client);
    write_file(path, "# srmcp client\nserver = \"" + server + "\"\nca = \"" +
                         (rel / "ca.crt").string() + "\"\ncert = \"" +
                         (rel / (who + ".crt")).string() + "\"\nkey = \"" +
                         (rel / (who + ".key")).string() + "\"\n");
  }

  pqot::test::TestPki pki_{2};
  pqot::test::TempDir dir_{"pqot-srmcp-cli"};
  pqot::test::TempDir home_{"pqot-srmcp-home"};
  std::unique_ptr<ChildProcess> daemon_;
  std::string log_;
};

TEST_F(SrmcpCli, CheckConfigAcceptsThePlantAndReportsErrorsWithTheLine) {
  auto r = run_process(bin("srmcpd"), {"--check-config", "--config", kPlant});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OK"), std::string::npos);
  const std::string bad = (dir_.path() / "bad.toml").string();
  write_file(bad,
             "[server]\nlisten = \"127.0.0.1:4843\"\n\n[[node]]\nid = \"a\"\ntype = "
             "\"double\"\nvalue = \"x\"\n");
  r = run_process(bin("srmcpd"), {"--check-config", "--config", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.toml:"), std::string::npos) << r.err;
  r = run_process(bin("srmcpd"), {"--config", "/nonexistent.toml"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(SrmcpCli, ClientAgainstARunningDaemon) {
  const int port = start();
  ASSERT_GT(port, 0);
  auto r = srmcp(client_args(port, {"read", "plant.line1.oven.setpoint", "plant.line1.oven.temp"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plant.line1.oven.setpoint"), std::string::npos) << r.out;

  r = srmcp(client_args(port, {"--json", "write", "plant.line1.oven.setpoint=181.5"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("181.5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"connect_ms\""), std::string::npos) << r.out;

  // A per-node error: exit code 3 and the status name.
  r = srmcp(client_args(port, {"read", "no.such.node"}));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("UNKNOWN_NODE (2)"), std::string::npos) << r.out;

  r = srmcp(client_args(port, {"--links", "0", "ping", "--count", "2"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = srmcp(client_args(port, {"--kem", "X-Wing", "discover", "--depth", "0"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("plant"), std::string::npos);

  EXPECT_EQ(stop(), 0) << "SIGTERM shuts srmcpd down cleanly";
}

TEST_F(SrmcpCli, GlobalOptionsAlsoFollowTheCommand) {
  const int port = start();
  ASSERT_GT(port, 0);
  // Everything after the command: the server, the credentials, --json, --links.
  std::vector<std::string> args = {"read", "plant.line1.oven.setpoint", "--json", "--links", "0"};
  const auto rest = client_args(port, {});
  args.insert(args.end(), rest.begin(), rest.end());
  auto r = srmcp(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"data_links\": 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"id\": \"plant.line1.oven.setpoint\""), std::string::npos) << r.out;

  // Node ids after a global option still belong to the command.
  r = srmcp(
      client_args(port, {"read", "--json", "plant.line1.oven.setpoint", "plant.line1.oven.temp"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"id\": \"plant.line1.oven.temp\""), std::string::npos) << r.out;
  r = srmcp(client_args(port, {"ping", "--count", "1", "--kem", "ML-KEM-1024"}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ML-KEM-1024, compact bodies"), std::string::npos) << r.out;
  // The body encoding: compact by default, JSON on request; the output is the same.
  r = srmcp(client_args(port, {"read", "--json", "plant.line1.oven.setpoint", "--encoding", "json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"encoding\": \"json\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"id\": \"plant.line1.oven.setpoint\""), std::string::npos) << r.out;
  r = srmcp(client_args(port, {"ping", "--count", "1", "--encoding", "cbor"}));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("unknown body encoding 'cbor' (compact, json)"), std::string::npos) << r.err;
  // An option neither the command nor the client knows is still a usage error.
  r = srmcp(client_args(port, {"read", "x", "--nonsense"}));
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

TEST_F(SrmcpCli, EnvironmentAloneIsEnough) {
  const int port = start();
  ASSERT_GT(port, 0);
  const auto r = srmcp({"read", "plant.line1.oven.setpoint"}, client_env(port));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("connected to 127.0.0.1:" + std::to_string(port) + " as 'client1'"),
            std::string::npos)
      << r.out;
}

TEST_F(SrmcpCli, ConfigurationFileAloneIsEnough) {
  const int port = start();
  ASSERT_GT(port, 0);
  const std::string server = "127.0.0.1:" + std::to_string(port);
  // The default place under XDG_CONFIG_HOME; relative paths resolve against the file's directory.
  const fs::path xdg = dir_.path() / "xdg";
  write_client_file(xdg / "srmcp/client.toml", server);
  auto r = srmcp({"read", "plant.line1.oven.setpoint"}, {{"XDG_CONFIG_HOME", xdg.string()}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as 'client1'"), std::string::npos) << r.out;

  // Without XDG_CONFIG_HOME: ~/.config/srmcp/client.toml.
  write_client_file(home_.path() / ".config/srmcp/client.toml", server, 2);
  r = srmcp({"ping", "--count", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as 'client2'"), std::string::npos) << r.out;

  // --config names any file, instead of the default one.
  write_client_file(dir_.path() / "elsewhere/my.toml", server, 1);
  r = srmcp({"ping", "--count", "1", "--config", (dir_.path() / "elsewhere/my.toml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as 'client1'"), std::string::npos) << r.out;
}

TEST_F(SrmcpCli, CommandLineBeatsEnvironmentBeatsConfigurationFile) {
  const int port = start();
  ASSERT_GT(port, 0);
  const std::string good = "127.0.0.1:" + std::to_string(port);
  const std::string dead = "127.0.0.1:1";  // nothing listens on port 1
  const std::string config = (dir_.path() / "client.toml").string();

  // File: a dead server and client1. Environment: the right server and client2.
  write_client_file(config, dead, 1);
  auto env = client_env(port, 2);
  auto r = srmcp({"--config", config, "ping", "--count", "1"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as 'client2'"), std::string::npos)
      << "the environment wins over the file:\n"
      << r.out;

  // Only some variables set: the others still come from the file.
  r = srmcp({"--config", config, "ping", "--count", "1"}, {{"SRMCP_SERVER", good}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as 'client1'"), std::string::npos) << r.out;

  // Command line over the environment: a dead server in the environment, the right one as a flag;
  // client1's files as flags, client2's in the environment.
  env["SRMCP_SERVER"] = dead;
  r = srmcp({"--config", config, "ping", "--count", "1", "--server", good, "--cert",
             file("client1.crt"), "--key", file("client1.key")},
            env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("as 'client1'"), std::string::npos) << "the command line wins:\n" << r.out;

  // And the environment's dead server is really used when no flag overrides it.
  r = srmcp({"--config", config, "ping", "--count", "1"}, env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("connect to 127.0.0.1:1 failed"), std::string::npos) << r.err;
}

TEST_F(SrmcpCli, BadConfigurationFilesAreUsageErrorsWithTheLine) {
  const fs::path config = dir_.path() / "client.toml";
  const auto run = [&] { return srmcp({"--config", config.string(), "ping"}); };

  write_file(config, "server = \"127.0.0.1:4843\"\n# credentials\nsever = \"x\"\n");
  auto r = run();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(
      r.err.find(config.string() + ":3: unknown key 'sever' (expected server, ca, cert, key)"),
      std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  write_file(config, "ca = \"ca.crt\"\ncert = 5\n");
  r = run();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(config.string() + ":2: cert must be a string, not an integer"),
            std::string::npos)
      << r.err;

  write_file(config, "\n\nserver = \"no-port\"\n");
  r = run();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(config.string() + ":3: server must be HOST:PORT"), std::string::npos)
      << r.err;

  write_file(config, "server = \"127.0.0.1:4843\n");  // not TOML: the string never ends
  r = run();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(config.string() + ":1: "), std::string::npos) << r.err;

  // A named file that does not exist is an error, not silently ignored.
  r = srmcp({"--config", (dir_.path() / "missing.toml").string(), "ping"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("missing.toml: cannot read: No such file or directory"), std::string::npos)
      << r.err;

  // The default file is read whenever it exists, and checked as strictly.
  write_file(home_.path() / ".config/srmcp/client.toml",
             "[server]\nhost = \"x\"\n");  // srmcpd's layout
  r = srmcp({"ping"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(".config/srmcp/client.toml:1: server must be a string, not a table"),
            std::string::npos)
      << r.err;
}

TEST_F(SrmcpCli, TableColumnsFitTheLongestId) {
  const std::string id32 = "plant.area7.line12.station3.temp";  // exactly 32 characters
  const std::string id45 = "plant.area7.line12.station3.heater.zone4.temp";  // longer still
  ASSERT_EQ(id32.size(), 32u);
  const fs::path config = dir_.path() / "wide.toml";
  write_file(config,
             "[server]\nlisten = \"127.0.0.1:4843\"\n[[node]]\nid = \"" + id32 +
                 "\"\ntype = \"double\"\nvalue = 21.5\naccess = \"readwrite\"\n[[node]]\nid = \"" +
                 id45 +
                 "\"\ntype = \"string\"\nvalue = \"on\"\n[[node]]\nid = \"x\"\ntype = "
                 "\"int64\"\nvalue = 7\n");
  const int port = start("", config.string());
  ASSERT_GT(port, 0) << log_;

  // Every row's type starts in the header's type column, with space before it.
  const auto expect_aligned = [](const std::string& out, const std::string& id,
                                 const std::string& type) {
    const std::string header = line_starting(out, "id ");
    const std::string row = line_starting(out, id + " ");
    ASSERT_FALSE(header.empty()) << out;
    ASSERT_FALSE(row.empty()) << "no space after " << id << ":\n" << out;
    EXPECT_EQ(row.find(type, id.size()), header.find("type")) << out;
  };
  auto r = srmcp(client_args(port, {"read", id32, "x", id45}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_aligned(r.out, id32, "double");
  expect_aligned(r.out, id45, "string");
  expect_aligned(r.out, "x", "int64");

  r = srmcp(client_args(port, {"discover"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_aligned(r.out, id32, "double");
  expect_aligned(r.out, id45, "string");

  r = srmcp(client_args(port, {"write", id32 + "=22"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string row = line_starting(r.out, id32 + " ");
  EXPECT_NE(row.find("22"), std::string::npos) << r.out;
}

TEST_F(SrmcpCli, LogsNeverContainSecrets) {
  const int port = start("trace");
  ASSERT_GT(port, 0);
  std::string token;
  {
    pqot::srmcp::raw::RawSession s(static_cast<std::uint16_t>(port),
                                    {file("ca.crt"), file("client1.crt"), file("client1.key")});
    const auto offer = s.call(pqot::srmcp::MessageType::link_request, "{}");
    ASSERT_TRUE(offer);
    token = offer->body["token"].get<std::string>();
    // A failed bind and a protocol violation make the server log about this very link.
    s.bind_link({file("ca.crt"), file("client2.crt"), file("client2.key")},
                offer->body["port"].get<std::uint16_t>(),
                offer->body["link_id"].get<std::uint32_t>(), pqot::crypto::from_hex(token),
                s.session_id());
    s.send(pqot::srmcp::Bytes(64, 0x41));
  }
  ASSERT_EQ(stop(), 0);
  ASSERT_NE(log_.find("refused"), std::string::npos) << "the failed bind is logged:\n" << log_;
  EXPECT_EQ(log_.find(token), std::string::npos) << "the one-time token appears in the log";
  EXPECT_EQ(log_.find(token.substr(0, 16)), std::string::npos);
}

TEST_F(SrmcpCli, ClientUsageAndConnectionErrors) {
  auto r = srmcp({"read", "x"});
  EXPECT_EQ(r.exit_code, 2) << "missing --ca/--cert/--key";
  EXPECT_NE(r.err.find("--ca is required: give --ca FILE, set SRMCP_CA, or put ca = \"FILE\" in"),
            std::string::npos)
      << r.err;
  r = srmcp(client_args(1, {"--kem", "RSA", "ping"}));
  EXPECT_EQ(r.exit_code, 2);
  r = srmcp({"--server", "localhost:http", "--ca", file("ca.crt"), "--cert", file("client1.crt"),
             "--key", file("client1.key"), "ping"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("HOST:PORT"), std::string::npos) << r.err;
  r = srmcp(client_args(1, {"ping"}));  // nothing listens on port 1
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("connect to 127.0.0.1:1 failed"), std::string::npos) << r.err;
}

}  // namespace
