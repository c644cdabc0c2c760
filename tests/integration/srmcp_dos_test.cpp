// SRMCP server against hostile peers (issue 10, docs/srmcpd.md "Limits and denial of service"):
// for each resource a peer can make the server hold, a peer that pushes it to its bound while a
// legitimate client keeps working. Real Server and Clients in this process on loopback; attackers
// use 127.0.0.2-127.0.0.9 as their source addresses, the legitimate clients 127.0.0.1.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <thread>

#include "../support/fd_limit.hpp"
#include "../support/tcp_peer.hpp"
#include "../support/test_pki.hpp"
#include "../support/wait.hpp"
#include "pqot/srmcp/client.hpp"
#include "pqot/srmcp/server.hpp"
#include "raw_session.hpp"

namespace pqot::srmcp {
namespace {

using pqot::test::eventually;
using pqot::test::TcpPeer;
using raw::RawLink;
using raw::RawSession;

// ---- helpers ---------------------------------------------------------------------------------------

std::string attacker_source(int i) { return "127.0.0." + std::to_string(2 + i % 8); }

/// Counts the log lines written at warn level or above while it is installed.
class LogCounter : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::size_t lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level >= spdlog::level::warn) ++lines_;
  }
  void flush_() override {}

 private:
  std::size_t lines_ = 0;
};

/// A device whose reads wait until the test answers them (a node backend that waits).
class HeldDevice {
 public:
  AsyncReadFn reader() {
    return [this](ReadDone done) {
      std::lock_guard lock(mutex_);
      waiting_.push_back(std::move(done));
      peak_ = std::max(peak_, waiting_.size());
    };
  }
  std::size_t waiting() {
    std::lock_guard lock(mutex_);
    return waiting_.size();
  }
  std::size_t peak() {
    std::lock_guard lock(mutex_);
    return peak_;
  }
  void answer_all() {
    std::vector<ReadDone> now;
    {
      std::lock_guard lock(mutex_);
      now.swap(waiting_);
    }
    for (auto& d : now) d(ReadResult{Status::ok, 1.5, std::chrono::system_clock::now()});
  }

 private:
  std::mutex mutex_;
  std::vector<ReadDone> waiting_;
  std::size_t peak_ = 0;
};

std::uint64_t refusals(const ServerStats& s, Refusal r) { return s.refusals[static_cast<std::size_t>(r)]; }

