// The tripd program (docs/tripd.md, "Running", "Reloading"): --check-config, two tripd processes
// carrying a flow over two paths, SIGHUP applying an edited file (a third path comes up) and
// refusing a broken one (the error line, the process running on), SIGTERM ending both with CLOSE
// shutdown and exit code 0.
#include <gtest/gtest.h>

#include <asio.hpp>
#include <fstream>

#include "../support/child_process.hpp"
#include "../support/scrape.hpp"
#include "pqot/pki/test_pki.hpp"
#include "trip_ports.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;
using asio::ip::udp;

std::string tripd_bin() { return std::string(PQOT_BIN_DIR) + "/tripd"; }

void tripd_write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

TEST(TripdProgram, CheckConfigSaysWhatIsWrongAndWhere) {
  for (const char* example : {"reflector.toml", "filter.toml", "relay.toml"}) {
    ChildProcess ok(tripd_bin(), {"--check-config", "--config", std::string(PQOT_SOURCE_DIR) + "/examples/trip/" + example}, false);
    EXPECT_EQ(ok.wait_exit(), 0) << ok.log();
    EXPECT_NE(ok.out().find(": OK: "), std::string::npos) << ok.out();
  }
  TempDir dir("pqot-tripd");
  tripd_write(dir.path() / "bad.toml", "[[relay]]\nname = \"r\"\nlisten = \"127.0.0.1:1\"\nforward = \"nowhere\"\n");
  ChildProcess bad(tripd_bin(), {"--check-config", "--config", (dir.path() / "bad.toml").string()}, false);
  EXPECT_EQ(bad.wait_exit(), 2);
  EXPECT_NE(bad.log().find("bad.toml:4: relay 'r': forward = 'nowhere' is not HOST:PORT"), std::string::npos) << bad.log();
  ChildProcess usage(tripd_bin(), {"--bogus"}, false);
  EXPECT_EQ(usage.wait_exit(), 2);
}

