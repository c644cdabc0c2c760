// SRUP-PQ telemetry groups (docs/srup-pq.md section 5): one device, several readers, a telemetry
// key per key epoch sealed to each reader, rotation when a reader is removed, and checkpoints that
// confirm honest telemetry and expose a reading forged by a reader who holds the key.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/envelope.hpp"
#include "pqot/srup/reading_json.hpp"
#include "pqot/srup/reading_text.hpp"
#include "pqot/srup/telemetry.hpp"
#include "pqot/srup/telemetry_key_store.hpp"
#include "pqot/srup/topics.hpp"
#include "../support/temp_dir.hpp"

namespace pqot::srup {
namespace {

constexpr std::uint64_t kNow = 1'790'000'000'000;
constexpr std::uint64_t kDevice = 0xa1;
const std::string kTelemetryTopic = "srup/t/00000000000000a1";
const std::string kKeyTopic = "srup/k/00000000000000a1";

struct Peer {
  Identity identity;
  PeerKeys keys;
};

Peer make_peer(std::uint64_t id, Suite suite, std::uint8_t seed) {
  const SuiteInfo info = suite_info(suite);
  const auto& sig = crypto::signature_by_name(info.signature);
  const auto& kem = crypto::kem_by_name(info.kem);
  const auto sk = sig.keygen(Bytes(sig.seed_size(), seed));
  const auto kk = kem.generate_keypair(Bytes(kem.keygen_seed_size(), seed));
  return {{id, suite, sk.secret_key, kk.secret_key, kk.public_key}, {suite, sk.public_key, kk.public_key}};
}

Refusal refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Refused& r) {
    return r.reason();
  }
  ADD_FAILURE() << "accepted";
  return Refusal::malformed;
}

Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }
Bytes body_of(const TelemetryReading& r) { return Bytes(r.opened.body.begin(), r.opened.body.end()); }
std::vector<std::uint64_t> seqs(std::uint64_t first, std::uint64_t n) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t i = 0; i < n; ++i) v.push_back(first + i);
  return v;
}

// A reader: its identity and its TelemetryReader, fed with whatever the device publishes.
struct ReaderPeer {
  ReaderPeer(std::uint64_t id, std::uint8_t seed, const PeerKeys* device_keys)
      : peer(make_peer(id, Suite::ed25519_xwing, seed)),
        lookup([device_keys](std::uint64_t s) { return s == kDevice ? device_keys : nullptr; }),
        reader(id, lookup) {}
  Peer peer;
  PeerLookup lookup;
  TelemetryReader reader;
  std::vector<TelemetryReading> readings;
  std::vector<CheckpointReport> reports;
  std::vector<Bytes> tk_plain;  // what the Telemetry Key messages held (a dishonest reader's view)

  // Delivers one published envelope as the reader's receive path would.
  void deliver(const Outgoing& o, std::uint64_t now) {
    switch (o.type) {
      case MessageType::telemetry_key: {
        if (o.recipient != peer.identity.id) return;  // published to another reader's topic
        const Opened opened = open_protected(o.wire, kKeyTopic, now, peer.identity, lookup);
        tk_plain.emplace_back(opened.body.begin(), opened.body.end());
        reader.add_key(opened, now);
        break;
      }
      case MessageType::telemetry:
        readings.push_back(reader.open(o.wire, kTelemetryTopic, now));
        break;
      default:
        reports.push_back(reader.checkpoint(o.wire, kTelemetryTopic, now));
    }
  }
  Bytes key_of_epoch(std::uint32_t epoch) const {
    for (const Bytes& b : tk_plain) {
      const auto tk = std::get<TelemetryKey>(decode_body(MessageType::telemetry_key, Suite::ed25519_xwing, b));
      if (tk.epoch == epoch) return Bytes(tk.key.begin(), tk.key.end());
    }
    return {};
  }
};

class SrupTelemetry : public ::testing::Test {
 protected:
  SrupTelemetry() { make_sender({}); }