class SrmcpHostile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // 1,100 attacker connections and the server's side of them live in this process.
    ASSERT_GE(pqot::test::raise_fd_limit(), 4096u) << "too few descriptors for these tests";
    pki_ = new pqot::test::TestPki(3);
  }
  static void TearDownTestSuite() {
    delete pki_;
    pki_ = nullptr;
  }
  static TlsFiles client(int n) { return pki_->files<TlsFiles>("client" + std::to_string(n)); }

  ServerConfig config() const {
    ServerConfig cfg;
    cfg.listen_host = "127.0.0.1";
    cfg.listen_port = 0;
    const auto f = pki_->files<TlsFiles>("server");
    cfg.ca_file = f.ca;
    cfg.cert_file = f.cert;
    cfg.key_file = f.key;
    cfg.data_port_min = 43000;
    cfg.data_port_max = 43999;
    return cfg;
  }

  void start(const ServerConfig& cfg) {
    auto nodes = std::make_shared<NodeStore>();
    NodeSpec plant;
    plant.id = plant.name = "plant";
    nodes->add(plant);
    const auto value_node = [](std::string id) {
      NodeSpec n;
      n.id = n.name = std::move(id);
      n.type = ValueType::float64;
      n.parents = {"plant"};
      return n;
    };
    for (int i = 0; i < 10; ++i) {
      NodeSpec n = value_node("plant.t" + std::to_string(i));  // memory nodes: 20.0 + i
      n.initial = 20.0 + i;
      nodes->add(n);
    }
    for (int i = 0; i < 256; ++i) {
      NodeSpec n = value_node("plant.dev" + std::to_string(i));  // on the held device
      n.read_async = device_.reader();
      nodes->add(n);
    }
    server_ = std::make_unique<Server>(io_, cfg, nodes);
    server_->start();
    work_.emplace(io_.get_executor());
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (!server_) return;
    device_.answer_all();
    server_->stop();
    work_.reset();
    // Sessions end on their own once stopped; bounded, then the loop is stopped regardless.
    EXPECT_TRUE(eventually([&] {
      const auto s = server_->stats();
      return s.sessions_active == 0 && s.handshakes_in_progress == 0 && s.links_active == 0;
    })) << "sessions or handshakes left open at stop";
    io_.stop();
    thread_.join();
    if (log_counter_) {
      auto& sinks = spdlog::default_logger()->sinks();
      sinks.erase(std::find(sinks.begin(), sinks.end(), log_counter_));
    }
  }

  ClientOptions options(int n = 1, unsigned links = 0) const {
    ClientOptions o;
    o.host = "127.0.0.1";
    o.port = server_->port();
    o.tls = client(n);
    o.links = links;
    o.rotate_interval = std::chrono::milliseconds(0);
    o.deadline = std::chrono::milliseconds(5000);
    return o;
  }

  /// A legitimate client reads a node; true if it got the value.
  bool legit_read(int n = 1) {
    Client c(options(n));
    c.connect();
    const Json r = c.read({"plant.t3"});
    return r["values"][0]["value"] == 23.0;
  }

  static pqot::test::TestPki* pki_;
  std::shared_ptr<LogCounter> log_counter_;
  HeldDevice device_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
};
pqot::test::TestPki* SrmcpHostile::pki_ = nullptr;

// ---- 1. before authentication ------------------------------------------------------------------------

// 1,100 idle TCP connections without a certificate once locked every client out (they counted as
// sessions from accept). Now only established sessions count, handshakes in progress are bounded
// in total and per source, and a newcomer from a quiet source takes the place of the busiest
// source's oldest handshake.
TEST_F(SrmcpHostile, IdleConnectionsDoNotLockOutClients_S12) {
  ServerConfig cfg = config();
  cfg.handshake_deadline = std::chrono::seconds(60);  // the attackers' connections outlive the test
  start(cfg);
  std::vector<std::unique_ptr<TcpPeer>> idle;
  for (int i = 0; i < 1100; ++i) idle.push_back(std::make_unique<TcpPeer>(attacker_source(i), server_->port()));
  ASSERT_TRUE(eventually([&] {
    const auto s = server_->stats();
    return refusals(s, Refusal::handshakes_per_source) + s.handshakes_in_progress >= 1100;
  })) << "the server has not seen every connection";
  auto s = server_->stats();
  EXPECT_EQ(s.handshakes_in_progress, cfg.max_handshakes) << "8 sources x 32 fill the total exactly";
  EXPECT_EQ(refusals(s, Refusal::handshakes_per_source), 1100u - cfg.max_handshakes);

  // A legitimate client sharing an attacker's address is refused while that address holds its
  // max_handshakes_per_source: the per-source bound cannot tell them apart.
  EXPECT_THROW(RawSession(server_->port(), client(1), attacker_source(0)), std::exception);

  // A client from a quiet source gets in (one of the attackers' oldest handshakes gives way), and
  // in again.
  EXPECT_TRUE(legit_read(1));
  EXPECT_TRUE(legit_read(2));
  s = server_->stats();
  EXPECT_GE(refusals(s, Refusal::handshake_evicted), 1u);
  EXPECT_LE(s.handshakes_in_progress, cfg.max_handshakes);
  // Once the attacker lets go, the same address is served.
  idle.clear();
  ASSERT_TRUE(eventually([&] { return server_->stats().handshakes_in_progress == 0; }));
  RawSession shared(server_->port(), client(1), attacker_source(0));
  EXPECT_EQ(shared.call(MessageType::ping, "{}")->header.status, Status::ok);
}

