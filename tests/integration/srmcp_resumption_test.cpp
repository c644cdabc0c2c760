// SRMCP §7 data-link resumption on loopback: a data link resumes the TLS session its control
// connection's ticket names, in that session only; control connections never resume; a resumed
// link still proves its bind token; a refused ticket falls back to a full handshake.
#include <gtest/gtest.h>

#include <openssl/ssl.h>

#include <thread>
#include <vector>

#include "../support/test_pki.hpp"
#include "../support/wait.hpp"
#include "pqot/channel/tls_resumption.hpp"
#include "pqot/srmcp/client.hpp"
#include "pqot/srmcp/server.hpp"
#include "raw_session.hpp"

namespace pqot::srmcp::resumption_test {
namespace {

using channel::TicketSlot;
using raw::RawSession;

struct ResumptionPki : pqot::test::TestPki {
  ResumptionPki() : TestPki(2) {}
  TlsFiles client(int n) const { return files<TlsFiles>("client" + std::to_string(n)); }
  TlsFiles server() const { return files<TlsFiles>("server"); }
};

class SrmcpResumption : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = new ResumptionPki(); }
  static void TearDownTestSuite() { delete pki_; }

  void SetUp() override {
    ServerConfig cfg;
    cfg.listen_host = "127.0.0.1";
    cfg.listen_port = 0;
    const auto files = pki_->server();
    cfg.ca_file = files.ca;
    cfg.cert_file = files.cert;
    cfg.key_file = files.key;
    cfg.data_port_min = 43000;
    cfg.data_port_max = 43999;
    configure(cfg);
    auto nodes = std::make_shared<NodeStore>();
    NodeSpec n;
    n.id = n.name = "x";
    n.type = ValueType::int64;
    n.initial = 1;
    n.readers = {"*"};
    nodes->add(n);
    server_ = std::make_unique<Server>(io_, cfg, nodes);
    server_->start();
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
  }

  virtual void configure(ServerConfig&) {}

  void TearDown() override {
    server_->stop();
    work_.reset();
    EXPECT_TRUE(pqot::test::eventually([&] { return server_->stats().sessions_active == 0; }));
    io_.stop();
    thread_.join();
  }

  ClientOptions options(int client, unsigned links) const {
    ClientOptions o;
    o.host = "127.0.0.1";
    o.port = server_->port();
    o.tls = pki_->client(client);
    o.links = links;
    return o;
  }

  // A raw session whose control connection keeps its ticket in `slot`.
  RawSession watched(int client, const std::shared_ptr<TicketSlot>& slot) const {
    return RawSession(server_->port(), pki_->client(client), "", [slot](TlsStream& s) { slot->watch(s.native_handle()); });
  }
  static raw::BeforeHandshake offering(const std::shared_ptr<TicketSlot>& slot) {
    return [slot](TlsStream& s) { EXPECT_TRUE(slot->offer(s.native_handle())); };
  }
  static Json link_offer(RawSession& s) {
    auto r = s.call(MessageType::link_request, "{}");
    EXPECT_TRUE(r && r->header.status == Status::ok);
    return r ? r->body : Json::object();
  }

  static ResumptionPki* pki_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
};
ResumptionPki* SrmcpResumption::pki_ = nullptr;

TEST_F(SrmcpResumption, EveryDataLinkResumesTheControlConnectionsTicket_S7) {
  ClientOptions o = options(1, 3);
  o.rotate_interval = std::chrono::milliseconds(100);
  Client c(o);
  c.connect();  // three links at once, right after the hello: the ticket is already there
  EXPECT_EQ(c.info().data_links, 3u);
  EXPECT_EQ(c.info().links_resumed, 3u);
  EXPECT_EQ(c.info().links_full_handshake, 0u);
  // Rotation opens more links with the same ticket.
  EXPECT_TRUE(pqot::test::eventually([&] { return c.info().rotations >= 2; }));
  EXPECT_NO_THROW(c.ping());  // the session works
  c.close();
  const auto st = server_->stats();
  EXPECT_GE(st.link_handshakes_resumed, 5u);
  EXPECT_EQ(st.link_handshakes_full, 0u);
  EXPECT_EQ(st.link_tickets_refused, 0u);
  EXPECT_EQ(c.info().links_full_handshake, 0u);
}

