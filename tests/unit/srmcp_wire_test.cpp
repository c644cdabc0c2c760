// SRMCP v2 wire encodings and their bounds (docs/srmcp.md §3, §4, §8.2, §9).
#include <gtest/gtest.h>

#include "pqot/srmcp/wire.hpp"

namespace pqot::srmcp {
namespace {

template <class F>
Action action_of(F&& f) {
  try {
    f();
  } catch (const ProtocolError& e) {
    return e.action();
  }
  ADD_FAILURE() << "no ProtocolError";
  return Action::reply;
}

TEST(SrmcpWire, PreHeaderBoundsCheckedBeforeAllocation_S3) {
  Limits limits;
  std::array<std::uint8_t, 8> b{};
  encode_pre_header({32, 65536}, b);
  EXPECT_EQ(parse_pre_header(b, limits).body_len, 65536u);
  encode_pre_header({32, 65537}, b);
  EXPECT_EQ(action_of([&] { parse_pre_header(b, limits); }), Action::close);
  encode_pre_header({32, 0xffffffff}, b);
  EXPECT_EQ(action_of([&] { parse_pre_header(b, limits); }), Action::close);
  encode_pre_header({33, 10}, b);
  EXPECT_EQ(action_of([&] { parse_pre_header(b, limits); }), Action::close);
}

TEST(SrmcpWire, FrameHeaderRoundTripAndStrictness_S3) {
  std::array<std::uint8_t, 32> b{};
  const FrameHeader h{FrameType::sealed, 7, 0x0102030405060708ull, 3};
  encode_frame_header(h, b);
  const auto p = parse_frame_header(b);
  EXPECT_EQ(p.type, FrameType::sealed);
  EXPECT_EQ(p.link_id, 7u);
  EXPECT_EQ(p.seq, 0x0102030405060708ull);
  EXPECT_EQ(p.epoch, 3u);
  for (auto [at, value] : {std::pair{0, 1}, {1, 99}, {2, 1}, {25, 1}}) {  // version, type, flags, reserved
    auto bad = b;
    bad[static_cast<std::size_t>(at)] = static_cast<std::uint8_t>(value);
    EXPECT_EQ(action_of([&] { parse_frame_header(bad); }), Action::close) << "byte " << at;
  }
}

TEST(SrmcpWire, SegmentsCoverTheMessageExactly_S8_2) {
  for (std::uint32_t total : {16u, 17u, 1000u, 65537u}) {
    for (std::uint16_t count = 1; count <= 16; ++count) {
      std::uint32_t covered = 0;
      for (std::uint16_t i = 0; i < count; ++i) {
        auto [offset, size] = segment_span(total, count, i);
        EXPECT_EQ(offset, covered);
        EXPECT_GT(size, 0u);
        covered += size;
      }
      EXPECT_EQ(covered, total);
    }
  }
}

Bytes segment_bytes(const SegmentHeader& h, std::size_t data_size) {
  Bytes out;
  encode_segment_header(h, out);
  out.resize(out.size() + data_size, 0xab);
  return out;
}

TEST(SrmcpWire, SegmentChecks_S8_2) {
  Limits limits;
  const Bytes ok = segment_bytes({9, 5, 1, 3, 100, 33}, 33);
  const auto s = parse_segment(ok, limits);
  EXPECT_EQ(s.header.tid, 9u);
  EXPECT_EQ(s.data.size(), 33u);
  // count 0, count over the limit, index past count, total over max_message, wrong offset,
  // wrong size, fewer bytes than segments, truncated header.
  const std::vector<Bytes> bad = {
      segment_bytes({9, 5, 0, 0, 100, 0}, 100),        segment_bytes({9, 5, 0, 17, 170, 0}, 10),
      segment_bytes({9, 5, 3, 3, 100, 99}, 34),        segment_bytes({9, 5, 0, 1, (1u << 20) + 1, 0}, 0),
      segment_bytes({9, 5, 1, 3, 100, 34}, 33),        segment_bytes({9, 5, 1, 3, 100, 33}, 34),
      segment_bytes({9, 5, 0, 4, 3, 0}, 0),            Bytes(10, 0)};
  for (std::size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(action_of([&] { parse_segment(bad[i], limits); }), Action::drop) << "case " << i;
  }
}

TEST(SrmcpWire, MessageHeaderRoundTrip_S9) {
  MessageHeader h{MessageType::read, true, Status::unknown_node, 77, 1ull << 40, 2, 1700000000};
  std::array<std::uint8_t, 24> b{};
  encode_message_header(h, b);
  const auto p = parse_message_header(b);
  EXPECT_EQ(p.type, MessageType::read);
  EXPECT_TRUE(p.response);
  EXPECT_EQ(p.status, Status::unknown_node);
  EXPECT_EQ(p.tid, 77u);
  EXPECT_EQ(p.msg_seq, 1ull << 40);
  EXPECT_EQ(p.timestamp_s, 1700000000u);
  b[1] = 0x02;  // reserved flag
  EXPECT_EQ(action_of([&] { parse_message_header(b); }), Action::drop);
  EXPECT_EQ(action_of([&] { parse_message_header(ByteView(b).first(23)); }), Action::drop);
}

TEST(SrmcpWire, ClientHelloRoundTripAndMalformedInputs_S4) {
  ClientHello h;
  h.kems = {KemId::x_wing, KemId::ml_kem_768};
  h.kem = KemId::x_wing;
  h.ek = Bytes(1216, 0x11);
  h.client_random.fill(0x22);
  const Bytes body = encode(h);
  const auto p = parse_client_hello(body);
  EXPECT_EQ(p.kems, h.kems);
  EXPECT_EQ(p.kem, KemId::x_wing);
  EXPECT_EQ(p.ek, h.ek);
  EXPECT_EQ(p.client_random, h.client_random);

  // Every truncation is refused, as is a trailing byte.
  for (std::size_t n = 0; n < body.size(); n += 97) {
    EXPECT_EQ(action_of([&] { parse_client_hello(ByteView(body).first(n)); }), Action::close) << n;
  }
  Bytes longer = body;
  longer.push_back(0);
  EXPECT_EQ(action_of([&] { parse_client_hello(longer); }), Action::close);
  // An ek length pointing past the end (the published implementation trusted it).
  Bytes lying = body;
  lying[1 + 1 + 1 + 4 + 2] = 0xff;  // high byte of ek_len
  EXPECT_EQ(action_of([&] { parse_client_hello(lying); }), Action::close);
  // A key share for a KEM the client did not offer; an unknown KEM id; zero versions.
  ClientHello other = h;
  other.kem = KemId::ml_kem_1024;
  EXPECT_EQ(action_of([&] { parse_client_hello(encode(other)); }), Action::close);
  Bytes unknown = body;
  unknown[3] = 0x09;  // first KEM id low byte
  EXPECT_EQ(action_of([&] { parse_client_hello(unknown); }), Action::close);
  Bytes no_versions = body;
  no_versions[0] = 0;
  EXPECT_EQ(action_of([&] { parse_client_hello(no_versions); }), Action::close);
}

TEST(SrmcpWire, ServerHelloRoundTripAndBounds_S4) {
  ServerHello h;
  h.kem = KemId::ml_kem_1024;
  h.ct = Bytes(1568, 0x33);
  h.session_id = 42;
  const auto p = parse_server_hello(encode(h));
  EXPECT_EQ(p.kem, KemId::ml_kem_1024);
  EXPECT_EQ(p.ct.size(), 1568u);
  EXPECT_EQ(p.session_id, 42u);
  ServerHello zero = h;
  zero.session_id = 0;
  EXPECT_EQ(action_of([&] { parse_server_hello(encode(zero)); }), Action::close);
  ServerHello huge = h;
  huge.max_frame_body = kMaxFrameBodyCeiling + 1;
  EXPECT_EQ(action_of([&] { parse_server_hello(encode(huge)); }), Action::close);
}

TEST(SrmcpWire, HelloRetryAndLinkBind_S4_S7) {
  EXPECT_EQ(parse_hello_retry(encode_hello_retry(KemId::x_wing)), KemId::x_wing);
  EXPECT_EQ(action_of([] { parse_hello_retry(Bytes{0, 7}); }), Action::close);
  LinkBind b{99, {}};
  b.proof.fill(7);
  const auto p = parse_link_bind(encode(b));
  EXPECT_EQ(p.session_id, 99u);
  EXPECT_EQ(p.proof, b.proof);
  EXPECT_EQ(action_of([&] { parse_link_bind(ByteView(encode(b)).first(39)); }), Action::close);
}

TEST(SrmcpWire, NamesForLogsAndClis_S11) {
  EXPECT_EQ(status_name(Status::unknown_node), "UNKNOWN_NODE");
  EXPECT_EQ(status_name(static_cast<Status>(999)), "STATUS_999");
  EXPECT_EQ(kem_id("X-Wing"), KemId::x_wing);
  EXPECT_FALSE(kem_id("ML-KEM-512"));
}

}  // namespace
}  // namespace pqot::srmcp