TEST_F(SrmcpHostile, MaxSessionsCountsOnlyEstablishedSessions_S12) {
  ServerConfig cfg = config();
  cfg.max_sessions = 2;
  start(cfg);
  std::vector<std::unique_ptr<TcpPeer>> idle;
  for (int i = 0; i < 20; ++i) idle.push_back(std::make_unique<TcpPeer>(attacker_source(i), server_->port()));
  ASSERT_TRUE(eventually([&] { return server_->stats().handshakes_in_progress == 20; }));
  Client a(options(1));
  a.connect();
  Client b(options(2));
  b.connect();
  EXPECT_EQ(server_->stats().sessions_active, 2u);
  Client c(options(3));
  EXPECT_THROW(c.connect(), ClientError) << "the third established session is over max_sessions";
  EXPECT_EQ(refusals(server_->stats(), Refusal::sessions_total), 1u);
  EXPECT_EQ(a.read({"plant.t3"})["values"][0]["value"], 23.0);
}

TEST_F(SrmcpHostile, SessionsPerIdentityAreBounded_S12) {
  ServerConfig cfg = config();
  cfg.max_sessions_per_identity = 2;
  start(cfg);
  auto a = std::make_unique<Client>(options(1));
  a->connect();
  Client b(options(1));
  b.connect();
  Client c(options(1));
  EXPECT_THROW(c.connect(), ClientError);
  EXPECT_EQ(refusals(server_->stats(), Refusal::sessions_per_identity), 1u);
  EXPECT_TRUE(legit_read(2)) << "another identity is not affected";
  a->close();
  a.reset();
  ASSERT_TRUE(eventually([&] { return server_->stats().sessions_active == 1; }));
  EXPECT_TRUE(legit_read(1)) << "the slot is free again";
}

// A flood of garbage: every refusal is counted, but the log gets at most its burst per interval.
TEST_F(SrmcpHostile, GarbageFloodIsCountedAndLoggedAtABoundedRate_S12) {
  // (Installed before the server runs and removed in TearDown after it stopped: the sink list is
  // not changed while another thread logs.)
  log_counter_ = std::make_shared<LogCounter>();
  spdlog::default_logger()->sinks().push_back(log_counter_);
  start(config());
  auto counter = log_counter_;
  const Bytes garbage(64, 0x42);
  const auto began = std::chrono::steady_clock::now();
  for (int i = 0; i < 300; ++i) {
    TcpPeer p(attacker_source(i), server_->port());
    p.send(garbage);
  }
  ASSERT_TRUE(eventually([&] { return refusals(server_->stats(), Refusal::tls_failed) >= 300; }))
      << refusals(server_->stats(), Refusal::tls_failed);
  // Per reason, 10 lines per 10 s window plus one "more refusals not logged" line (however slow
  // this machine, the flood fits in the windows counted here); reasons other than tls_failed
  // (handshake slots) have budgets of their own.
  const auto windows = 2 + (std::chrono::steady_clock::now() - began) / std::chrono::seconds(10);
  std::size_t reasons = 0;
  for (std::size_t r = 0; r < kRefusalKinds; ++r) reasons += server_->stats().refusals[r] > 0 ? 1 : 0;
  EXPECT_LE(counter->lines(), static_cast<std::size_t>(11 * windows) * reasons)
      << "300 refusals must not write 300 log lines";
  EXPECT_TRUE(legit_read(1));
}

// ---- 2. sessions always close --------------------------------------------------------------------------