TEST_F(SrmcpResumption, TicketResumesOnlyInItsOwnSessionElseAFullHandshake_S7) {
  auto ticket_a = TicketSlot::create();
  RawSession a = watched(1, ticket_a);
  ASSERT_FALSE(ticket_a->empty());  // it came ahead of SERVER_HELLO
  const auto id = a.open_link(offering(ticket_a));
  ASSERT_NE(id, 0u);
  EXPECT_TRUE(channel::resumed(a.link(id).tls().native_handle()));

  // Another session of the same identity: A's ticket is not its own; the link attaches after a
  // full handshake.
  RawSession a2(server_->port(), pki_->client(1));
  const auto id2 = a2.open_link(offering(ticket_a));
  ASSERT_NE(id2, 0u);
  EXPECT_FALSE(channel::resumed(a2.link(id2).tls().native_handle()));

  // Another identity offering A's ticket on its own session's link: a full handshake as itself.
  RawSession b(server_->port(), pki_->client(2));
  const auto id3 = b.open_link(offering(ticket_a));
  ASSERT_NE(id3, 0u);
  EXPECT_FALSE(channel::resumed(b.link(id3).tls().native_handle()));
  EXPECT_EQ(b.identity(), "client2");
  EXPECT_EQ(b.call(MessageType::ping, "{}")->header.status, Status::ok);
  EXPECT_EQ(a.call(MessageType::ping, "{}")->header.status, Status::ok);

  const auto st = server_->stats();
  EXPECT_EQ(st.link_handshakes_resumed, 1u);
  EXPECT_EQ(st.link_handshakes_full, 2u);
  EXPECT_EQ(st.link_tickets_refused, 2u);
}

TEST_F(SrmcpResumption, ControlConnectionOfferingATicketGetsAFullHandshake_S2_S7) {
  auto ticket_a = TicketSlot::create();
  RawSession a = watched(1, ticket_a);
  ASSERT_FALSE(ticket_a->empty());
  // The same identity, and another one: each a full handshake, each session its certificate's.
  RawSession again(server_->port(), pki_->client(1), "", offering(ticket_a));
  EXPECT_FALSE(channel::resumed(again.control().tls().native_handle()));
  EXPECT_EQ(again.identity(), "client1");
  EXPECT_NE(again.session_id(), a.session_id());
  RawSession b(server_->port(), pki_->client(2), "", offering(ticket_a));
  EXPECT_FALSE(channel::resumed(b.control().tls().native_handle()));
  EXPECT_EQ(b.identity(), "client2");
}

TEST_F(SrmcpResumption, ResumedLinkStillProvesItsBindToken_S7) {
  auto ticket_a = TicketSlot::create();
  RawSession a = watched(1, ticket_a);
  RawSession b(server_->port(), pki_->client(2));
  const Json o = link_offer(a);
  const auto port = o["port"].get<std::uint16_t>();
  const auto link_id = o["link_id"].get<std::uint32_t>();
  const Bytes token = crypto::from_hex(o["token"].get<std::string>());
  const auto refused_before = server_->stats().refusals[static_cast<std::size_t>(Refusal::link_bind_failed)];

  // A resumed link with a wrong token: closed.
  bool resumed = false;
  Bytes wrong = token;
  wrong[0] ^= 1;
  EXPECT_FALSE(a.bind_link(pki_->client(1), port, link_id, wrong, a.session_id(), offering(ticket_a), &resumed));
  EXPECT_TRUE(resumed);
  // Whoever holds A's ticket and its secret (here B's test code) resumes as A's identity, but
  // without A's link key its proof fails as well.
  EXPECT_FALSE(b.bind_link(pki_->client(2), port, link_id, token, a.session_id(), offering(ticket_a), &resumed));
  EXPECT_TRUE(resumed);
  // The offer survived both: A binds it, resumed.
  auto ready = a.bind_link(pki_->client(1), port, link_id, token, a.session_id(), offering(ticket_a), &resumed);
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->type, FrameType::link_ready);
  EXPECT_TRUE(resumed);
  EXPECT_EQ(server_->stats().refusals[static_cast<std::size_t>(Refusal::link_bind_failed)], refused_before + 2);
}

