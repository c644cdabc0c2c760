// TRIP's handshake and sessions without sockets (docs/trip.md §4-§7): a client and a server agree
// on keys, flows and parameters; each refusal of §4.3 is its close code; sessions carry data and
// keepalives both ways, measure RTT, and only new keepalives keep them alive.
#include <gtest/gtest.h>

#include "pqot/trip/handshake.hpp"
#include "pqot/trip/session.hpp"

namespace pqot::trip {
namespace {

using D = FlowDirection;

const crypto::Bytes kTripExporter(32, 0x77);

struct TripPair {
  SessionAgreement client;
  SessionAgreement server;
};

TripPair trip_handshake(KemId kem = KemId::ml_kem_768, ServerOffer offer = {}) {
  const std::vector<SessionFlow> flows{{1, D::client_reflects}, {2, D::server_reflects}};
  ClientHandshake c(kem, 0x1111, 3, flows);
  ServerAnswer a = answer_client_hello(c.hello_body(), kTripExporter, offer, flows, 0x2222, 9);
  SessionAgreement client = c.finish(a.body, kTripExporter);
  return {std::move(client), std::move(a.agreement)};
}

// The CLOSE code and reason the server answers `hello` with.
HandshakeError trip_refusal(const crypto::Bytes& hello, const std::vector<SessionFlow>& expected, ServerOffer offer = {}) {
  try {
    answer_client_hello(hello, kTripExporter, offer, expected, 1, 0);
  } catch (const HandshakeError& e) {
    return e;
  }
  ADD_FAILURE() << "the server accepted";
  return HandshakeError(CloseCode::protocol, "");
}

TEST(TripHandshake, BothSidesAgreeOnKeysFlowsAndParameters) {
  for (const KemId kem : {KemId::ml_kem_768, KemId::ml_kem_1024, KemId::x_wing}) {
    const TripPair p = trip_handshake(kem);
    EXPECT_EQ(p.client.keys.c2s.span()[0], p.server.keys.c2s.span()[0]);
    EXPECT_TRUE(std::equal(p.client.keys.c2s.span().begin(), p.client.keys.c2s.span().end(), p.server.keys.c2s.span().begin()));
    EXPECT_TRUE(std::equal(p.client.keys.s2c.span().begin(), p.client.keys.s2c.span().end(), p.server.keys.s2c.span().begin()));
    EXPECT_FALSE(std::equal(p.client.keys.c2s.span().begin(), p.client.keys.c2s.span().end(), p.client.keys.s2c.span().begin()));
    EXPECT_TRUE(ready_matches(p.client.keys, ready_body(p.server.keys)));
    EXPECT_EQ(p.client.server_boot, 0x2222u);
    EXPECT_EQ(p.server.client_boot, 0x1111u);
    EXPECT_EQ(p.client.session, 9);
    EXPECT_EQ(p.server.client_path, 3);
    EXPECT_EQ(p.client.flows, p.server.flows);
  }
  // Another exporter (another TLS session): other keys, and READY does not match.
  const std::vector<SessionFlow> flows{{1, D::client_reflects}};
  ClientHandshake c(KemId::ml_kem_768, 1, 1, flows);
  ServerAnswer a = answer_client_hello(c.hello_body(), kTripExporter, {}, flows, 2, 0);
  const SessionAgreement moved = c.finish(a.body, crypto::Bytes(32, 0x78));
  EXPECT_FALSE(ready_matches(moved.keys, ready_body(a.agreement.keys)));
}

TEST(TripHandshake, EachRefusalHasItsCloseCode) {
  const std::vector<SessionFlow> flows{{1, D::client_reflects}, {7, D::client_reflects}};
  ClientHandshake c(KemId::ml_kem_768, 1, 1, flows);

  crypto::Bytes version = c.hello_body();
  version[0] = 2;
  EXPECT_EQ(trip_refusal(version, flows).code(), CloseCode::version);

  ServerOffer only_xwing;
  only_xwing.accept_kems = {KemId::x_wing};
  const HandshakeError kem = trip_refusal(c.hello_body(), flows, only_xwing);
  EXPECT_EQ(kem.code(), CloseCode::kem);
  EXPECT_NE(std::string(kem.what()).find("ML-KEM-768"), std::string::npos) << kem.what();

  // docs/trip.md §4.3: the reason names the first flow that differs and how.
  const HandshakeError missing = trip_refusal(c.hello_body(), {{1, D::client_reflects}});
  EXPECT_EQ(missing.code(), CloseCode::flows);
  EXPECT_STREQ(missing.what(), "flow 7: the client reflects it on this path, this side does not filter it here");
  const HandshakeError extra = trip_refusal(c.hello_body(), {{1, D::client_reflects}, {5, D::server_reflects}, {7, D::client_reflects}});
  EXPECT_STREQ(extra.what(), "flow 5: this side reflects it on this path, the client does not filter it here");
  const HandshakeError turned = trip_refusal(c.hello_body(), {{1, D::client_reflects}, {7, D::server_reflects}});
  EXPECT_EQ(turned.code(), CloseCode::flows);

  crypto::Bytes truncated = c.hello_body();
  truncated.pop_back();
  EXPECT_EQ(trip_refusal(truncated, flows).code(), CloseCode::protocol);

  // An encapsulation key that fails FIPS 203's modulus check: every coefficient 0xfff > q.
  ClientHello bad_key;
  bad_key.ek = crypto::Bytes(1184, 0xff);
  bad_key.boot = 5;
  bad_key.flows = flows;
  EXPECT_EQ(trip_refusal(encode(bad_key), flows).code(), CloseCode::kem);
  bad_key.ek.resize(1183);
  EXPECT_EQ(trip_refusal(encode(bad_key), flows).code(), CloseCode::kem);
}

TEST(TripHandshake, TheClientRefusesAServerHelloForAnotherKemOrMalformed) {
  const std::vector<SessionFlow> flows{{1, D::client_reflects}};
  ClientHandshake c(KemId::ml_kem_768, 1, 1, flows);
  ServerAnswer a = answer_client_hello(ClientHandshake(KemId::x_wing, 1, 1, flows).hello_body(), kTripExporter, {}, flows, 2, 0);
  try {
    c.finish(a.body, kTripExporter);
    ADD_FAILURE() << "accepted";
  } catch (const HandshakeError& e) {
    EXPECT_EQ(e.code(), CloseCode::protocol);
  }
  ClientHandshake c2(KemId::ml_kem_768, 1, 1, flows);
  EXPECT_THROW(c2.finish(crypto::Bytes{1, 0, 1}, kTripExporter), HandshakeError);
}

TEST(TripSession, DataAndKeepalivesTravelBothWaysAndMeasureRtt) {
  const TripPair p = trip_handshake();
  const auto t0 = Clock::now();
  Session client(SessionRole::client, p.client, t0);
  Session server(SessionRole::server, p.server, t0);
  EXPECT_TRUE(client.reflects(1));
  EXPECT_TRUE(server.filters(1));
  EXPECT_TRUE(server.reflects(2));
  EXPECT_TRUE(client.filters(2));
  EXPECT_EQ(client.peer_boot(), 0x2222u);
  EXPECT_EQ(server.peer_boot(), 0x1111u);

  std::array<std::uint8_t, 256> wire{};
  std::array<std::uint8_t, 256> plain{};
  const crypto::Bytes goose(162, 0x42);
  const std::size_t n = client.seal_data(1, 77, goose, wire, t0);
  ASSERT_EQ(n, 190u);
  const crypto::ByteView dg(wire.data(), n);
  DropReason why{};
  const auto h = parse_header(dg);
  ASSERT_TRUE(h);
  const auto opened = server.open(*h, dg, plain, t0, why);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->flow, 1);
  EXPECT_EQ(opened->counter, 77u);
  EXPECT_EQ(crypto::Bytes(plain.begin(), plain.begin() + 162), goose);
  // The server does not accept flow 1 from itself, nor the client flow 1 (it reflects it).
  EXPECT_FALSE(client.open(*h, dg, plain, t0, why));
  EXPECT_EQ(why, DropReason::unknown_flow);
  EXPECT_THROW(server.seal_data(1, 1, goose, wire, t0), std::invalid_argument);
  Header other = *h;
  other.session = 10;
  EXPECT_FALSE(server.open(other, dg, plain, t0, why));
  EXPECT_EQ(why, DropReason::unknown_session);
  crypto::Bytes tampered(dg.begin(), dg.end());
  tampered[20] ^= 1;
  EXPECT_FALSE(server.open(*parse_header(tampered), tampered, plain, t0, why));
  EXPECT_EQ(why, DropReason::auth);