// A body that is not UTF-8 once made the error reply throw from inside its catch block: the
// session left the session set while its sockets lived on. Now the error text is printable and
// the session and its links close as any other.
TEST_F(SrmcpHostile, BodyThatIsNotUtf8GetsAnErrorAndTheSessionStaysWhole_S9) {
  start(config());
  {
    RawSession s(server_->port(), client(1));
    ASSERT_NE(s.open_link(), 0u);
    EXPECT_EQ(server_->stats().links_active, 1u);
    const auto r = s.call(MessageType::read, "{\"ids\":[\"\xff\xfe\"]}");
    ASSERT_TRUE(r) << "answered";
    EXPECT_EQ(r->header.status, Status::bad_request);
    EXPECT_NE(r->body.at("message").get<std::string>().find("\\xff"), std::string::npos) << r->body.dump();
    EXPECT_EQ(s.call(MessageType::ping, "{}")->header.status, Status::ok) << "the session goes on";
    EXPECT_EQ(server_->stats().sessions_active, 1u);
  }
  EXPECT_TRUE(eventually([&] {
    const auto st = server_->stats();
    return st.sessions_active == 0 && st.links_active == 0;
  })) << "the session and its data link are closed with the connection";
}

// ---- 3. backpressure ----------------------------------------------------------------------------------

// A client that pipelines large READs and never reads: reading pauses at max_queued_bytes, and the
// session is closed after send_stall_timeout; another client is served all along.
TEST_F(SrmcpHostile, ClientThatNeverReadsIsStoppedThenClosed_S12) {
  ServerConfig cfg = config();
  cfg.max_queued_bytes = 1u << 20;
  cfg.send_stall_timeout = std::chrono::milliseconds(1000);
  start(cfg);
  Client legit(options(2));
  legit.connect();
  std::string body = "{\"ids\":[";
  for (int i = 0; i < 256; ++i) body += std::string(i ? "," : "") + "\"plant.t" + std::to_string(i % 10) + "\"";
  body += "]}";
  RawSession hog(server_->port(), client(1));
  std::atomic<int> sent{0};
  std::thread writer([&] {
    try {
      // 20,000 x ~3.5 KB: far more than loopback socket buffers hold, so the writer must block
      // once the server stops reading, until the server closes the session.
      for (int i = 0; i < 20000; ++i) {
        hog.send(hog.request(MessageType::read, body, hog.next_tid()));
        ++sent;
      }
    } catch (const std::exception&) {
      // The server closed the connection: the writes fail.
    }
  });
  for (int i = 0; i < 20; ++i) ASSERT_EQ(legit.read({"plant.t3"})["values"][0]["value"], 23.0) << i;
  const bool closed = eventually([&] { return refusals(server_->stats(), Refusal::send_backlog) == 1; },
                                 std::chrono::seconds(30));
  writer.join();
  ASSERT_TRUE(closed) << "the session that does not read was not closed";
  EXPECT_LT(sent.load(), 20000) << "the server stopped reading, so the writer was stopped too";
  EXPECT_TRUE(eventually([&] { return server_->stats().sessions_active == 1; }));
  EXPECT_EQ(legit.read({"plant.t4"})["values"][0]["value"], 24.0);
}

TEST_F(SrmcpHostile, SubscriptionsAreBoundedPerSession_S12) {
  start(config());
  Client c(options(1));
  c.connect();
  for (int i = 0; i < 16; ++i) c.subscribe({"plant.t1"}, std::chrono::milliseconds(1000));
  try {
    c.subscribe({"plant.t1"}, std::chrono::milliseconds(1000));
    FAIL() << "a 17th subscription was accepted";
  } catch (const ClientError& e) {
    EXPECT_EQ(e.status(), Status::too_large);
  }
  Client d(options(1));
  d.connect();
  std::vector<std::string> ids;
  for (int i = 0; i < 256; ++i) ids.push_back("plant.t" + std::to_string(i % 10));
  for (int i = 0; i < 4; ++i) d.subscribe(ids, std::chrono::milliseconds(1000));  // 1,024 ids
  EXPECT_THROW(d.subscribe({"plant.t1"}, std::chrono::milliseconds(1000)), ClientError);
  EXPECT_EQ(refusals(server_->stats(), Refusal::subscriptions), 2u);
}

