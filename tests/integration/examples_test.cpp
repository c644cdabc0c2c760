// The example programs under examples/srmcp are built with the project and run here: the server
// backed by application callables, then both client examples against it.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>

#include "../cli/run_process.hpp"
#include "pqot/crypto/pki.hpp"

namespace {

namespace fs = std::filesystem;
using pqot::test::run_process;

std::string bin(const std::string& name) { return std::string(PQOT_BIN_DIR) + "/" + name; }

TEST(SrmcpExamples, ServerWithCallablesAndBothClientApis) {
  const fs::path dir = fs::temp_directory_path() / ("pqot-examples-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  pqot::crypto::PkiOptions o;
  o.dir = dir;
  o.clients = 1;
  pqot::crypto::create_test_pki(o);
  const std::string ca = (dir / "ca.crt").string();

  // Start the server and read the port from its first line.
  const std::string cmd = bin("example_server_callables") + " " + ca + " " + (dir / "server.crt").string() + " " +
                          (dir / "server.key").string();
  FILE* server = ::popen(("exec " + cmd).c_str(), "r");
  ASSERT_NE(server, nullptr);
  char line[128] = {};
  ASSERT_NE(std::fgets(line, sizeof(line), server), nullptr);
  int port = 0;
  ASSERT_EQ(std::sscanf(line, "listening on %d", &port), 1) << line;

  const std::vector<std::string> args = {std::to_string(port), ca, (dir / "client1.crt").string(),
                                         (dir / "client1.key").string()};
  const auto blocking = run_process(bin("example_client_blocking"), args);
  EXPECT_EQ(blocking.exit_code, 0) << blocking.err;
  EXPECT_NE(blocking.out.find("device holds 1500.0"), std::string::npos) << blocking.out;
  EXPECT_NE(blocking.out.find("write 99999 -> BACKEND_ERROR"), std::string::npos) << blocking.out;

  const auto coroutine = run_process(bin("example_client_coroutine"), args);
  EXPECT_EQ(coroutine.exit_code, 0) << coroutine.err;
  EXPECT_NE(coroutine.out.find("pump.speed = 1500.0"), std::string::npos) << coroutine.out;
  EXPECT_NE(coroutine.out.find("ping: OK"), std::string::npos) << coroutine.out;

  // popen gives no pid; the server stops on SIGTERM, sent to it by name.
  std::system(("pkill -TERM -f '^" + cmd + "'").c_str());
  EXPECT_EQ(::pclose(server), 0);
  fs::remove_all(dir);
}

}  // namespace
