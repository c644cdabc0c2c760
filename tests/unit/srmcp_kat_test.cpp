// SRMCP v2 known-answer vectors (docs/srmcp.md Appendix A, tests/data/srmcp/kat.json), computed
// from the specification by an independent generator (tests/interop/srmcp_vectors.mjs). Every
// value is checked byte for byte, so a renamed label, a swapped nonce prefix or a moved field
// fails here even when both ends of the C++ code agree with each other.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "pqot/common/byte_io.hpp"
#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/hkdf.hpp"
#include "pqot/crypto/mlkem.hpp"
#include "pqot/srmcp/compact.hpp"
#include "pqot/srmcp/reassembly.hpp"
#include "pqot/srmcp/session_crypto.hpp"

namespace pqot::srmcp {
namespace {

using nlohmann::json;

const json& kat() {
  static const json file = [] {
    std::ifstream in(std::string(PQOT_TEST_DATA_DIR) + "/srmcp/kat.json");
    if (!in) throw std::runtime_error("cannot open tests/data/srmcp/kat.json");
    return json::parse(in);
  }();
  return file;
}

Bytes bytes(const json& v) {
  return crypto::from_hex(v.get<std::string>());
}
std::string hex(ByteView b) {
  return crypto::to_hex(b);
}
std::string hex(const Key& k) {
  return crypto::to_hex(k.span());
}
std::string text(ByteView b) {
  return std::string(b.begin(), b.end());
}
template <std::size_t N>
std::string hex(const std::array<std::uint8_t, N>& a) {
  return crypto::to_hex(a);
}

Key key(const json& v) {
  const Bytes b = bytes(v);
  Key k;
  EXPECT_EQ(b.size(), k.size());
  std::copy_n(b.begin(), std::min(b.size(), k.size()), k.data());
  return k;
}

Direction direction(const json& v) {
  return v.get<std::string>() == "c2s" ? Direction::client_to_server : Direction::server_to_client;
}

// The session's keys as the vectors give them (not as the library derives them), so that each
// test below pins one layer.
struct SessionKeySets {
  std::map<std::string, KeySet> sets;  // "c2s/0", "s2c/1", ...
  Key link;