// One session cannot fill a device's queue: while max_backend_ops node operations wait for the
// device, the session's requests wait in its socket. Everything is answered in the end.
TEST_F(SrmcpHostile, DeviceOperationsAreBoundedPerSession_S12) {
  ServerConfig cfg = config();
  cfg.max_backend_ops = 256;
  start(cfg);
  std::string body = "{\"ids\":[";
  for (int i = 0; i < 256; ++i) body += std::string(i ? "," : "") + "\"plant.dev" + std::to_string(i) + "\"";
  body += "]}";
  RawSession s(server_->port(), client(1));
  std::vector<std::uint32_t> tids;
  for (int i = 0; i < 10; ++i) {
    tids.push_back(s.next_tid());
    s.send(s.request(MessageType::read, body, tids.back()));
  }
  std::size_t answered = 0;
  for (int round = 0; round < 20 && answered < tids.size(); ++round) {
    ASSERT_TRUE(eventually([&] { return device_.waiting() > 0; })) << "round " << round;
    EXPECT_TRUE(legit_read(2)) << "another session is served meanwhile";
    device_.answer_all();
    while (answered < tids.size()) {
      auto r = s.await_reply(tids[answered], std::chrono::milliseconds(300));
      if (!r) break;
      EXPECT_EQ(r->header.status, Status::ok);
      ++answered;
    }
  }
  EXPECT_EQ(answered, tids.size()) << "every READ answered";
  EXPECT_LE(device_.peak(), 2u * cfg.max_backend_ops) << "ten 256-id READs never wait on the device at once";
}

// ---- 4. reassembly memory --------------------------------------------------------------------------------

// A first segment announcing a 1 MiB message holds only its own bytes, and a message left
// unfinished expires 5 s later on a timer, without any further frame arriving.
TEST_F(SrmcpHostile, PartialMessagesHoldOnlyTheirBytesAndExpireOnATimer_S8_2) {
  ServerConfig cfg = config();
  cfg.limits.max_frame_body = 128 * 1024;  // room for a 64 KiB segment (1/16 of 1 MiB) in one frame
  start(cfg);
  RawSession s(server_->port(), client(1));
  const std::uint32_t total = 1u << 20;
  const Bytes part(total / 16, 0x33);
  s.send(s.segment_frame(0, SegmentHeader{s.next_tid(), 999, 0, 16, total, 0}, part));
  ASSERT_TRUE(eventually([&] { return server_->stats().partial_bytes > 0; }));
  EXPECT_EQ(server_->stats().partial_bytes, part.size()) << "not the announced 1 MiB";
  EXPECT_TRUE(eventually([&] { return server_->stats().partial_bytes == 0; }, std::chrono::seconds(15)))
      << "expired by the timer (§8.2: 5 s)";
  EXPECT_EQ(refusals(server_->stats(), Refusal::partial_expired), 1u);
  EXPECT_EQ(s.call(MessageType::ping, "{}")->header.status, Status::ok);
}

// One identity may open many sessions (max_sessions_per_identity); its partial messages together
// are bounded too, so it cannot hold the server-wide budget that other clients need.
TEST_F(SrmcpHostile, OneIdentityCannotHoldTheServerWidePartialBudget_S8_2) {
  ServerConfig cfg = config();
  cfg.limits.max_frame_body = 128 * 1024;  // room for a 64 KiB segment in one frame
  cfg.max_partial_bytes_per_identity = 128 * 1024;
  start(cfg);
  const std::uint32_t total = 1u << 20;
  const Bytes part(total / 16, 0x44);  // 64 KiB
  RawSession a(server_->port(), client(1));
  RawSession b(server_->port(), client(1));
  RawSession c(server_->port(), client(2));
  a.send(a.segment_frame(0, SegmentHeader{a.next_tid(), 900, 0, 16, total, 0}, part));
  b.send(b.segment_frame(0, SegmentHeader{b.next_tid(), 900, 0, 16, total, 0}, part));
  ASSERT_TRUE(eventually([&] { return server_->stats().partial_bytes == 2 * part.size(); }));
  const auto dropped = refusals(server_->stats(), Refusal::segments_dropped);
  b.send(b.segment_frame(0, SegmentHeader{b.next_tid(), 901, 0, 16, total, 0}, part));
  ASSERT_TRUE(eventually([&] { return refusals(server_->stats(), Refusal::segments_dropped) > dropped; }))
      << "client1's third 64 KiB is over its identity's 128 KiB";
  EXPECT_EQ(server_->stats().partial_bytes, 2 * part.size());
  c.send(c.segment_frame(0, SegmentHeader{c.next_tid(), 900, 0, 16, total, 0}, part));
  EXPECT_TRUE(eventually([&] { return server_->stats().partial_bytes == 3 * part.size(); }))
      << "another identity still gets its share";
  EXPECT_EQ(c.call(MessageType::ping, "{}")->header.status, Status::ok);
}