  void make_sender(TelemetryPolicy policy) {
    sender = std::make_unique<TelemetrySender>(
        device.identity, 7,
        [this](MessageType, std::uint64_t recipient) {
          Header h;
          if (recipient == 0) {
            counters[0] += skip;
            skip = 0;
          }
          h.sequence = ++counters[recipient];
          h.timestamp_ms = now;
          h.lifetime_ms = 600'000;
          h.topic = topic_tag(recipient == 0         ? kTelemetryTopic
                              : binding_key_topics ? topic_telemetry_key(kDevice, recipient)
                                                   : kKeyTopic);
          return h;
        },
        policy);
  }
  ReaderSet set_of(std::initializer_list<const ReaderPeer*> rs) const {
    ReaderSet set;
    for (const ReaderPeer* r : rs) set.readers.push_back({r->peer.identity.id, r->peer.keys.suite, r->peer.keys.kem_public});
    return set;
  }
  void publish(const std::vector<Outgoing>& out, std::initializer_list<ReaderPeer*> to) {
    for (const Outgoing& o : out) {
      for (ReaderPeer* r : to) r->deliver(o, now);
    }
  }
  static std::size_t count_of(const std::vector<Outgoing>& out, MessageType t) {
    return static_cast<std::size_t>(
        std::count_if(out.begin(), out.end(), [t](const Outgoing& o) { return o.type == t; }));
  }

  std::uint64_t now = kNow;
  std::map<std::uint64_t, std::uint64_t> counters;  // the device's counter per recipient
  std::uint64_t skip = 0;                           // set to make the next recipient-0 number jump
  bool binding_key_topics = false;  // Telemetry Keys on srup/<dev>/tk/<reader> (the key store's)
  Peer device = make_peer(kDevice, Suite::ed25519_xwing, 1);
  ReaderPeer c2{0xc2, 2, &device.keys};
  ReaderPeer m1{0xd1, 3, &device.keys};
  ReaderPeer m2{0xd2, 4, &device.keys};
  std::unique_ptr<TelemetrySender> sender;
};

TEST_F(SrupTelemetry, ThreeReadersReadOneEnvelope_5_1) {
  const auto keys = sender->set_readers(set_of({&c2, &m1, &m2}), now);
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(count_of(keys, MessageType::telemetry_key), 3u);
  publish(keys, {&c2, &m1, &m2});
  EXPECT_EQ(sender->epoch(), 7u);
  const auto out = sender->seal(text("230.1 V"), now);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].recipient, 0u);
  const EnvelopeView v = parse_envelope(out[0].wire);
  EXPECT_EQ(v.header.mode, Mode::telemetry_group);
  EXPECT_EQ(v.epoch, 7u);
  publish(out, {&c2, &m1, &m2});
  for (ReaderPeer* r : {&c2, &m1, &m2}) {
    ASSERT_EQ(r->readings.size(), 1u);
    EXPECT_EQ(body_of(r->readings[0]), text("230.1 V"));
    EXPECT_TRUE(r->readings[0].awaiting_checkpoint);
  }
  // Someone who is no reader holds no key, and cannot open another reader's key message.
  ReaderPeer outsider{0xe1, 5, &device.keys};
  EXPECT_EQ(refusal([&] { outsider.reader.open(out[0].wire, kTelemetryTopic, now); }),
            Refusal::decrypt_failed);
  EXPECT_EQ(refusal([&] {
              open_protected(keys[0].wire, kKeyTopic, now, outsider.peer.identity, outsider.lookup);
            }),
            Refusal::wrong_recipient);
  // Tampered telemetry is refused by every reader.
  Bytes bad = out[0].wire;
  bad[30] ^= 1;  // the sequence
  EXPECT_EQ(refusal([&] { c2.reader.open(bad, kTelemetryTopic, now); }), Refusal::decrypt_failed);
  EXPECT_EQ(refusal([&] { c2.reader.open(out[0].wire, kKeyTopic, now); }), Refusal::wrong_topic);
}