TEST(TripdProgram, TwoDaemonsCarryAFlowAndStopCleanly) {
  TempDir dir("pqot-tripd");
  pki::PkiOptions o;
  o.dir = dir.path() / "pki";
  o.clients = 1;
  o.client_roles[1] = {"trip"};
  o.server_roles = {"trip"};
  pki::create_test_pki(o);
  asio::io_context io;
  udp::socket receiver(io, udp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  const std::uint16_t p1 = free_trip_port();
  const std::uint16_t p2 = free_trip_port();
  const std::uint16_t reflect = free_trip_port();
  const std::uint16_t metrics = free_trip_port();
  const std::string pki = (dir.path() / "pki").string();
  tripd_write(dir.path() / "b.toml", "[identity]\nca = \"" + pki + "/ca.crt\"\ncert = \"" + pki + "/server.crt\"\nkey = \"" + pki +
                                        "/server.key\"\n[[path]]\nname = \"a\"\nnumber = 1\nlisten = \"127.0.0.1:" + std::to_string(p1) +
                                        "\"\npeers = [\"client1\"]\n[[path]]\nname = \"b\"\nnumber = 2\nlisten = \"127.0.0.1:" +
                                        std::to_string(p2) + "\"\npeers = [\"client1\"]\n[[flow]]\nid = 7\ndeliver = \"127.0.0.1:" +
                                        std::to_string(receiver.local_endpoint().port()) + "\"\n[metrics]\nlisten = \"127.0.0.1:" +
                                        std::to_string(metrics) + "\"\n");
  tripd_write(dir.path() / "a.toml", "[identity]\nca = \"" + pki + "/ca.crt\"\ncert = \"" + pki + "/client1.crt\"\nkey = \"" + pki +
                                        "/client1.key\"\n[[path]]\nname = \"a\"\nnumber = 1\nconnect = \"127.0.0.1:" + std::to_string(p1) +
                                        "\"\n[[path]]\nname = \"b\"\nnumber = 2\nconnect = \"127.0.0.1:" + std::to_string(p2) +
                                        "\"\n[[flow]]\nid = 7\nreflect = \"127.0.0.1:" + std::to_string(reflect) + "\"\n");
  ChildProcess b(tripd_bin(), {"--config", (dir.path() / "b.toml").string()}, false);
  ASSERT_TRUE(b.wait_for_log("tripd started")) << b.log();
  ChildProcess a(tripd_bin(), {"--config", (dir.path() / "a.toml").string()}, false);
  ASSERT_TRUE(a.wait_for_log("session 0 up", 2)) << a.log() << b.log();
  ASSERT_TRUE(b.wait_for_log("session 0 up", 2)) << b.log();

  // Datagrams sent until one arrives (the server learns each path's address from the client's
  // first keepalive), then 50 more, each received once.
  udp::socket sender(io, udp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  receiver.non_blocking(true);
  const udp::endpoint to(asio::ip::make_address("127.0.0.1"), reflect);
  std::array<std::uint8_t, 162> d{};
  std::array<std::uint8_t, 512> buf{};
  std::error_code ec;
  ASSERT_TRUE(eventually([&] {
    sender.send_to(asio::buffer(d), to);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return receiver.receive(asio::buffer(buf), 0, ec) == 162;
  }));
  // The warm-up datagrams are numbered 0, the counted ones 1..50.
  std::vector<int> got;
  const auto take = [&] {
    while (receiver.receive(asio::buffer(buf), 0, ec) == 162) {
      if (buf[0] != 0) got.push_back(buf[0]);
    }
  };
  for (int i = 1; i <= 50; ++i) {
    d[0] = static_cast<std::uint8_t>(i);
    sender.send_to(asio::buffer(d), to);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    take();
  }
  eventually([&] {
    take();
    return got.size() >= 50;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  take();
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(got[i], i + 1);

  // SIGHUP with an edited file: a third path on both sides comes up.
  const std::uint16_t p3 = free_trip_port();
  const std::string b_text = slurp(dir.path() / "b.toml");
  const std::string a_text = slurp(dir.path() / "a.toml");
  tripd_write(dir.path() / "b.toml", b_text + "[[path]]\nname = \"c\"\nnumber = 3\nlisten = \"127.0.0.1:" + std::to_string(p3) +
                                        "\"\npeers = [\"client1\"]\n");
  tripd_write(dir.path() / "a.toml", a_text + "[[path]]\nname = \"c\"\nnumber = 3\nconnect = \"127.0.0.1:" + std::to_string(p3) + "\"\n");
  b.signal(SIGHUP);
  EXPECT_TRUE(b.wait_for_log("reload applied: paths added: c; removed: -; restarted: -; relays added: -")) << b.log();
  a.signal(SIGHUP);
  EXPECT_TRUE(a.wait_for_log("reload applied: paths added: c; removed: -; restarted: -; relays added: -")) << a.log();
  EXPECT_TRUE(a.wait_for_log("path c: session 0 up")) << a.log();
  EXPECT_TRUE(b.wait_for_log("path c: session 0 up")) << b.log();
  // A new [metrics] address needs a restart: refused, and counted.
  std::string moved = slurp(dir.path() / "b.toml");
  const std::string metrics_line = "[metrics]\nlisten = \"127.0.0.1:" + std::to_string(metrics) + "\"";
  ASSERT_NE(moved.find(metrics_line), std::string::npos) << moved;
  moved.replace(moved.find(metrics_line), metrics_line.size(), "[metrics]\nlisten = \"127.0.0.1:" + std::to_string(free_trip_port()) + "\"");
  tripd_write(dir.path() / "b.toml", moved);
  b.signal(SIGHUP);
  EXPECT_TRUE(b.wait_for_log("reload refused, the running configuration is kept: [metrics] listen changed: that needs a restart")) << b.log();
  const std::string page = http_get(metrics, "/metrics");
  EXPECT_NE(page.find("tripd_reloads_total{result=\"applied\"} 1"), std::string::npos) << page;
  EXPECT_NE(page.find("tripd_reloads_total{result=\"refused\"} 1"), std::string::npos) << page;

  // SIGHUP with a broken file: the error line, and the daemon runs on as it was.
  tripd_write(dir.path() / "a.toml", a_text + "[[path]]\nname = \"bad name!\"\n");
  a.signal(SIGHUP);
  EXPECT_TRUE(a.wait_for_log("reload refused, the running configuration is kept: " + (dir.path() / "a.toml").string() + ":")) << a.log();
  // The same FILE:LINE message --check-config gives.
  ChildProcess check(tripd_bin(), {"--check-config", "--config", (dir.path() / "a.toml").string()}, false);
  EXPECT_EQ(check.wait_exit(), 2);
  const std::string check_log = check.log();
  const auto at = check_log.find("tripd: error: ");
  ASSERT_NE(at, std::string::npos) << check_log;
  const std::string message = check_log.substr(at + 14, check_log.find('\n', at) - at - 14);
  EXPECT_NE(message.find("a.toml:17: path.name = 'bad name!'"), std::string::npos) << message;
  EXPECT_NE(a.log().find("reload refused, the running configuration is kept: " + message), std::string::npos) << a.log();
  for (int i = 51; i <= 60; ++i) {
    d[0] = static_cast<std::uint8_t>(i);
    sender.send_to(asio::buffer(d), to);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    take();
  }
  EXPECT_TRUE(eventually([&] {
    take();
    return got.size() >= 60;
  })) << got.size();
  EXPECT_EQ(a.stop(), 0) << a.log();
  EXPECT_TRUE(b.wait_for_log("the peer closed the session (shutdown)")) << b.log();
  EXPECT_EQ(b.stop(), 0) << b.log();
}

}  // namespace
}  // namespace pqot::test