// ---- 5. data-link offers ---------------------------------------------------------------------------------

TEST_F(SrmcpHostile, StrangersOnAnOfferPortDoNotBurnIt_S7) {
  start(config());
  RawSession s(server_->port(), client(1));
  const auto offer = s.call(MessageType::link_request, "{}");
  ASSERT_TRUE(offer && offer->header.status == Status::ok);
  const auto port = offer->body["port"].get<std::uint16_t>();
  {
    TcpPeer garbage(attacker_source(0), port);  // not TLS at all
    garbage.send(Bytes(100, 0x16));
  }
  {
    RawLink other(port, client(2));  // (TLS 1.3: the client finishes before the server checks it)
    other.set_timeout(std::chrono::milliseconds(3000));
    EXPECT_FALSE(other.read_frame()) << "another identity: closed";
  }
  const auto ready = s.bind_link(client(1), port, offer->body["link_id"].get<std::uint32_t>(),
                                 crypto::from_hex(offer->body["token"].get<std::string>()), s.session_id());
  ASSERT_TRUE(ready) << "the offer survived the strangers";
  EXPECT_EQ(ready->type, FrameType::link_ready);
  EXPECT_GE(refusals(server_->stats(), Refusal::link_bind_failed), 2u);
}

TEST_F(SrmcpHostile, PendingOffersAreBoundedPerIdentity_S7) {
  ServerConfig cfg = config();
  cfg.max_pending_links_per_identity = 3;
  start(cfg);
  RawSession a(server_->port(), client(1));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a.call(MessageType::link_request, "{}")->header.status, Status::ok);
  EXPECT_EQ(a.call(MessageType::link_request, "{}")->header.status, Status::busy);
  RawSession b(server_->port(), client(1));
  EXPECT_EQ(b.call(MessageType::link_request, "{}")->header.status, Status::busy) << "same identity";
  RawSession c(server_->port(), client(2));
  EXPECT_EQ(c.call(MessageType::link_request, "{}")->header.status, Status::ok) << "another identity";
  EXPECT_EQ(refusals(server_->stats(), Refusal::offers_per_identity), 2u);
}

TEST_F(SrmcpHostile, AnOfferCountsAgainstMaxLinksUntilBound_S7) {
  ServerConfig cfg = config();
  cfg.limits.max_links = 2;
  start(cfg);
  RawSession s(server_->port(), client(1));
  const auto first = s.call(MessageType::link_request, "{}");
  ASSERT_EQ(first->header.status, Status::ok);
  ASSERT_EQ(s.call(MessageType::link_request, "{}")->header.status, Status::ok);
  TcpPeer connected(attacker_source(0), first->body["port"].get<std::uint16_t>());  // accepted, never bound
  EXPECT_EQ(s.call(MessageType::link_request, "{}")->header.status, Status::too_many_links);
}