TEST_F(SrupTelemetry, RemovedReaderReadsNothingAfterTheRotation_5_1) {
  publish(sender->set_readers(set_of({&c2, &m1, &m2}), now), {&c2, &m1, &m2});
  publish(sender->seal(text("before"), now), {&c2, &m1, &m2});
  const auto rotation = sender->set_readers(set_of({&c2, &m1}), now);
  // The old epoch's Checkpoint first, then the new key to the two remaining readers only.
  ASSERT_EQ(rotation.size(), 3u);
  EXPECT_EQ(rotation[0].type, MessageType::checkpoint);
  EXPECT_EQ(rotation[1].recipient, 0xc2u);
  EXPECT_EQ(rotation[2].recipient, 0xd1u);
  EXPECT_EQ(sender->epoch(), 8u);
  publish(rotation, {&c2, &m1, &m2});
  const auto after = sender->seal(text("after"), now);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(body_of(c2.reader.open(after[0].wire, kTelemetryTopic, now)), text("after"));
  EXPECT_EQ(body_of(m1.reader.open(after[0].wire, kTelemetryTopic, now)), text("after"));
  EXPECT_EQ(refusal([&] { m2.reader.open(after[0].wire, kTelemetryTopic, now); }),
            Refusal::decrypt_failed);
  // Even relabelled as the old epoch, TK_7 does not open what was sealed under TK_8.
  Bytes relabelled = after[0].wire;
  const std::size_t epoch_at = parse_envelope(relabelled).header_bytes.size();
  relabelled[epoch_at + 3] = 7;
  EXPECT_EQ(refusal([&] { m2.reader.open(relabelled, kTelemetryTopic, now); }),
            Refusal::decrypt_failed);
  // An unchanged set changes nothing.
  EXPECT_TRUE(sender->set_readers(set_of({&m1, &c2}), now).empty());
}

TEST_F(SrupTelemetry, CheckpointConfirmsHonestTelemetry_5_2) {
  make_sender({4, 60});
  publish(sender->set_readers(set_of({&c2, &m1, &m2}), now), {&c2, &m1, &m2});
  std::vector<Outgoing> all;
  for (const char* reading : {"r0", "r1", "r2", "r3"}) {
    auto out = sender->seal(text(reading), now);
    all.insert(all.end(), out.begin(), out.end());
  }
  ASSERT_EQ(all.size(), 5u);  // four readings, then the Checkpoint over them
  EXPECT_EQ(all[4].type, MessageType::checkpoint);
  EXPECT_EQ(parse_envelope(all[4].wire).header.recipient, 0u);
  publish(all, {&c2, &m1, &m2});
  for (ReaderPeer* r : {&c2, &m1, &m2}) {
    ASSERT_EQ(r->reports.size(), 1u);
    EXPECT_EQ(r->reports[0].verdict, CheckpointReport::Verdict::confirmed);
    EXPECT_EQ(r->reports[0].received, seqs(1, 4));
    EXPECT_EQ(r->reports[0].epoch, 7u);
  }
  EXPECT_EQ(sender->pending(), 0u);
  // A later copy of a confirmed reading can no longer be confirmed.
  EXPECT_FALSE(c2.reader.open(all[0].wire, kTelemetryTopic, now).awaiting_checkpoint);
}

TEST_F(SrupTelemetry, CheckpointFlagsAReadingForgedByADishonestReader_5_2) {
  make_sender({4, 60});
  publish(sender->set_readers(set_of({&c2, &m1, &m2}), now), {&c2, &m1, &m2});
  std::vector<Outgoing> all;
  for (int i = 0; i < 4; ++i) {
    auto out = sender->seal(text("honest"), now);
    all.insert(all.end(), out.begin(), out.end());
  }
  // m2 holds TK_7 and forges reading #2 (sequence 2) before the genuine one reaches m1.
  const Bytes tk = m2.key_of_epoch(7);
  ASSERT_EQ(tk.size(), 32u);
  const Header genuine = parse_envelope(all[1].wire).header;
  const Bytes forged = seal_telemetry(genuine, 7, tk, text("forged"));
  EXPECT_EQ(body_of(m1.reader.open(forged, kTelemetryTopic, now)), text("forged"));  // provisional
  m1.deliver(all[0], now);
  EXPECT_EQ(refusal([&] { m1.deliver(all[1], now); }), Refusal::replay);  // same sequence, other bytes
  m1.deliver(all[2], now);
  m1.deliver(all[3], now);
  m1.deliver(all[4], now);  // the Checkpoint
  ASSERT_EQ(m1.reports.size(), 1u);
  EXPECT_EQ(m1.reports[0].verdict, CheckpointReport::Verdict::mismatch);  // the alarm
  EXPECT_EQ(m1.reports[0].received, seqs(1, 4));
  // The C2, which got the genuine envelopes, confirms them.
  publish(all, {&c2});
  ASSERT_EQ(c2.reports.size(), 1u);
  EXPECT_EQ(c2.reports[0].verdict, CheckpointReport::Verdict::confirmed);
  // The forger cannot sign a Checkpoint in the device's name.
  Bytes cp = all[4].wire;
  cp[cp.size() - 70] ^= 1;  // inside the body's digest
  EXPECT_EQ(refusal([&] { c2.reader.checkpoint(cp, kTelemetryTopic, now); }),
            Refusal::bad_signature);
}

