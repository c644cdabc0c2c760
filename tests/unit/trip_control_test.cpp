// TRIP's control frames (docs/trip.md §3, §4): each body round-trips, and every malformed one
// (truncated at any byte, a trailing byte, a count or field out of range) is refused.
#include <gtest/gtest.h>

#include "pqot/trip/control.hpp"

namespace pqot::trip {
namespace {

ClientHello trip_sample_client_hello() {
  ClientHello h;
  h.ek = crypto::Bytes(1184, 0x11);
  h.random.fill(0x22);
  h.boot = 0x0102030405060708;
  h.path = 2;
  h.flows = {{1, FlowDirection::client_reflects}, {1, FlowDirection::server_reflects}, {9, FlowDirection::client_reflects}};
  return h;
}

ServerHello trip_sample_server_hello() {
  ServerHello h;
  h.ct = crypto::Bytes(1088, 0x33);
  h.random.fill(0x44);
  h.boot = 77;
  h.session = 255;
  return h;
}

// Every proper prefix of a valid body is refused as truncated; one more byte as trailing.
template <class Decode>
void trip_expect_exact(const crypto::Bytes& body, Decode decode) {
  for (std::size_t n = 0; n < body.size(); ++n) {
    EXPECT_THROW(decode(crypto::ByteView(body).first(n)), ControlError) << n;
  }
  crypto::Bytes longer = body;
  longer.push_back(0);
  EXPECT_THROW(decode(longer), ControlError);
}

TEST(TripControl, ClientHelloRoundTripsAndIsExact) {
  const ClientHello h = trip_sample_client_hello();
  const crypto::Bytes body = encode(h);
  EXPECT_EQ(body.size(), 1u + 2 + 2 + 1184 + 32 + 8 + 1 + 2 + 3 * 3);
  const ClientHello back = decode_client_hello(body);
  EXPECT_EQ(back.version, 1);
  EXPECT_EQ(back.kem, 1);
  EXPECT_EQ(back.ek, h.ek);
  EXPECT_EQ(back.random, h.random);
  EXPECT_EQ(back.boot, h.boot);
  EXPECT_EQ(back.path, 2);
  EXPECT_EQ(back.flows, h.flows);
  trip_expect_exact(body, decode_client_hello);
}

TEST(TripControl, ClientHelloFlowsMustBeOrderedNamedAndFew) {
  const auto with_flows = [](std::vector<SessionFlow> flows) {
    ClientHello h = trip_sample_client_hello();
    h.flows.clear();
    crypto::Bytes body = encode(h);
    body.resize(body.size() - 2);  // n_flows, written again below
    body.push_back(static_cast<std::uint8_t>(flows.size() >> 8));
    body.push_back(static_cast<std::uint8_t>(flows.size()));
    for (const SessionFlow& f : flows) {
      body.push_back(static_cast<std::uint8_t>(f.flow >> 8));
      body.push_back(static_cast<std::uint8_t>(f.flow));
      body.push_back(static_cast<std::uint8_t>(f.dir));
    }
    return body;
  };
  using D = FlowDirection;
  EXPECT_NO_THROW(decode_client_hello(with_flows({{1, D::client_reflects}, {2, D::client_reflects}})));
  EXPECT_THROW(decode_client_hello(with_flows({{2, D::client_reflects}, {1, D::client_reflects}})), ControlError);
  EXPECT_THROW(decode_client_hello(with_flows({{1, D::client_reflects}, {1, D::client_reflects}})), ControlError);
  EXPECT_THROW(decode_client_hello(with_flows({{0, D::client_reflects}})), ControlError);
  EXPECT_THROW(decode_client_hello(with_flows({{1, static_cast<D>(2)}})), ControlError);
  std::vector<SessionFlow> many;
  for (std::uint16_t f = 1; f <= 1025; ++f) many.push_back({f, D::client_reflects});
  EXPECT_THROW(decode_client_hello(with_flows(many)), ControlError);
  many.pop_back();
  EXPECT_NO_THROW(decode_client_hello(with_flows(many)));
  // The encoder refuses what the decoder refuses.
  ClientHello bad = trip_sample_client_hello();
  bad.boot = 0;
  EXPECT_THROW(encode(bad), std::invalid_argument);
  bad = trip_sample_client_hello();
  std::swap(bad.flows[0], bad.flows[2]);
  EXPECT_THROW(encode(bad), ControlError);
}

TEST(TripControl, ServerHelloRoundTripsAndChecksItsRanges) {
  const ServerHello h = trip_sample_server_hello();
  const crypto::Bytes body = encode(h);
  const ServerHello back = decode_server_hello(body);
  EXPECT_EQ(back.ct, h.ct);
  EXPECT_EQ(back.random, h.random);
  EXPECT_EQ(back.boot, 77u);
  EXPECT_EQ(back.session, 255);
  EXPECT_EQ(back.key_update_datagrams, h.key_update_datagrams);
  EXPECT_EQ(back.key_update_seconds, h.key_update_seconds);
  EXPECT_EQ(back.keepalive_ms, h.keepalive_ms);
  EXPECT_EQ(back.dead_after_ms, h.dead_after_ms);
  trip_expect_exact(body, decode_server_hello);

  const auto refused = [](auto change) {
    ServerHello s = trip_sample_server_hello();
    change(s);
    return s;
  };
  const ServerHello bad[] = {
      refused([](ServerHello& s) { s.boot = 0; }),
      refused([](ServerHello& s) { s.key_update_datagrams = 0; }),
      refused([](ServerHello& s) { s.key_update_seconds = 0; }),
      refused([](ServerHello& s) { s.key_update_seconds = 86'401; }),
      refused([](ServerHello& s) { s.keepalive_ms = 49; }),
      refused([](ServerHello& s) { s.keepalive_ms = 60'001; }),
      refused([](ServerHello& s) { s.dead_after_ms = 2 * s.keepalive_ms; }),
      refused([](ServerHello& s) { s.dead_after_ms = 600'001; }),
  };
  for (const ServerHello& s : bad) {
    EXPECT_THROW(encode(s), ControlError);
    // The same bytes from a peer: patch a valid body's fields after the ciphertext.
    ServerHello ok = s;
    ok.boot = 1;
    ok.key_update_datagrams = 1;
    ok.key_update_seconds = 1;
    ok.keepalive_ms = 50;
    ok.dead_after_ms = 101;
    crypto::Bytes body2 = encode(ok);
    const std::size_t at = body2.size() - 25;  // boot (8), session (1), four u32
    for (int i = 0; i < 8; ++i) body2[at + i] = static_cast<std::uint8_t>(s.boot >> (56 - 8 * i));
    const std::uint32_t v[] = {s.key_update_datagrams, s.key_update_seconds, s.keepalive_ms, s.dead_after_ms};
    for (int f = 0; f < 4; ++f) {
      for (int i = 0; i < 4; ++i) body2[at + 9 + 4 * f + i] = static_cast<std::uint8_t>(v[f] >> (24 - 8 * i));
    }
    EXPECT_THROW(decode_server_hello(body2), ControlError);
  }
}

TEST(TripControl, CloseCarriesACodeAndABoundedReason) {
  const Close c{CloseCode::flows, "flow 7: the client reflects it, this side does not filter it"};
  const Close back = decode_close(encode(c));
  EXPECT_EQ(back.code, CloseCode::flows);
  EXPECT_EQ(back.reason, c.reason);
  EXPECT_STREQ(close_code_name(CloseCode::replaced), "replaced");
  // A longer reason is cut at 200 bytes when sent; a peer's longer one is refused.
  const crypto::Bytes cut = encode(Close{CloseCode::busy, std::string(300, 'x')});
  EXPECT_EQ(cut.size(), 3u + 200);
  crypto::Bytes over = {0, 6, 201};
  over.resize(3 + 201, 'x');
  EXPECT_THROW(decode_close(over), ControlError);
  trip_expect_exact(encode(c), decode_close);
}

TEST(TripControl, TheFrameReaderSplitsAStreamAndRefusesBadHeaders) {
  crypto::Bytes stream;
  const crypto::Bytes ping(kPingBodySize, 0x5a);
  for (const auto& f : {control_frame(FrameType::ping, ping), control_frame(FrameType::pong, ping),
                        control_frame(FrameType::close, encode(Close{CloseCode::shutdown, "bye"}))}) {
    stream.insert(stream.end(), f.begin(), f.end());
  }
  FrameReader r;
  std::vector<FrameReader::Frame> got;
  for (std::uint8_t b : stream) {  // one byte at a time: the worst split
    r.feed(crypto::ByteView(&b, 1));
    while (auto f = r.next()) got.push_back(std::move(*f));
  }
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].type, FrameType::ping);
  EXPECT_EQ(got[0].body, ping);
  EXPECT_EQ(got[1].type, FrameType::pong);
  EXPECT_EQ(decode_close(got[2].body).reason, "bye");
  EXPECT_EQ(r.buffered(), 0u);

  FrameReader unknown;
  unknown.feed(crypto::Bytes{7, 0, 0});
  EXPECT_THROW(unknown.next(), ControlError);
  FrameReader zero;
  zero.feed(crypto::Bytes{0, 0, 0});
  EXPECT_THROW(zero.next(), ControlError);
  FrameReader huge;  // refused on the header alone, before the body arrives
  huge.feed(crypto::Bytes{1, 0x10, 0x01});
  EXPECT_THROW(huge.next(), ControlError);
  EXPECT_THROW(control_frame(FrameType::ping, crypto::Bytes(kMaxControlBody + 1)), std::invalid_argument);
}

}  // namespace
}  // namespace pqot::trip
