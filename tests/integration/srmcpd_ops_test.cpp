// srmcpd as operators run it (docs/srmcpd.md, docs/metrics.md, docs/srmcpd-modbus.md): the real
// binary with --check-config on gateway mistakes, the packaged configuration and systemd unit,
// the Prometheus endpoint, and SIGHUP reloads that keep sessions open.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <cstring>
#include <fstream>
#include <sstream>

#include "../support/child_process.hpp"
#include "../support/scrape.hpp"
#include "../support/temp_dir.hpp"
#include "../support/test_pki.hpp"
#include "../support/programs.hpp"
#include "pqot/srmcp/client.hpp"

namespace pqot::srmcp {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::ChildProcess;
using test::eventually;
using test::http_get;
using test::number_after;
using test::kSim;
using test::kSrmcpd;
using test::sample;

const std::string kBin = PQOT_BIN_DIR;
const fs::path kSource = PQOT_SOURCE_DIR;

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

class SrmcpdOps : public ::testing::Test {
 protected:
  fs::path pki(const std::string& f) const { return pki_.dir() / f; }

  std::string server_section(const std::string& extra = "") const {
    return "[server]\nlisten = \"127.0.0.1:4843\"\nca = \"" + pki("ca.crt").string() + "\"\ncert = \"" +
           pki("server.crt").string() + "\"\nkey = \"" + pki("server.key").string() + "\"\n" + extra;
  }

  // Starts srmcpd on `config` (listen port 0, any extra flags); returns its port.
  int start(const fs::path& config, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--config", config.string(), "--listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    daemon_ = std::make_unique<ChildProcess>(kSrmcpd, args, false);
    int port = 0;
    eventually([&] {
      port = number_after(daemon_->out(), "srmcpd listening on 127.0.0.1:");
      return port != 0;
    });
    return port;
  }
  int metrics_port() const { return number_after(daemon_->out(), "metrics on http://127.0.0.1:"); }

  std::unique_ptr<Client> connect(int port) const {
    ClientOptions o;
    o.port = static_cast<std::uint16_t>(port);
    o.tls = {pki("ca.crt").string(), pki("client1.crt").string(), pki("client1.key").string()};
    o.links = 1;
    o.rotate_interval = 0ms;
    auto c = std::make_unique<Client>(o);
    c->connect();
    return c;
  }