// A key holder fills another reader's pending set with forged far-ahead sequences: the device's
// own readings push them out again, so its Checkpoint still confirms (the forged ones are reported
// unconfirmed, never confirmed).
TEST_F(SrupTelemetry, ForgedFarAheadSequencesCannotStarveTheCheckpoint_5_2) {
  make_sender({4, 60});
  publish(sender->set_readers(set_of({&c2, &m1}), now), {&c2, &m1});
  std::vector<Outgoing> all;
  for (int i = 0; i < 4; ++i) {
    auto out = sender->seal(text("honest"), now);
    all.insert(all.end(), out.begin(), out.end());
  }
  ASSERT_EQ(all.size(), 5u);
  const Bytes tk = m1.key_of_epoch(7);
  Header h = parse_envelope(all[0].wire).header;
  for (std::uint64_t s = 1'000'000; s < 1'000'008; ++s) {  // 2 intervals of 4, and more
    h.sequence = s;
    (void)c2.reader.open(seal_telemetry(h, 7, tk, text("forged")), kTelemetryTopic, now);
  }
  (void)c2.reader.take_unconfirmed();
  publish(all, {&c2});
  ASSERT_EQ(c2.reports.size(), 1u);
  EXPECT_EQ(c2.reports[0].verdict, CheckpointReport::Verdict::confirmed);
  EXPECT_EQ(c2.reports[0].received, seqs(1, 4));
  // The four forged numbers the readings pushed out are reported, as never confirmable.
  const auto dropped = c2.reader.take_unconfirmed();
  ASSERT_EQ(dropped.size(), 4u);
  for (const EnvelopeRef& r : dropped) EXPECT_GE(r.sequence, 1'000'000u);
}

TEST_F(SrupTelemetry, IncompleteUntilTheMissingEnvelopeArrives_5_2) {
  make_sender({3, 60});
  publish(sender->set_readers(set_of({&c2}), now), {&c2});
  std::vector<Outgoing> all;
  for (int i = 0; i < 3; ++i) {
    auto out = sender->seal(text("x"), now);
    all.insert(all.end(), out.begin(), out.end());
  }
  ASSERT_EQ(all.size(), 4u);
  c2.deliver(all[0], now);
  c2.deliver(all[2], now);
  c2.deliver(all[3], now);
  ASSERT_EQ(c2.reports.size(), 1u);
  EXPECT_EQ(c2.reports[0].verdict, CheckpointReport::Verdict::incomplete);
  EXPECT_EQ(c2.reports[0].missing, (std::vector<std::uint64_t>{2}));
  c2.deliver(all[1], now);  // late, reordered
  c2.deliver(all[3], now);  // the same Checkpoint again
  EXPECT_EQ(c2.reports[1].verdict, CheckpointReport::Verdict::confirmed);
}