  explicit SessionKeySets(const json& s) : link(key(s["keys"]["link"])) {
    for (const char* dir : {"c2s", "s2c"}) {
      const std::string d(dir);
      sets[d + "/0"] = KeySet{key(s["keys"][d + "_frame"]), key(s["keys"][d + "_msg"])};
      sets[d + "/1"] = KeySet{key(s["next_epoch"][d + "_frame"]), key(s["next_epoch"][d + "_msg"])};
    }
  }
  const KeySet& at(const json& dir, const json& epoch) const {
    return sets.at(dir.get<std::string>() + "/" + std::to_string(epoch.get<int>()));
  }
};

MessageHeader message_header(const json& m) {
  MessageHeader h;
  h.type = static_cast<MessageType>(m["type"].get<int>());
  h.response = m["response"].get<bool>();
  h.status = static_cast<Status>(m["status"].get<int>());
  h.tid = m["tid"].get<std::uint32_t>();
  h.msg_seq = m["msg_seq"].get<std::uint64_t>();
  h.epoch = m["epoch"].get<std::uint32_t>();
  h.timestamp_s = m["timestamp_s"].get<std::uint32_t>();
  return h;
}

void expect_keys(const json& want, const KeySet& c2s, const KeySet& s2c) {
  EXPECT_EQ(hex(c2s.frame), want["c2s_frame"].get<std::string>());
  EXPECT_EQ(hex(c2s.message), want["c2s_msg"].get<std::string>());
  EXPECT_EQ(hex(s2c.frame), want["s2c_frame"].get<std::string>());
  EXPECT_EQ(hex(s2c.message), want["s2c_msg"].get<std::string>());
}

// ---- A.1, A.2
// --------------------------------------------------------------------------------------

TEST(SrmcpKat, KeySchedule_S5) {
  const json& v = kat()["key_schedule"];
  const Bytes exporter = bytes(v["exporter"]), kem = bytes(v["kem_secret"]),
              th = bytes(v["transcript_hash"]);
  EXPECT_EQ(hex(crypto::hkdf_sha256_extract(kem, exporter)), v["prk"].get<std::string>());
  const SessionKeys k = derive_session_keys(exporter, kem, th);
  expect_keys(v["keys"], k.c2s, k.s2c);
  EXPECT_EQ(hex(k.link), v["keys"]["link"].get<std::string>());
}

TEST(SrmcpKat, KeyUpdate_S6) {
  const json& v = kat()["key_schedule"];
  const KeySet c2s{key(v["keys"]["c2s_frame"]), key(v["keys"]["c2s_msg"])};
  const KeySet s2c{key(v["keys"]["s2c_frame"]), key(v["keys"]["s2c_msg"])};
  expect_keys(v["next_epoch"], next_epoch(c2s), next_epoch(s2c));
}

TEST(SrmcpKat, LinkBindProof_S7) {
  const json& v = kat()["link_bind_proof"];
  const auto proof = link_bind_proof(key(v["link_key"]), bytes(v["token"]),
                                     v["link_id"].get<std::uint32_t>(), bytes(v["link_exporter"]));
  EXPECT_EQ(hex(proof), v["proof"].get<std::string>());
}

// ---- A.3
// -------------------------------------------------------------------------------------------

TEST(SrmcpKat, SessionKem_S4) {
  const json& s = kat()["session"];
  const crypto::MlKem kem(crypto::MlKemParameterSet::ml_kem_768);
  const auto kp = kem.generate_keypair(bytes(s["inputs"]["mlkem768_seed"]));
  EXPECT_EQ(hex(kp.public_key), s["ek"].get<std::string>());
  EXPECT_EQ(hex(crypto::sha256(kp.secret_key)), s["dk_sha256"].get<std::string>());
  const auto enc = kem.encapsulate(kp.public_key, bytes(s["inputs"]["encaps_m"]));
  EXPECT_EQ(hex(enc.ciphertext), s["ct"].get<std::string>());
  EXPECT_EQ(hex(enc.shared_secret), s["shared_secret"].get<std::string>());
  EXPECT_EQ(hex(kem.decapsulate(kp.secret_key, bytes(s["ct"]))),
            s["shared_secret"].get<std::string>());
}

TEST(SrmcpKat, SessionHellos_S4) {
  const json& s = kat()["session"];
  const json& in = s["inputs"];
  ClientHello ch;
  ch.versions = s["client_hello"]["versions"].get<std::vector<std::uint8_t>>();
  ch.kems.clear();
  for (const auto& k : s["client_hello"]["kems"])
    ch.kems.push_back(static_cast<KemId>(k.get<int>()));
  ch.kem = static_cast<KemId>(s["client_hello"]["kem"].get<int>());
  ch.ek = bytes(s["ek"]);
  const Bytes client_random = bytes(in["client_random"]);
  std::copy(client_random.begin(), client_random.end(), ch.client_random.begin());
  const Bytes ch_body = encode(ch);
  EXPECT_EQ(hex(ch_body), s["client_hello"]["body"].get<std::string>());
  EXPECT_EQ(hex(plain_frame(FrameType::client_hello, ch_body)),
            s["client_hello"]["frame"].get<std::string>());
  EXPECT_EQ(encode(parse_client_hello(ch_body)), ch_body);

  ServerHello sh;
  sh.kem = KemId::ml_kem_768;
  sh.ct = bytes(s["ct"]);
  const Bytes server_random = bytes(in["server_random"]);
  std::copy(server_random.begin(), server_random.end(), sh.server_random.begin());
  sh.session_id = std::stoull(in["session_id"].get<std::string>(), nullptr, 16);
  sh.max_frame_body = in["max_frame_body"].get<std::uint32_t>();
  sh.max_links = in["max_links"].get<std::uint16_t>();
  sh.key_update_messages = in["key_update_messages"].get<std::uint32_t>();
  sh.key_update_seconds = in["key_update_seconds"].get<std::uint32_t>();
  sh.timestamp_window_ms = in["timestamp_window_ms"].get<std::uint32_t>();
  const Bytes sh_body = encode(sh);
  EXPECT_EQ(hex(sh_body), s["server_hello"]["body"].get<std::string>());
  EXPECT_EQ(hex(plain_frame(FrameType::server_hello, sh_body)),
            s["server_hello"]["frame"].get<std::string>());
  EXPECT_EQ(encode(parse_server_hello(sh_body)), sh_body);
}

TEST(SrmcpKat, SessionKeySchedule_S5_S6) {
  const json& s = kat()["session"];
  const auto th =
      transcript_hash(bytes(s["client_hello"]["body"]), bytes(s["server_hello"]["body"]));
  EXPECT_EQ(hex(th), s["transcript_hash"].get<std::string>());
  const Bytes exporter = bytes(s["inputs"]["exporter"]), ss = bytes(s["shared_secret"]);
  EXPECT_EQ(hex(crypto::hkdf_sha256_extract(ss, exporter)), s["prk"].get<std::string>());
  const SessionKeys k = derive_session_keys(exporter, ss, th);
  expect_keys(s["keys"], k.c2s, k.s2c);
  EXPECT_EQ(hex(k.link), s["keys"]["link"].get<std::string>());
  expect_keys(s["next_epoch"], next_epoch(k.c2s), next_epoch(k.s2c));
}

// Message headers, nonces and sealing (§6, §9). SendState::seal_message takes the clock's
// timestamp, so the fixed-timestamp vectors are sealed with the message key directly.
TEST(SrmcpKat, SessionMessages_S9) {
  const json& s = kat()["session"];
  const SessionKeySets keys(s);
  for (const json& m : s["messages"]) {
    SCOPED_TRACE(m["name"].get<std::string>() + ", msg_seq " +
                 std::to_string(m["msg_seq"].get<int>()));
    const Direction dir = direction(m["direction"]);
    const MessageHeader h = message_header(m);
    std::array<std::uint8_t, kMessageHeaderSize> header{};
    encode_message_header(h, header);
    EXPECT_EQ(hex(header), m["header"].get<std::string>());
    const auto nonce = crypto::make_nonce(message_prefix(dir), h.msg_seq);
    EXPECT_EQ(hex(nonce), m["nonce"].get<std::string>());
    crypto::Aes256Gcm aead(keys.at(m["direction"], m["epoch"]).message.span());
    Bytes sealed(header.begin(), header.end());
    const Bytes ct = aead.seal(nonce, header, crypto::as_bytes(m["body_text"].get<std::string>()));
    sealed.insert(sealed.end(), ct.begin(), ct.end());
    EXPECT_EQ(hex(sealed), m["sealed"].get<std::string>());
  }
}

// Frames as the sender builds them: nonce, segment header and data, LINK_BIND and LINK_READY
// plaintexts, sealed frame (§3, §7, §8.2).
TEST(SrmcpKat, SessionFrames_S3_S7_S8_2) {
  const json& s = kat()["session"];
  const json& in = s["inputs"];
  const SessionKeySets keys(s);
  const std::uint64_t session_id = std::stoull(in["session_id"].get<std::string>(), nullptr, 16);
  for (const json& f : s["frames"]) {
    SCOPED_TRACE(f["name"].get<std::string>());
    const Direction dir = direction(f["direction"]);
    const FrameHeader header{static_cast<FrameType>(f["type"].get<int>()),
                             f["link_id"].get<std::uint32_t>(), f["seq"].get<std::uint64_t>(),
                             f["epoch"].get<std::uint32_t>()};
    EXPECT_EQ(hex(crypto::make_nonce(frame_prefix(dir, header.link_id), header.seq)),
              f["nonce"].get<std::string>());
    Bytes plain;
    if (header.type == FrameType::sealed) {
      const json& seg = f["segment"];
      const Bytes message = bytes(s["messages"][seg["message"].get<std::size_t>()]["sealed"]);
      const auto count = seg["count"].get<std::uint16_t>(),
                 index = seg["index"].get<std::uint16_t>();
      const auto [offset, size] =
          segment_span(static_cast<std::uint32_t>(message.size()), count, index);
      EXPECT_EQ(offset, seg["offset"].get<std::uint32_t>());
      encode_segment_header(
          SegmentHeader{seg["tid"].get<std::uint32_t>(), seg["msg_seq"].get<std::uint64_t>(), index,
                        count, static_cast<std::uint32_t>(message.size()), offset},
          plain);
      plain.insert(plain.end(), message.begin() + offset, message.begin() + offset + size);
    } else if (header.type == FrameType::link_bind) {
      const auto proof =
          link_bind_proof(keys.link, bytes(in["token"]), in["link_id"].get<std::uint32_t>(),
                          bytes(in["link_exporter"]));
      EXPECT_EQ(hex(proof), s["link_bind"]["proof"].get<std::string>());
      plain = encode(LinkBind{session_id, proof});
    } else {
      common::ByteWriter(plain).u64(session_id);  // LINK_READY
    }
    EXPECT_EQ(hex(plain), f["plaintext"].get<std::string>());

    const bool bind = f["key"] == "link";
    crypto::Aes256Gcm aead(bind ? keys.link.span()
                                : keys.at(f["direction"], f["epoch"]).frame.span());
    EXPECT_EQ(hex(seal_frame(aead, dir, header, plain)), f["frame"].get<std::string>());
    if (!bind && header.epoch == 0) {
      // The sending half seals the same bytes at its first epoch.
      SendState sender(keys.at(f["direction"], f["epoch"]), dir, 1000, std::chrono::hours(1));
      EXPECT_EQ(hex(sender.seal_frame(header.type, header.link_id, header.seq, plain)),
                f["frame"].get<std::string>());
    }
  }
}

// The sending half over the whole session (§6, §9): SendState numbers the messages, moves to
// epoch 1 at the 4th message of its direction (key_update_messages = 3) and seals the frames of
// that direction with the right epoch's key. Its messages carry the clock's timestamp, so they are
// compared up to the timestamp and then opened with the vector's key.
TEST(SrmcpKat, SessionSendState_S6_S9) {
  const json& s = kat()["session"];
  const SessionKeySets keys(s);
  const auto update_after = s["inputs"]["key_update_messages"].get<std::uint32_t>();
  std::map<std::string, SendState> senders;
  for (const char* d : {"c2s", "s2c"}) {
    senders.try_emplace(d, keys.sets.at(std::string(d) + "/0"), direction(json(d)), update_after,
                        std::chrono::hours(1));
  }
  for (const json& f : s["frames"]) {
    SCOPED_TRACE(f["name"].get<std::string>());
    if (f["key"] == "link") continue;  // LINK_BIND: the link key, not a SendState (§7)
    SendState& sender = senders.at(f["direction"].get<std::string>());
    if (f.contains("segment") && f["segment"]["index"] == 0) {
      const json& m = s["messages"][f["segment"]["message"].get<std::size_t>()];
      const MessageHeader want = message_header(m);
      MessageHeader h{want.type, want.response, want.status, want.tid};
      const Bytes sealed =
          sender.seal_message(h, crypto::as_bytes(m["body_text"].get<std::string>()));
      EXPECT_EQ(h.msg_seq, want.msg_seq);
      EXPECT_EQ(h.epoch, want.epoch);
      EXPECT_EQ(hex(ByteView(sealed).first(20)), m["header"].get<std::string>().substr(0, 40));
      crypto::Aes256Gcm aead(keys.at(m["direction"], m["epoch"]).message.span());
      const Bytes body = aead.open(
          crypto::make_nonce(message_prefix(sender.direction()), want.msg_seq),
          ByteView(sealed).first(kMessageHeaderSize), ByteView(sealed).subspan(kMessageHeaderSize));
      EXPECT_EQ(text(body), m["body_text"].get<std::string>());
    }
    EXPECT_EQ(sender.epoch(), f["epoch"].get<std::uint32_t>());
    const Bytes frame = sender.seal_frame(static_cast<FrameType>(f["type"].get<int>()),
                                          f["link_id"].get<std::uint32_t>(),
                                          f["seq"].get<std::uint64_t>(), bytes(f["plaintext"]));
    EXPECT_EQ(hex(frame), f["frame"].get<std::string>());
  }
}

// The receiving path over the whole session, in wire order: frame parsing and opening, the key
// update on first sight of epoch 1, segment checks, reassembly across links and message opening
// (§3, §6, §7, §8.2, §9).
TEST(SrmcpKat, SessionReceive_S3_S6_S8_2_S9) {
  const json& s = kat()["session"];
  const json& in = s["inputs"];
  const SessionKeySets keys(s);
  const Limits limits;
  const std::map<std::string, Direction> dirs{{"c2s", Direction::client_to_server},
                                              {"s2c", Direction::server_to_client}};
  std::map<std::string, ReceiveState> receivers;
  std::map<std::string, Reassembler> reassemblers;
  for (const auto& [name, dir] : dirs) {
    receivers.try_emplace(name, keys.sets.at(name + "/0"), dir);
    reassemblers.try_emplace(name, limits);
  }
  std::size_t opened = 0;
  for (const json& f : s["frames"]) {
    SCOPED_TRACE(f["name"].get<std::string>());
    const std::string d = f["direction"].get<std::string>();
    const Bytes frame = bytes(f["frame"]);
    const auto pre = parse_pre_header(
        std::span<const std::uint8_t, kPreHeaderSize>(frame.data(), kPreHeaderSize), limits);
    ASSERT_EQ(frame.size(), kPreHeaderSize + kFrameHeaderSize + pre.body_len);
    const FrameHeader h = parse_frame_header(std::span<const std::uint8_t, kFrameHeaderSize>(
        frame.data() + kPreHeaderSize, kFrameHeaderSize));
    EXPECT_EQ(h.link_id, f["link_id"].get<std::uint32_t>());
    EXPECT_EQ(h.seq, f["seq"].get<std::uint64_t>());
    EXPECT_EQ(h.epoch, f["epoch"].get<std::uint32_t>());
    const ByteView aad(frame.data(), kPreHeaderSize + kFrameHeaderSize);
    const ByteView body(frame.data() + aad.size(), pre.body_len);
    if (h.type == FrameType::link_bind) {
      crypto::Aes256Gcm bind_key(keys.link.span());
      const LinkBind b =
          parse_link_bind(open_frame(bind_key, Direction::client_to_server, h, aad, body));
      EXPECT_EQ(b.session_id, std::stoull(in["session_id"].get<std::string>(), nullptr, 16));
      EXPECT_EQ(hex(b.proof), s["link_bind"]["proof"].get<std::string>());
      continue;
    }
    const Bytes plain = receivers.at(d).open_frame(h, aad, body);
    EXPECT_EQ(hex(plain), f["plaintext"].get<std::string>());
    if (h.type != FrameType::sealed) continue;
    const Segment seg = parse_segment(plain, limits);
    auto whole = reassemblers.at(d).add(seg);
    if (!whole) continue;
    const json& m = s["messages"][f["segment"]["message"].get<std::size_t>()];
    EXPECT_EQ(hex(*whole), m["sealed"].get<std::string>());
    const auto [header, message_body] = receivers.at(d).open_message(*whole);
    const MessageHeader want = message_header(m);
    EXPECT_EQ(header.type, want.type);
    EXPECT_EQ(header.response, want.response);
    EXPECT_EQ(header.status, want.status);
    EXPECT_EQ(header.tid, want.tid);
    EXPECT_EQ(header.msg_seq, want.msg_seq);
    EXPECT_EQ(header.epoch, want.epoch);
    EXPECT_EQ(header.timestamp_s, want.timestamp_s);
    EXPECT_EQ(text(message_body), m["body_text"].get<std::string>());
    ++opened;
  }
  EXPECT_EQ(opened, s["messages"].size());
}

// ---- A.4: compact bodies and HELLO_REFUSED
// ---------------------------------------------------------------------

std::optional<ValueType> type_of_octet(const json& octet) {
  if (octet.get<int>() == compact::type_octet(std::nullopt)) return std::nullopt;
  for (const ValueType t : {ValueType::folder, ValueType::boolean, ValueType::int64,
                            ValueType::float64, ValueType::string, ValueType::json}) {
    if (compact::type_octet(t) == octet.get<int>()) return t;
  }
  ADD_FAILURE() << "no type has the octet " << octet;
  return std::nullopt;
}
std::string hex(const std::string& s) {
  return crypto::to_hex(crypto::as_bytes(s));
}
std::vector<std::string> ids(const json& v) {
  return v.get<std::vector<std::string>>();
}

TEST(SrmcpKat, CompactBodies_A4) {
  const json& c = kat()["compact"];
  std::string out;
  compact::encode_read_request(ids(c["read_request"]["ids"]), out);
  EXPECT_EQ(hex(out), c["read_request"]["body"].get<std::string>());

  for (const json& w : c["write_requests"]) {
    SCOPED_TRACE(w.dump());
    const Value v = from_json(w["value"]);
    EXPECT_EQ(compact::type_octet(type_of_octet(w["type"])), w["type"].get<int>());
    const std::vector<std::pair<std::string, Value>> one{{w["id"].get<std::string>(), v}};
    out.clear();
    compact::encode_write_request(one, out);
    EXPECT_EQ(hex(out), w["body"].get<std::string>());
    const Bytes body = bytes(w["body"]);
    const WriteRequest back = compact::decode_write_request(body, Limits{}, 1);
    ASSERT_EQ(back.values.size(), 1u);
    EXPECT_EQ(back.values[0].second, w["value"]);
  }

  const json& rr = c["read_response"];
  out.clear();
  compact::begin_entries(out, rr["entries"].size());
  for (const json& e : rr["entries"]) {
    compact::append_read_entry(out, type_of_octet(e["type"]),
                               static_cast<Status>(e["status"].get<int>()),
                               e["ts_ms"].get<std::int64_t>(), e.value("value", json()));
  }
  EXPECT_EQ(hex(out), rr["body"].get<std::string>());
  const auto readings = compact::decode_read_response(bytes(rr["body"]), ids(rr["ids"]), Limits{});
  ASSERT_EQ(readings.size(), rr["entries"].size());
  EXPECT_EQ(to_json(readings[0].value), rr["entries"][0]["value"]);

  const json& wr = c["write_response"];
  out.clear();
  compact::begin_entries(out, wr["entries"].size());
  for (const json& e : wr["entries"]) {
    compact::append_write_entry(out, static_cast<Status>(e["status"].get<int>()),
                                e.contains("type") ? type_of_octet(e["type"]) : std::nullopt,
                                e.value("stored", json()));
  }
  EXPECT_EQ(hex(out), wr["body"].get<std::string>());
  EXPECT_EQ(compact::decode_write_response(bytes(wr["body"]), ids(wr["ids"]), Limits{}).size(),
            wr["entries"].size());

  const json& n = c["notification"];
  out.clear();
  compact::begin_notification(out, n["subscription"].get<std::uint64_t>(), n["entries"].size());
  for (const json& e : n["entries"]) {
    compact::append_notification_entry(out, e["id"].get<std::string>(),
                                       static_cast<Status>(e["status"].get<int>()),
                                       e["ts_ms"].get<std::int64_t>(), e.value("value", json()));
  }
  EXPECT_EQ(hex(out), n["body"].get<std::string>());
  const Notification decoded = compact::decode_notification(bytes(n["body"]), Limits{});
  EXPECT_EQ(decoded.subscription, n["subscription"].get<std::uint64_t>());
  ASSERT_EQ(decoded.values.size(), n["entries"].size());
  EXPECT_EQ(decoded.values[1].id, n["entries"][1]["id"].get<std::string>());

  const json& r = c["hello_refused"];
  HelloRefused refused;
  refused.reason = static_cast<HelloRefused::Reason>(r["reason"].get<int>());
  refused.versions = r["versions"].get<std::vector<std::uint8_t>>();
  for (const json& k : r["kems"]) refused.kems.push_back(static_cast<KemId>(k.get<int>()));
  EXPECT_EQ(hex(encode(refused)), r["body"].get<std::string>());
}

TEST(SrmcpKat, CompactMalformedRequests_A4) {
  for (const json& m : kat()["compact"]["malformed"]) {
    SCOPED_TRACE(m.dump());
    const Bytes body = bytes(m["body"]);
    Status got = Status::ok;
    try {
      if (m["request"] == "read") {
        compact::decode_read_request(body, Limits{}, 1);
      } else {
        compact::decode_write_request(body, Limits{}, 1);
      }
    } catch (const ProtocolError& e) {
      EXPECT_EQ(e.action(), Action::reply);
      got = e.status();
    }
    EXPECT_EQ(static_cast<int>(got), m["status"].get<int>());
  }
}

}  // namespace
}  // namespace pqot::srmcp