  test::TestPki pki_{1};
  test::TempDir dir_{"pqot-srmcpd-ops"};
  std::unique_ptr<ChildProcess> daemon_;
};

TEST_F(SrmcpdOps, CheckConfigNamesTheLineOfGatewayMistakes) {
  const fs::path cfg = dir_.path() / "bad.toml";
  write_file(cfg, server_section() +
                      "[[device]]\nname = \"plc\"\nhost = \"127.0.0.1\"\n"  // lines 6-8
                      "[[node]]\nid = \"a\"\nmodbus = { device = \"plc\", table = \"holding\", address = 4, type = \"float32\" }\n"
                      "[[node]]\nid = \"b\"\nmodbus = { device = \"plc\", table = \"holding\", address = 5 }\n");
  const auto r = test::run_process(kSrmcpd, {"--check-config", "--config", cfg.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(cfg.string() + ":14: node 'b': modbus holding 5..5 on device 'plc' overlaps node 'a' (line 11)"),
            std::string::npos)
      << r.err;
  write_file(cfg, server_section() + "[[node]]\nid = \"a\"\nmodbus = { device = \"plc9\", table = \"coil\", address = 0 }\n");
  const auto unknown = test::run_process(kSrmcpd, {"--check-config", "--config", cfg.string()});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find(":8: node 'a': unknown device 'plc9'"), std::string::npos) << unknown.err;
}

TEST_F(SrmcpdOps, PackagedConfigurationAndUnitAreValid) {
  const auto r = test::run_process(kSrmcpd, {"--check-config", "--config", (kSource / "packaging/srmcpd.toml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OK: 3 nodes, 1 Modbus devices"), std::string::npos) << r.out;
  const auto gateway =
      test::run_process(kSrmcpd, {"--check-config", "--config", (kSource / "examples/gateway/plant-gateway.toml").string()});
  EXPECT_EQ(gateway.exit_code, 0) << gateway.err;

  // Found at configure time (tests/CMakeLists.txt), which fails without it: never a silent skip.
  const std::string systemd_analyze = PQOT_SYSTEMD_ANALYZE;
  ASSERT_TRUE(fs::exists(systemd_analyze)) << systemd_analyze << " is gone (Debian package systemd)";
  // The unit with its paths pointing at this build: systemd must find nothing to complain about.
  std::ifstream in(kSource / "packaging/srmcpd.service");
  std::string unit((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string installed = "/usr/local/bin/srmcpd";
  for (auto at = unit.find(installed); at != std::string::npos; at = unit.find(installed, at + kSrmcpd.size())) {
    unit.replace(at, installed.size(), kSrmcpd);
  }
  const fs::path copy = dir_.path() / "srmcpd.service";
  write_file(copy, unit);
  const auto verify = test::run_process(systemd_analyze, {"verify", copy.string()});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_EQ(verify.out + verify.err, "");
}

TEST_F(SrmcpdOps, MetricsEndpointShowsSessionsRequestsAndDevices) {
  ChildProcess sim(kSim, {});
  const fs::path cfg = dir_.path() / "gw.toml";
  write_file(cfg, server_section() + "[[device]]\nname = \"plc\"\nhost = \"127.0.0.1\"\nport = " +
                      std::to_string(sim.port()) +
                      "\n[[node]]\nid = \"sp\"\nmodbus = { device = \"plc\", table = \"holding\", address = 0, type = \"int16\", "
                      "scale = 0.1 }\n");
  const int port = start(cfg, {"--metrics", "127.0.0.1:0"});
  ASSERT_GT(port, 0) << daemon_->out();
  ASSERT_GT(metrics_port(), 0) << daemon_->out();
  auto c = connect(port);
  EXPECT_EQ(c->read({"sp", "nope"})["values"][0]["value"], 180.0);
  EXPECT_EQ(c->request(MessageType::link_close, Json{{"link_id", 99}}).status, Status::bad_request);

  const std::string page = http_get(metrics_port(), "/metrics");
  ASSERT_EQ(page.rfind("HTTP/1.1 200", 0), 0u) << page;
  EXPECT_NE(page.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_EQ(sample(page, "pqot_srmcp_sessions_active"), 1);
  EXPECT_GE(sample(page, "pqot_srmcp_sessions_total"), 1);
  EXPECT_GE(sample(page, "pqot_srmcp_sessions_encoding_total{encoding=\"compact\"}"), 1);
  EXPECT_GE(sample(page, "pqot_srmcp_requests_total{type=\"read\"}"), 1);
  EXPECT_GE(sample(page, "pqot_srmcp_responses_total{status=\"BAD_REQUEST\",code=\"1\"}"), 1);
  EXPECT_GE(sample(page, "pqot_srmcp_request_duration_seconds_count{type=\"read\"}"), 1);
  // The client's one data link resumed its session's ticket (docs/srmcp.md §7).
  EXPECT_EQ(sample(page, "pqot_srmcp_link_handshakes_total{kind=\"resumed\"}"), 1);
  EXPECT_EQ(sample(page, "pqot_srmcp_link_handshakes_total{kind=\"full\"}"), 0);
  EXPECT_EQ(sample(page, "pqot_srmcp_link_tickets_refused_total"), 0);
  EXPECT_EQ(sample(page, "pqot_modbus_device_up{device=\"plc\"}"), 1);
  EXPECT_GE(sample(page, "pqot_modbus_transactions_total{device=\"plc\"}"), 1);
  EXPECT_EQ(sample(page, "pqot_modbus_errors_total{device=\"plc\",kind=\"timeout\"}"), 0);
  EXPECT_GE(sample(page, "pqot_modbus_transaction_duration_seconds_bucket{device=\"plc\",le=\"+Inf\"}"), 1);
  EXPECT_EQ(sample(page, "pqot_srmcpd_nodes"), 1);
  EXPECT_GT(sample(page, "process_resident_memory_bytes"), 0);
  EXPECT_EQ(http_get(metrics_port(), "/healthz").rfind("HTTP/1.1 200", 0), 0u);

  // The device goes away: the metrics say so.
  sim.stop(SIGKILL);
  (void)c->read({"sp"});
  EXPECT_TRUE(eventually([&] { return sample(http_get(metrics_port(), "/metrics"), "pqot_modbus_device_up{device=\"plc\"}") == 0; }));
  c.reset();
  EXPECT_EQ(daemon_->stop(), 0);
}

TEST_F(SrmcpdOps, SighupReloadsNodesWithoutDroppingSessions) {
  const fs::path cfg = dir_.path() / "plant.toml";
  write_file(cfg, server_section() + "[[node]]\nid = \"a\"\ntype = \"int64\"\nvalue = 1\n");
  const int port = start(cfg, {"--metrics", "127.0.0.1:0"});
  ASSERT_GT(port, 0) << daemon_->out();
  auto c = connect(port);
  const auto session = c->info().session_id;
  EXPECT_EQ(c->read({"a"})["values"][0]["value"], 1);
  EXPECT_EQ(c->read({"b"})["values"][0]["status"], static_cast<int>(Status::unknown_node));

  // A new node, a changed log level, and a setting that needs a restart.
  write_file(cfg, server_section("log_level = \"debug\"\nmax_sessions = 7\n") +
                      "[[node]]\nid = \"a\"\ntype = \"int64\"\nvalue = 1\n[[node]]\nid = \"b\"\ntype = \"string\"\nvalue = \"new\"\n");
  daemon_->signal(SIGHUP);
  ASSERT_TRUE(daemon_->wait_for_out("reloaded " + cfg.string() + ": 2 nodes")) << daemon_->out();
  EXPECT_NE(daemon_->out().find("reload: server.max_sessions changed; it takes effect after a restart"), std::string::npos);
  EXPECT_EQ(c->read({"b"})["values"][0]["value"], "new");
  EXPECT_EQ(c->info().session_id, session);  // the same session, never dropped

  // A broken file changes nothing, and says where it is broken.
  write_file(cfg, server_section() + "[[node]]\nid = \"a\"\ntype = \"int64\"\nvalue = \"x\"\n");
  daemon_->signal(SIGHUP);
  ASSERT_TRUE(daemon_->wait_for_out("reload failed, the running configuration stays: " + cfg.string() + ":9:"))
      << daemon_->out();
  EXPECT_EQ(c->read({"b"})["values"][0]["value"], "new");
  const std::string page = http_get(metrics_port(), "/metrics");
  EXPECT_EQ(sample(page, "pqot_srmcpd_config_reloads_total{result=\"ok\"}"), 1);
  EXPECT_EQ(sample(page, "pqot_srmcpd_config_reloads_total{result=\"failed\"}"), 1);
  c.reset();
  EXPECT_EQ(daemon_->stop(), 0);
}

TEST_F(SrmcpdOps, BadMetricsAddressIsACommandLineError) {
  const fs::path cfg = dir_.path() / "empty.toml";
  write_file(cfg, server_section());
  const auto r = test::run_process(kSrmcpd, {"--config", cfg.string(), "--listen", "127.0.0.1:0", "--metrics", "nonsense"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--metrics"), std::string::npos) << r.out << r.err;
}

// One strict HOST:PORT parser (include/pqot/common/host_port.hpp): "h:12x" is an error, not port 12.
TEST_F(SrmcpdOps, ListenAddressIsParsedStrictly) {
  const fs::path cfg = dir_.path() / "empty.toml";
  write_file(cfg, server_section());
  for (const std::string bad : {"127.0.0.1:12x", "127.0.0.1:", "127.0.0.1:65536", "::1:80"}) {
    const auto r = test::run_process(kSrmcpd, {"--config", cfg.string(), "--listen", bad, "--check-config"});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--listen"), std::string::npos) << bad << ": " << r.out << r.err;
  }
}

}  // namespace
}  // namespace pqot::srmcp