TEST_F(SrupTelemetry, CheckpointByTimeAndAfterASequenceGap_5_2) {
  make_sender({64, 60});
  publish(sender->set_readers(set_of({&c2}), now), {&c2});
  publish(sender->seal(text("a"), now), {&c2});
  publish(sender->seal(text("b"), now), {&c2});
  EXPECT_TRUE(sender->tick(now + 59'999).empty());
  now += 60'000;
  const auto due = sender->tick(now);
  ASSERT_EQ(due.size(), 1u);
  publish(due, {&c2});
  EXPECT_EQ(c2.reports.back().verdict, CheckpointReport::Verdict::confirmed);
  EXPECT_EQ(c2.reports.back().received, seqs(1, 2));
  // A jump in the caller's counter closes the range: a Checkpoint covers consecutive numbers only.
  publish(sender->seal(text("c"), now), {&c2});  // sequence 4 (3 was the Checkpoint)
  skip = 10;
  const auto gap = sender->seal(text("d"), now);  // sequence 15
  ASSERT_EQ(gap.size(), 2u);
  EXPECT_EQ(gap[0].type, MessageType::checkpoint);  // over sequence 4 alone
  EXPECT_EQ(gap[1].type, MessageType::telemetry);
  publish(gap, {&c2});
  EXPECT_EQ(c2.reports.back().received, (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(c2.reports.back().verdict, CheckpointReport::Verdict::confirmed);
  EXPECT_EQ(sender->pending(), 1u);
}

TEST_F(SrupTelemetry, RotatesByCountAndByAge_5_1) {
  make_sender({64, 60, 3, kTelemetryKeyMs});
  publish(sender->set_readers(set_of({&c2, &m1}), now), {&c2, &m1});
  for (int i = 0; i < 3; ++i) publish(sender->seal(text("x"), now), {&c2, &m1});
  const auto fourth = sender->seal(text("y"), now);
  // Checkpoint of epoch 7, two Telemetry Keys for epoch 8, then the reading under epoch 8.
  ASSERT_EQ(fourth.size(), 4u);
  EXPECT_EQ(fourth[0].type, MessageType::checkpoint);
  EXPECT_EQ(count_of(fourth, MessageType::telemetry_key), 2u);
  EXPECT_EQ(parse_envelope(fourth[3].wire).epoch, 8u);
  publish(fourth, {&c2, &m1});
  EXPECT_EQ(c2.reports.back().verdict, CheckpointReport::Verdict::confirmed);
  EXPECT_EQ(body_of(c2.readings.back()), text("y"));
  EXPECT_EQ(c2.reader.epochs(kDevice), (std::vector<std::uint32_t>{8, 7}));
  now += kTelemetryKeyMs;
  const auto aged = sender->tick(now);
  EXPECT_EQ(count_of(aged, MessageType::telemetry_key), 2u);
  EXPECT_EQ(sender->epoch(), 9u);
}

TEST_F(SrupTelemetry, ReaderBounds_5_2) {
  make_sender({2, 60});
  publish(sender->set_readers(set_of({&c2, &m2}), now), {&c2, &m2});
  const auto first = sender->seal(text("old epoch"), now);
  publish(sender->set_readers(set_of({&c2}), now), {&c2});  // epoch 8; 7 kept as previous
  // The previous epoch opens for 60 s after the newer key arrived, then its key is gone.
  EXPECT_NO_THROW(c2.reader.open(first[0].wire, kTelemetryTopic, now + 60'000));
  EXPECT_EQ(refusal([&] { c2.reader.open(first[0].wire, kTelemetryTopic, now + 60'001); }),
            Refusal::decrypt_failed);
  EXPECT_EQ(c2.reader.epochs(kDevice), (std::vector<std::uint32_t>{8}));
  // An older key epoch is refused.
  Opened stale;
  stale.header.type = MessageType::telemetry_key;
  stale.header.sender = kDevice;
  stale.header.suite = Suite::ed25519_xwing;
  const Bytes old_body = c2.tk_plain.front();
  stale.body.assign(old_body.begin(), old_body.end());
  EXPECT_EQ(refusal([&] { c2.reader.add_key(stale, now); }), Refusal::bad_request);
  // A key holder flooding forged sequences cannot grow the pending set past 2 intervals.
  const Bytes tk = c2.key_of_epoch(8);
  Header h = parse_envelope(first[0].wire).header;
  for (std::uint64_t s = 100; s < 110; ++s) {
    h.sequence = s;
    (void)c2.reader.open(seal_telemetry(h, 8, tk, text("flood")), kTelemetryTopic, now);
  }
  const auto dropped = c2.reader.take_unconfirmed();
  // First the old-epoch reading, never covered (its Checkpoint came before it) and retired with
  // its epoch; then 6 of the 10 forged ones: 4 (2 intervals of 2) are kept.
  ASSERT_EQ(dropped.size(), 7u);
  EXPECT_EQ(dropped[0], (EnvelopeRef{kDevice, 7, 1}));
  EXPECT_EQ(dropped[1], (EnvelopeRef{kDevice, 8, 100}));
  EXPECT_EQ(dropped[6], (EnvelopeRef{kDevice, 8, 105}));
  EXPECT_TRUE(c2.reader.take_unconfirmed().empty());
}


TEST_F(SrupTelemetry, RecipientZeroOnlyForTelemetryAndCheckpoints_2_1) {
  Header h;
  h.sender = kDevice;
  h.lifetime_ms = 60'000;
  h.type = MessageType::checkpoint;
  h.mode = Mode::signed_clear;
  h.recipient = 0;
  EXPECT_NO_THROW(encode_header(h, 46));
  h.recipient = 0xc2;  // a Checkpoint goes to every reader, never to one
  EXPECT_THROW(encode_header(h, 46), std::invalid_argument);
  h.type = MessageType::data;
  h.mode = Mode::sealed;
  h.recipient = 0;
  EXPECT_THROW(encode_header(h, 46), std::invalid_argument);
  // And on the wire: a sealed envelope relabelled to recipient 0 is malformed.
  publish(sender->set_readers(set_of({&c2}), now), {});
  Bytes wire = sender->set_readers(set_of({&c2, &m1}), now).back().wire;  // a Telemetry Key
  for (std::size_t i = 16; i < 24; ++i) wire[i] = 0;
  EXPECT_EQ(refusal([&] { parse_envelope(wire); }), Refusal::malformed);
}

// docs/srup-mqtt.md 4.6: the current key again, as new envelopes, taken by a reader that holds it
// as the same key (5.1 "the same key again changes nothing"), and giving a reader that lost it the
// readings back without a rotation.
TEST_F(SrupTelemetry, ResentKeysAreNewEnvelopesOfTheSameEpoch_4_6) {
  EXPECT_TRUE(sender->resend_keys().empty());  // no Reader Set yet, no key
  const auto first = sender->set_readers(set_of({&c2, &m1}), now);
  publish(first, {&c2, &m1});
  publish(sender->seal(text("one"), now), {&c2, &m1});
  const auto again = sender->resend_keys();
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(sender->epoch(), 7u);
  EXPECT_EQ(sender->pending(), 1u);  // the open range is untouched
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(again[i].type, MessageType::telemetry_key);
    EXPECT_EQ(again[i].recipient, first[i].recipient);
    EXPECT_NE(again[i].wire, first[i].wire);
    // A new sequence from the reader's counter: its replay window lets the copy through.
    EXPECT_GT(parse_envelope(again[i].wire).header.sequence, parse_envelope(first[i].wire).header.sequence);
  }
  publish(again, {&c2, &m1});  // the same key again: accepted, nothing changes
  EXPECT_EQ(c2.reader.epochs(kDevice), (std::vector<std::uint32_t>{7}));
  ASSERT_EQ(c2.tk_plain.size(), 2u);
  EXPECT_EQ(c2.tk_plain[0], c2.tk_plain[1]);  // the same body: epoch, TK, checkpoint interval
  // A reader that restarted without its key reads again from the resent one.
  ReaderPeer restarted{0xd1, 3, &device.keys};
  const auto reading = sender->seal(text("two"), now);
  EXPECT_EQ(refusal([&] { restarted.reader.open(reading[0].wire, kTelemetryTopic, now); }),
            Refusal::decrypt_failed);
  publish(sender->resend_keys(), {&restarted});
  EXPECT_EQ(body_of(restarted.reader.open(reading[0].wire, kTelemetryTopic, now)), text("two"));
  // The reader that was removed gets no resent key.
  publish(sender->set_readers(set_of({&c2}), now), {&c2, &m1});
  const auto after = sender->resend_keys();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].recipient, 0xc2u);
  EXPECT_EQ(parse_envelope(after[0].wire).header.type, MessageType::telemetry_key);
}

std::vector<Bytes> key_envelopes_for(const std::vector<Outgoing>& out, std::uint64_t reader) {
  std::vector<Bytes> v;
  for (const Outgoing& o : out) {
    if (o.type == MessageType::telemetry_key && o.recipient == reader) v.push_back(o.wire);
  }
  return v;
}

// docs/srup-mqtt.md 4.6: a reader keeps the last key envelope per device and opens it at start.
TEST_F(SrupTelemetry, KeyStoreReopensTheLastKeyAfterARestart_4_6) {
  test::TempDir tmp("pqot-tk-store");
  binding_key_topics = true;
  make_sender({});
  const auto keys = key_envelopes_for(sender->set_readers(set_of({&c2, &m1}), now), 0xd1);
  ASSERT_EQ(keys.size(), 1u);
  const auto reading = sender->seal(text("queued"), now);
  {
    TelemetryKeyStore store(tmp.path() / "keys");
    store.save(kDevice, keys[0]);
    struct stat st {};
    ASSERT_EQ(::stat(store.file_of(kDevice).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat(store.dir().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_FALSE(std::filesystem::exists(store.file_of(kDevice).string() + ".tmp"));
  }
  // "Restarted": a new reader, a new store over the same directory.
  ReaderPeer m1_again{0xd1, 3, &device.keys};
  TelemetryKeyStore store(tmp.path() / "keys");
  const KeyStoreRestore r = store.restore(m1_again.reader, m1_again.peer.identity, m1_again.lookup, now);
  EXPECT_EQ(r.restored, 1u);
  EXPECT_EQ(r.removed, 0u);
  EXPECT_EQ(body_of(m1_again.reader.open(reading[0].wire, kTelemetryTopic, now)), text("queued"));
  // Saving again replaces (one file per device: the bound), so a newer epoch wins.
  const auto rotated = key_envelopes_for(sender->set_readers(set_of({&m1}), now), 0xd1);
  ASSERT_EQ(rotated.size(), 1u);
  store.save(kDevice, rotated[0]);
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(store.dir())) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1u);
  ReaderPeer third{0xd1, 3, &device.keys};
  EXPECT_EQ(store.restore(third.reader, third.peer.identity, third.lookup, now).restored, 1u);
  EXPECT_EQ(third.reader.epochs(kDevice), (std::vector<std::uint32_t>{8}));
}

TEST_F(SrupTelemetry, KeyStoreDeletesWhatNoLongerOpensAndSkipsStrangers_4_6) {
  test::TempDir tmp("pqot-tk-store");
  binding_key_topics = true;
  make_sender({});
  const auto out = sender->set_readers(set_of({&c2, &m1}), now);
  TelemetryKeyStore store(tmp.path());
  // m1's key filed under m1, c2's key filed under another device, a damaged file, a stranger.
  store.save(kDevice, key_envelopes_for(out, 0xd1)[0]);
  store.save(0xb2, key_envelopes_for(out, 0xd1)[0]);
  {
    std::ofstream(tmp.path() / "00000000000000b3.tk") << "not an envelope";
    std::ofstream(tmp.path() / "notes.txt") << "left alone";
  }
  std::vector<std::pair<std::uint64_t, std::string>> refused;
  auto on_refused = [&](std::uint64_t d, const std::string& why) { refused.emplace_back(d, why); };
  ReaderPeer c2_again{0xc2, 2, &device.keys};  // c2 opens m1's key: not sealed to it
  // A monitor keeps the files of devices it does not follow in this run.
  KeyStoreRestore r = store.restore(c2_again.reader, c2_again.peer.identity, c2_again.lookup, now, on_refused,
                                    UnknownDevices::keep);
  EXPECT_EQ(r.restored, 0u);
  EXPECT_EQ(r.removed, 1u);  // kDevice's: sealed to another reader
  EXPECT_EQ(r.skipped, 3u);  // 0xb2, 0xb3 (unknown devices) and notes.txt
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].first, kDevice);
  EXPECT_NE(refused[0].second.find("WRONG_RECIPIENT"), std::string::npos) << refused[0].second;
  EXPECT_FALSE(std::filesystem::exists(store.file_of(kDevice)));
  EXPECT_TRUE(std::filesystem::exists(store.file_of(0xb2)));
  // The C2 deletes them: their devices are no longer joined (or the file is damaged).
  refused.clear();
  r = store.restore(c2_again.reader, c2_again.peer.identity, c2_again.lookup, now, on_refused);
  EXPECT_EQ(r.removed, 2u);
  EXPECT_EQ(r.skipped, 1u);
  EXPECT_EQ(refused.size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(tmp.path() / "notes.txt"));
  EXPECT_FALSE(std::filesystem::exists(store.file_of(0xb2)));
  EXPECT_TRUE(c2_again.reader.epochs(kDevice).empty());
  // Expired: a key whose lifetime is over is deleted at start.
  const auto again = sender->resend_keys();
  store.save(kDevice, key_envelopes_for(again, 0xd1)[0]);
  ReaderPeer late{0xd1, 3, &device.keys};
  refused.clear();
  r = store.restore(late.reader, late.peer.identity, late.lookup, now + 600'001, on_refused);
  EXPECT_EQ(r.removed, 1u);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_NE(refused[0].second.find("EXPIRED"), std::string::npos) << refused[0].second;
  EXPECT_TRUE(late.reader.epochs(kDevice).empty());
}

TEST(SrupTelemetryKeyStore, FileNamesAreSixteenHexDigitsDotTk) {
  EXPECT_EQ(telemetry_key_file_device("00000000000000a1.tk"), 0xa1u);
  EXPECT_EQ(telemetry_key_file_device("ffffffffffffffff.tk"), std::nullopt);
  EXPECT_EQ(telemetry_key_file_device("0000000000000000.tk"), std::nullopt);
  EXPECT_EQ(telemetry_key_file_device("00000000000000A1.tk"), std::nullopt);
  EXPECT_EQ(telemetry_key_file_device("00000000000000a1.tk.tmp"), std::nullopt);
  EXPECT_EQ(telemetry_key_file_device("0000000000000a1.tk"), std::nullopt);
  EXPECT_EQ(telemetry_key_file_device(""), std::nullopt);
}

// A reading's values as readers show them (srup monitor: reading_json.hpp, reading_text.hpp): a
// device's string is peer text. It must not drive the terminal the table or a JSON line is shown
// on (ESC, CSI, C1 controls, newlines that forge lines), pass for another field, or run as a
// spreadsheet formula from the CSV.
TEST(SrupReadingText, DeviceStringsCannotDriveATerminalOrASpreadsheet) {
  const std::string hostile = "\x1b]0;owned\x07\x1b[2J\r\nfake 1 voltage_l1=0 \"x\" \\ \xc2\x9b" "31m \xe2\x80\xae" "end";
  const Value s = string_value(hostile);
  EXPECT_EQ(value_table_text(s),
            "\"\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0afake 1 voltage_l1=0 \\\"x\\\" \\\\ \\u009b31m \\u202eend\"");
  EXPECT_EQ(value_csv_field(s),
            "\"\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x0afake 1 voltage_l1=0 \"\"x\"\" \\\\ \\u009b31m \\u202eend\"");
  for (const char* f : {"=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)"}) {
    const std::string field = value_csv_field(string_value(f));
    EXPECT_EQ(field.substr(0, 2), "\"'") << field;
  }
  EXPECT_EQ(value_csv_field(string_value("a,b")), "\"a,b\"");
  EXPECT_EQ(value_csv_field(string_value("")), "\"\"");
  // Readable text stays readable; numbers stay numbers, negative ones too.
  EXPECT_EQ(value_table_text(string_value("Zähler 230 V")), "\"Zähler 230 V\"");
  EXPECT_EQ(value_csv_field(string_value("Zähler")), "\"Zähler\"");
  EXPECT_EQ(value_csv_field(Value(-230.5)), "-230.5");
  EXPECT_EQ(value_table_text(Value(-3)), "-3");
  EXPECT_EQ(value_csv_field(Value(true)), "true");
  EXPECT_EQ(value_table_text(Value(Bytes{0x1b, 0x0a})), "1b0a");

  // JSON lines: C0 controls, DEL and C1 controls escaped; other text as it is.
  Reading r;
  r.timestamp_ms = 5;
  r.channels = {{0x0900, string_value("a\x1b[2J\x7f\xc2\x9b\xc2\xa0\nb")}};
  EXPECT_EQ(reading_json(r), "{\"t\":5,\"channels\":{\"0x0900\":\"a\\u001b[2J\\u007f\\u009b\xc2\xa0\\nb\"}}");
  EXPECT_TRUE(nlohmann::json::accept(reading_json(r)));
}

}  // namespace
}  // namespace pqot::srup