TEST_F(SrmcpHostile, ClientCarriesOnWithTheLinksItGot_S7) {
  ServerConfig cfg = config();
  cfg.max_pending_links_per_identity = 1;  // of three concurrent LINK_REQUESTs, some are refused
  start(cfg);
  Client c(options(1, 3));
  ASSERT_NO_THROW(c.connect());
  EXPECT_GE(c.info().data_links, 1u);
  EXPECT_EQ(c.info().data_links + c.info().link_failures, 3u);
  EXPECT_EQ(c.read({"plant.t5"})["values"][0]["value"], 25.0);
}

// ---- 6. LINK_CLOSE and inner authentication --------------------------------------------------------------

// §7.4, §8.1: every request is answered exactly once, also around LINK_CLOSE.
TEST_F(SrmcpHostile, LinkCloseAnswersWhatWasSentOnTheClosingLink_S7_S8_1) {
  start(config());
  RawSession s(server_->port(), client(1));
  const auto l1 = s.open_link();
  const auto l2 = s.open_link();
  ASSERT_NE(l1, 0u);
  ASSERT_NE(l2, 0u);
  // LINK_CLOSE for l1 sent on l2, with reads on l1 just before and (against the rules) after it:
  // l1 is still read for link_close_grace, so all three are answered.
  const auto before = s.next_tid(), close = s.next_tid(), after = s.next_tid();
  s.send_on(l1, s.frame_on(l1, s.seal_message(MessageType::read, R"({"ids":["plant.t1"]})", before, s.unix_now()), before));
  s.send_on(l2, s.frame_on(l2, s.seal_message(MessageType::link_close, "{\"link_id\":" + std::to_string(l1) + "}", close,
                                              s.unix_now()), close));
  s.send_on(l1, s.frame_on(l1, s.seal_message(MessageType::read, R"({"ids":["plant.t2"]})", after, s.unix_now()), after));
  for (auto tid : {before, close, after}) {
    const auto r = s.await_reply(tid);
    ASSERT_TRUE(r) << "tid " << tid << " unanswered";
    EXPECT_EQ(r->header.status, Status::ok) << tid;
  }
  // A second LINK_CLOSE for the same link: BAD_REQUEST.
  const auto again = s.call(MessageType::link_close, "{\"link_id\":" + std::to_string(l1) + "}");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->header.status, Status::bad_request);
  // LINK_CLOSE sent on the link it closes: the request before it is answered, then the server
  // closes that link.
  const auto last = s.next_tid(), bye = s.next_tid();
  s.send_on(l2, s.frame_on(l2, s.seal_message(MessageType::read, R"({"ids":["plant.t3"]})", last, s.unix_now()), last));
  s.send_on(l2, s.frame_on(l2, s.seal_message(MessageType::link_close, "{\"link_id\":" + std::to_string(l2) + "}", bye,
                                              s.unix_now()), bye));
  EXPECT_TRUE(s.await_reply(last));
  EXPECT_TRUE(s.await_reply(bye));
  EXPECT_TRUE(eventually([&] { return server_->stats().links_active == 0; })) << "both links closed by the server";
}

// A message whose own tag fails inside an authentic frame is answered BAD_REQUEST (§9), not left to
// the client's deadline.
TEST_F(SrmcpHostile, MessageFailingAuthenticationIsAnswered_S9) {
  start(config());
  RawSession s(server_->port(), client(1));
  const auto tid = s.next_tid();
  Bytes sealed = s.seal_message(MessageType::ping, "{}", tid, s.unix_now());
  sealed[kMessageHeaderSize] ^= 1;  // the ciphertext; the frame around it is sealed correctly
  s.send(s.frame(sealed, tid));
  const auto r = s.await_reply(tid);
  ASSERT_TRUE(r) << "no answer";
  EXPECT_EQ(r->header.type, MessageType::error);
  EXPECT_EQ(r->header.status, Status::bad_request);
  EXPECT_EQ(s.call(MessageType::ping, "{}")->header.status, Status::ok);
}

}  // namespace
}  // namespace pqot::srmcp
