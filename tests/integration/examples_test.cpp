// The example programs under examples/srmcp are built with the project and run here: the server
// backed by application callables, then both client examples against it.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "../support/child_process.hpp"
#include "../support/test_pki.hpp"
#include "../support/programs.hpp"

namespace {

using pqot::test::ChildProcess;
using pqot::test::bin;
using pqot::test::run_process;


// The port from the server's first line, "listening on PORT", once it has printed it; else 0.
int announced_port(const ChildProcess& server) {
  const std::string marker = "listening on ";
  const std::string out = server.out();
  const auto at = out.find(marker);
  if (at == std::string::npos || out.find('\n', at) == std::string::npos) return 0;
  return std::atoi(out.c_str() + at + marker.size());
}

TEST(SrmcpExamples, ServerWithCallablesAndBothClientApis) {
  const pqot::test::TestPki pki(1);
  ChildProcess server(bin("example_server_callables"),
                      {pki.ca(), pki.file("server.crt"), pki.file("server.key")}, false);
  ASSERT_TRUE(pqot::test::eventually([&] { return announced_port(server) > 0; }))
      << "the example server did not announce its port:\n"
      << server.out() << server.log();

  const std::vector<std::string> args = {std::to_string(announced_port(server)), pki.ca(),
                                         pki.file("client1.crt"), pki.file("client1.key")};
  const auto blocking = run_process(bin("example_client_blocking"), args);
  EXPECT_EQ(blocking.exit_code, 0) << blocking.err;
  EXPECT_NE(blocking.out.find("device holds 1500.0"), std::string::npos) << blocking.out;
  EXPECT_NE(blocking.out.find("write 99999 -> BACKEND_ERROR"), std::string::npos) << blocking.out;

  const auto coroutine = run_process(bin("example_client_coroutine"), args);
  EXPECT_EQ(coroutine.exit_code, 0) << coroutine.err;
  EXPECT_NE(coroutine.out.find("pump.speed = 1500.0"), std::string::npos) << coroutine.out;
  EXPECT_NE(coroutine.out.find("ping: OK"), std::string::npos) << coroutine.out;

  EXPECT_EQ(server.stop(SIGTERM), 0) << "the example server stops cleanly on SIGTERM:\n"
                                     << server.log();
}

}  // namespace