  // Keepalives: the client sends one, the server answers 3 ms later echoing it; the client
  // receives the answer 10 ms after sending: RTT = 10 - 3 ms.
  const auto ka = [&](Session& from, Session& to, Clock::time_point sent, Clock::time_point arrives) {
    std::array<std::uint8_t, kKeepaliveSize> k{};
    from.seal_keepalive(k, sent);
    const auto kh = parse_header(k);
    std::array<std::uint8_t, kKeepaliveBodySize> body{};
    DropReason w{};
    const auto o = to.open(*kh, k, body, arrives, w);
    EXPECT_TRUE(o);
    return to.on_keepalive(o->counter, *decode_keepalive(body), arrives);
  };
  using std::chrono::milliseconds;
  EXPECT_TRUE(ka(client, server, t0, t0 + milliseconds(4)));
  EXPECT_TRUE(ka(server, client, t0 + milliseconds(7), t0 + milliseconds(10)));
  ASSERT_TRUE(client.last_rtt());
  EXPECT_EQ(client.last_rtt()->count(), 7000);  // 10 ms since sending, 3 ms held by the server
  EXPECT_EQ(client.keepalives_missing(), 0u);
}

TEST(TripSession, OnlyNewKeepalivesKeepASessionAliveAndGapsAreCounted) {
  const TripPair p = trip_handshake();
  const auto t0 = Clock::now();
  Session client(SessionRole::client, p.client, t0);
  Session server(SessionRole::server, p.server, t0);
  using std::chrono::milliseconds;
  std::vector<std::array<std::uint8_t, kKeepaliveSize>> sent(5);
  for (auto& k : sent) client.seal_keepalive(k, t0);
  const auto deliver = [&](const std::array<std::uint8_t, kKeepaliveSize>& k, Clock::time_point at) {
    const auto kh = parse_header(k);
    std::array<std::uint8_t, kKeepaliveBodySize> body{};
    DropReason w{};
    const auto o = server.open(*kh, k, body, at, w);
    return o && server.on_keepalive(o->counter, *decode_keepalive(body), at);
  };
  EXPECT_TRUE(deliver(sent[0], t0 + milliseconds(1000)));
  EXPECT_TRUE(deliver(sent[3], t0 + milliseconds(2000)));  // 2 and 3 lost (so far)
  EXPECT_EQ(server.keepalives_missing(), 2u);
  EXPECT_FALSE(deliver(sent[1], t0 + milliseconds(2500)));  // late: counted, not new
  EXPECT_EQ(server.keepalives_missing(), 1u);
  // A replay of the newest one, long after: it authenticates but is not new, so the session,
  // silent since 2,000 ms, is dead at 2,000 + dead_after.
  EXPECT_FALSE(deliver(sent[3], t0 + milliseconds(6900)));
  EXPECT_FALSE(server.dead(t0 + milliseconds(7000)));
  EXPECT_TRUE(server.dead(t0 + milliseconds(7001)));
}

}  // namespace
}  // namespace pqot::trip
