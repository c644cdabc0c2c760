// `srup broker-config` from the outside (docs/srup-tool.md, "broker-config"): the mosquitto
// configuration and the dynsec starting state it writes (the text itself is pqot_mqtt's, tested in
// tests/unit/mqtt_*), absolute paths, file modes, an existing dynsec.json kept (it holds the
// registrations) and checked for the C2 administrator, nothing written on a refusal. The broker
// running on these files is the demo's (scripts/demo-srup.sh) and the integration tests' fixture.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "../support/child_process.hpp"
#include "../support/temp_dir.hpp"
#include "../support/usage_error.hpp"

namespace {

using pqot::test::ProcessResult;
using pqot::test::run_process;

const std::string kAdmin = "c2-00000000000000c2";

std::string bc_slurp(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

void bc_write(const std::filesystem::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

unsigned bc_mode(const std::filesystem::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

class SrupBrokerConfigCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(tmp.path() / "pki");
    for (const char* f : {"ca.crt", "server.crt", "server.key", "dynsec.so"}) bc_write(tmp.path() / "pki" / f, "x\n");
  }
  std::filesystem::path at(const std::string& name) const { return tmp.path() / name; }

  // srup broker-config with the fake PKI files, in `cwd` (for relative paths), plus `extra`.
  ProcessResult run(std::vector<std::string> extra, const std::string& dir = "broker") {
    std::vector<std::string> args = {"broker-config", "--dir", at(dir).string(), "--ca", at("pki/ca.crt").string(),
                                     "--cert", at("pki/server.crt").string(), "--key", at("pki/server.key").string(),
                                     "--dynsec-plugin", at("pki/dynsec.so").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_process(SRUP_BIN, args);
  }

  void expect_usage(const ProcessResult& r, const std::string& mentions) {
    pqot::test::expect_usage_error(r, mentions, "srup");
  }

  pqot::test::TempDir tmp{"srup-broker-config"};
};

TEST_F(SrupBrokerConfigCli, WritesTheConfigurationAndTheDynsecStartingStateWithTheC2AsAdmin) {
  const ProcessResult r = run({"--port", "18883", "--admin", kAdmin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::filesystem::path dir = at("broker");
  EXPECT_EQ(bc_mode(dir), 0700u);
  EXPECT_EQ(bc_mode(dir / "mosquitto.conf"), 0600u);
  EXPECT_EQ(bc_mode(dir / "dynsec.json"), 0600u);
  EXPECT_EQ(bc_mode(dir / "persist"), 0700u);

  const std::string conf = bc_slurp(dir / "mosquitto.conf");
  const std::vector<std::string> lines = {
      "listener 18883 127.0.0.1",
      "cafile " + at("pki/ca.crt").string(),
      "certfile " + at("pki/server.crt").string(),
      "keyfile " + at("pki/server.key").string(),
      "tls_version tlsv1.3",
      "require_certificate true",
      "use_identity_as_username true",
      "allow_anonymous false",
      "plugin " + at("pki/dynsec.so").string(),
      "plugin_opt_config_file " + (dir / "dynsec.json").string(),
      "persistence true",
      "persistence_location " + (dir / "persist").string() + "/",
      "autosave_interval 60",
      "log_dest file " + (dir / "mosquitto.log").string()};
  for (const std::string& line : lines) {
    EXPECT_TRUE(has_line(conf, line)) << "missing '" << line << "' in\n" << conf;
  }

  const nlohmann::json dynsec = nlohmann::json::parse(bc_slurp(dir / "dynsec.json"));
  ASSERT_EQ(dynsec["clients"].size(), 1u);
  EXPECT_EQ(dynsec["clients"][0]["username"], kAdmin);
  EXPECT_EQ(dynsec["defaultACLAccess"]["publishClientSend"], false);
  EXPECT_EQ(dynsec["defaultACLAccess"]["publishClientReceive"], false);
  EXPECT_EQ(dynsec["defaultACLAccess"]["subscribe"], false);

  EXPECT_NE(r.out.find("config=" + (dir / "mosquitto.conf").string() + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dynsec=" + (dir / "dynsec.json").string() + " (new)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("start=mosquitto -c " + (dir / "mosquitto.conf").string() + "\n"), std::string::npos) << r.out;
}

TEST_F(SrupBrokerConfigCli, RelativePathsBecomeAbsolute) {
  // mosquitto resolves nothing against the configuration's directory: every path must be absolute.
  const ProcessResult r = run_process(
      "/bin/sh", {"-c", "cd '" + tmp.path().string() + "' && '" + SRUP_BIN +
                            "' broker-config --dir rel --ca pki/ca.crt --cert pki/server.crt --key pki/server.key "
                            "--dynsec-plugin pki/dynsec.so --admin " + kAdmin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string conf = bc_slurp(at("rel/mosquitto.conf"));
  EXPECT_TRUE(has_line(conf, "cafile " + at("pki/ca.crt").string())) << conf;
  EXPECT_TRUE(has_line(conf, "plugin_opt_config_file " + at("rel/dynsec.json").string())) << conf;
}

TEST_F(SrupBrokerConfigCli, AnExistingConfigurationNeedsForceAndTheRegistrationsAreAlwaysKept) {
  ASSERT_EQ(run({"--port", "18883", "--admin", kAdmin}).exit_code, 0);
  const std::filesystem::path dir = at("broker");
  // The plugin rewrites dynsec.json as devices are registered: simulate one registration.
  nlohmann::json dynsec = nlohmann::json::parse(bc_slurp(dir / "dynsec.json"));
  dynsec["clients"].push_back({{"username", "dev-00000000000000a1"}, {"roles", nlohmann::json::array()}});
  const std::string registered = dynsec.dump(2);
  bc_write(dir / "dynsec.json", registered);
  const std::string conf_before = bc_slurp(dir / "mosquitto.conf");

  expect_usage(run({"--port", "18884", "--admin", kAdmin}), "--force");
  EXPECT_EQ(bc_slurp(dir / "mosquitto.conf"), conf_before);

  const ProcessResult r = run({"--port", "18884", "--admin", kAdmin, "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_line(bc_slurp(dir / "mosquitto.conf"), "listener 18884 127.0.0.1"));
  EXPECT_EQ(bc_slurp(dir / "dynsec.json"), registered);
  EXPECT_NE(r.out.find("(kept: it holds the registrations)"), std::string::npos) << r.out;
}

TEST_F(SrupBrokerConfigCli, AnExistingDynsecFileWithoutThisAdminIsRefusedAndNothingWritten) {
  std::filesystem::create_directories(at("broker"));
  bc_write(at("broker/dynsec.json"), R"({"clients":[{"username":"c2-00000000000000c3"}],"roles":[]})");
  expect_usage(run({"--admin", kAdmin}), "has no client " + kAdmin);
  EXPECT_FALSE(std::filesystem::exists(at("broker/mosquitto.conf")));

  bc_write(at("broker/dynsec.json"), "not json");
  expect_usage(run({"--admin", kAdmin}), "is not a dynamic-security file");
  EXPECT_FALSE(std::filesystem::exists(at("broker/mosquitto.conf")));
}

TEST_F(SrupBrokerConfigCli, BadValuesAreRefusedBeforeAnythingIsWritten) {
  expect_usage(run({"--admin", "client1"}), "c2-<16 hex digits>");
  expect_usage(run({"--admin", "c2-c2"}), "exactly 16 hex digits");
  expect_usage(run({"--admin", "c2-00000000000000C2"}), "lower case");
  expect_usage(run({"--admin", "c2-0000000000000000"}), "reserved");
  expect_usage(run({"--admin", kAdmin, "--autosave", "86401"}), "--autosave");
  expect_usage(run({"--admin", kAdmin, "--listen", "0.0.0.0 #"}), "listen_host");
  expect_usage(run({"--admin", kAdmin, "--port", "0"}), "--port");
  std::filesystem::remove(at("pki/dynsec.so"));
  std::filesystem::create_directory(at("pki/dynsec.so"));
  expect_usage(run({"--admin", kAdmin}), "not a regular file");
  std::filesystem::remove(at("pki/server.key"));
  expect_usage(run({"--admin", kAdmin}), "--key");
  EXPECT_FALSE(std::filesystem::exists(at("broker")));
}

TEST_F(SrupBrokerConfigCli, WithoutPersistenceNoPersistenceDirectory) {
  const ProcessResult r = run({"--admin", kAdmin, "--no-persistence", "--user", "nobody"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string conf = bc_slurp(at("broker/mosquitto.conf"));
  EXPECT_TRUE(has_line(conf, "persistence false")) << conf;
  EXPECT_TRUE(has_line(conf, "user nobody")) << conf;
  EXPECT_EQ(conf.find("persistence_location"), std::string::npos) << conf;
  EXPECT_FALSE(std::filesystem::exists(at("broker/persist")));
  EXPECT_NE(r.out.find("persistence=off\n"), std::string::npos) << r.out;
}

}  // namespace
