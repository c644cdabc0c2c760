// The SRMCP end-to-end fixture (docs/srmcp.md): a test PKI, a node set, and a real Server on
// loopback with small limits; shared by the end-to-end test files.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "../support/test_pki.hpp"
#include "../support/wait.hpp"
#include "pqot/srmcp/client.hpp"
#include "pqot/srmcp/server.hpp"

namespace pqot::srmcp {
namespace {

// The test PKI as srmcp sees it; client2's certificate carries OU=operator.
struct Pki : pqot::test::TestPki {
  Pki() : TestPki(3, {{2, {"operator"}}}) {}
  channel::TlsFiles client(int n) const { return files<channel::TlsFiles>("client" + std::to_string(n)); }
  channel::TlsFiles server() const { return files<channel::TlsFiles>("server"); }
};

NodeSpec node(std::string id, ValueType type, Json initial, Acl writers = {}, Acl readers = {"*"}) {
  NodeSpec n;
  n.name = id;
  n.id = std::move(id);
  n.type = type;
  if (type != ValueType::folder) n.parents = {"plant"};
  n.initial = std::move(initial);
  n.writers = std::move(writers);
  n.readers = std::move(readers);
  return n;
}

std::shared_ptr<NodeStore> make_nodes() {
  auto nodes = std::make_shared<NodeStore>();
  nodes->add(node("plant", ValueType::folder, Json()));
  for (int i = 0; i < 10; ++i) nodes->add(node("plant.t" + std::to_string(i), ValueType::float64, 20.0 + i));
  nodes->add(node("plant.setpoint", ValueType::float64, 50.0, {"*"}));
  nodes->add(node("plant.count", ValueType::int64, 0, {"*"}));
  nodes->add(node("plant.recipe", ValueType::string, "A", {"*"}));
  nodes->add(node("plant.only1", ValueType::boolean, false, {"client1"}));
  nodes->add(node("plant.secret", ValueType::int64, 7, {}, {"client2"}));
  nodes->add(node("plant.ops", ValueType::string, "idle", {"role:operator"}, {"role:operator"}));
  return nodes;
}

class SrmcpEndToEnd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new Pki();
    rogue_ = new Pki();
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete rogue_;
  }

 public:
  // A server on 127.0.0.1, any port, with the test PKI.
  static ServerConfig base_config() {
    ServerConfig cfg;
    cfg.listen_host = "127.0.0.1";
    cfg.listen_port = 0;
    const auto files = pki_->server();
    cfg.ca_file = files.ca;
    cfg.cert_file = files.cert;
    cfg.key_file = files.key;
    return cfg;
  }

 protected:
  void SetUp() override {
    ServerConfig cfg = base_config();
    cfg.data_port_min = 42000;
    cfg.data_port_max = 42999;
    cfg.idle_frame_deadline = std::chrono::milliseconds(500);
    cfg.key_update_messages = 16;  // small, so that tests cross several key epochs (§6)
    cfg.max_pending_links = 12;    // small, so that the server-wide limit can be reached
    cfg.handshake_deadline = std::chrono::milliseconds(1000);
    cfg.max_sessions_per_identity = 1000;  // ManySessionsWhileOneFloodsGarbage: 200 sessions, two identities
    server_ = std::make_unique<Server>(io_, cfg, make_nodes());
    server_->start();
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    server_->stop();
    work_.reset();
    expect_sessions_closed(*server_);
    io_.stop();
    thread_.join();
  }

  // Server::stop() closes the sessions on their own strands; the event loop may stop once they
  // have all ended (they leave the server's session set last).
  static void expect_sessions_closed(const Server& server) {
    EXPECT_TRUE(pqot::test::eventually([&] {
      const auto st = server.stats();
      return st.sessions_active == 0 && st.links_active == 0 && st.handshakes_in_progress == 0;
    })) << "sessions still open after Server::stop(): " << server.stats().sessions_active;
  }

  ClientOptions options(int client = 1, unsigned links = 3) const {
    ClientOptions o;
    o.host = "127.0.0.1";
    o.port = server_->port();
    o.tls = pki_->client(client);
    o.links = links;
    return o;
  }

  inline static Pki* pki_ = nullptr;
  inline static Pki* rogue_ = nullptr;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

}  // namespace
}  // namespace pqot::srmcp