TEST_F(SrmcpResumption, TicketWithoutItsSecretIsUseless_S7) {
  auto ticket_a = TicketSlot::create();
  RawSession a = watched(1, ticket_a);
  // The ticket as an eavesdropper sees it (the same id), with a resumption secret of its own
  // making: the PSK binder does not verify and the server ends the handshake.
  SSL_SESSION* forged = ticket_a->copy();
  ASSERT_NE(forged, nullptr);
  std::array<std::uint8_t, 48> guess{};
  crypto::random_bytes(guess);
  ASSERT_EQ(SSL_SESSION_set1_master_key(forged, guess.data(), guess.size()), 1);
  auto stolen = TicketSlot::create();
  stolen->hold(forged);
  const Json o = link_offer(a);
  const auto port = o["port"].get<std::uint16_t>();
  const auto link_id = o["link_id"].get<std::uint32_t>();
  const Bytes token = crypto::from_hex(o["token"].get<std::string>());
  EXPECT_ANY_THROW(a.bind_link(pki_->client(1), port, link_id, token, a.session_id(), offering(stolen)));
  // The offer still binds, resumed with the real ticket.
  bool resumed = false;
  auto ready = a.bind_link(pki_->client(1), port, link_id, token, a.session_id(), offering(ticket_a), &resumed);
  ASSERT_TRUE(ready);
  EXPECT_TRUE(resumed);
}

// Tickets of two seconds, so that renewal and expiry happen within a test.
class SrmcpResumptionShortTickets : public SrmcpResumption {
 protected:
  void configure(ServerConfig& cfg) override { cfg.link_ticket_lifetime = std::chrono::seconds(2); }
  // The behaviour under test is a lifetime: the only way to reach it is to let the time pass.
  static void wait_until(std::chrono::steady_clock::time_point t) { std::this_thread::sleep_until(t); }
  static std::vector<unsigned char> ticket_id(const TicketSlot& slot) {
    SSL_SESSION* s = slot.copy();
    if (s == nullptr) return {};
    unsigned n = 0;
    const unsigned char* id = SSL_SESSION_get_id(s, &n);
    std::vector<unsigned char> out(id, id + n);
    SSL_SESSION_free(s);
    return out;
  }
};

TEST_F(SrmcpResumptionShortTickets, TicketIsRenewedAtHalfItsLifetimeAndExpires_S2_S7) {
  const auto t0 = std::chrono::steady_clock::now();
  auto ticket = TicketSlot::create();
  RawSession a = watched(1, ticket);
  auto first = TicketSlot::create();
  first->hold(ticket->copy());
  const auto first_id = ticket_id(*ticket);
  ASSERT_FALSE(first_id.empty());

  // Past half the lifetime, a LINK_REQUEST brings a new ticket on the control connection (ahead
  // of the LINK_OFFER, which travels there too while the session has no data link).
  wait_until(t0 + std::chrono::milliseconds(1100));
  Json o = link_offer(a);
  EXPECT_NE(ticket_id(*ticket), first_id);
  bool resumed = false;
  auto ready = a.bind_link(pki_->client(1), o["port"].get<std::uint16_t>(), o["link_id"].get<std::uint32_t>(),
                           crypto::from_hex(o["token"].get<std::string>()), a.session_id(), offering(ticket), &resumed);
  ASSERT_TRUE(ready);
  EXPECT_TRUE(resumed);

  // Once the first ticket has expired, a link offering it attaches after a full handshake.
  wait_until(t0 + std::chrono::milliseconds(3200));
  o = link_offer(a);
  ready = a.bind_link(pki_->client(1), o["port"].get<std::uint16_t>(), o["link_id"].get<std::uint32_t>(),
                      crypto::from_hex(o["token"].get<std::string>()), a.session_id(),
                      [first](TlsStream& s) { (void)first->offer(s.native_handle()); }, &resumed);
  ASSERT_TRUE(ready);
  EXPECT_FALSE(resumed);
  const auto st = server_->stats();
  EXPECT_EQ(st.link_handshakes_resumed, 1u);
  EXPECT_EQ(st.link_handshakes_full, 1u);
}

}  // namespace
}  // namespace pqot::srmcp::resumption_test
