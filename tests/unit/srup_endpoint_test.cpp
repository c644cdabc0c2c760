// srup::Endpoint: envelopes in the type's mode with durable numbers, and the receive order with
// the replay window for messages and the journal for commands (docs/srup-pq.md 6, 7).
#include "pqot/srup/endpoint.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "../support/srup_peers.hpp"
#include "../support/temp_dir.hpp"
#include "pqot/srup/status.hpp"

namespace pqot::srup {
namespace {

const std::string kToDevice = "srup/00000000000000a1/c2";
const std::string kToC2 = "srup/00000000000000a1/dev";

// A C2 and a device, each with its own state file, enrolled with each other.
struct EndpointPair {
  test::TempDir dir{"pqot-endpoint"};
  test::SrupPeer c2_peer = test::srup_c2();
  test::SrupPeer device_peer = test::srup_device();
  std::uint64_t clock = 1'790'000'000'000;
  std::unique_ptr<StateStore> c2_store, device_store;
  std::unique_ptr<Endpoint> c2, device;

  EndpointPair() { open(); }
  void open() {
    device.reset();
    c2.reset();
    device_store.reset();
    c2_store.reset();
    c2_store = std::make_unique<StateStore>(dir.path() / "c2.db");
    device_store = std::make_unique<StateStore>(dir.path() / "device.db");
    EndpointOptions c2_options;
    c2_options.is_c2 = true;
    c2_options.now_ms = [this] { return clock; };
    EndpointOptions device_options;
    device_options.now_ms = [this] { return clock; };
    c2 = std::make_unique<Endpoint>(c2_peer.identity, *c2_store, c2_options);
    device = std::make_unique<Endpoint>(device_peer.identity, *device_store, device_options);
    c2->enrol(device_peer.identity.id, device_peer.keys);
    device->enrol(c2_peer.identity.id, c2_peer.keys);
  }
};

Bytes token_of(std::string_view s) { return Bytes(s.begin(), s.end()); }

Refusal refusal_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Refused& r) {
    return r.reason();
  }
  ADD_FAILURE() << "not refused";
  return Refusal::malformed;
}

TEST(SrupEndpoint, CommandRunsOnceAndEveryRetryGetsTheSameAnswer) {
  EndpointPair p;
  const Bytes cmd = p.c2->make(0xa1, MessageType::action, Action{7, Value{}}, kToDevice, token_of("t1"));
  const Inbound first = p.device->receive(cmd, kToDevice, kToC2);
  ASSERT_EQ(first.kind, Inbound::Kind::execute);
  EXPECT_EQ(std::get<Action>(first.body).action_id, 7);
  EXPECT_EQ(first.header.token, token_of("t1"));
  const Bytes rsp = p.device->answer(first.header, static_cast<std::uint8_t>(Status::action_success), "ok", kToC2);

  const Inbound again = p.device->receive(cmd, kToDevice, kToC2);  // the C2's retransmission
  ASSERT_EQ(again.kind, Inbound::Kind::reply);
  EXPECT_EQ(again.reply, rsp);

  const Inbound at_c2 = p.c2->receive(rsp, kToC2, kToDevice);
  ASSERT_EQ(at_c2.kind, Inbound::Kind::message);
  EXPECT_EQ(std::get<Response>(at_c2.body).status, 0x20);
  EXPECT_EQ(at_c2.header.token, token_of("t1"));
  // The same Response twice (a QoS-1 duplicate) is a replay at the C2.
  EXPECT_EQ(refusal_of([&] { p.c2->receive(rsp, kToC2, kToDevice); }), Refusal::replay);
}

TEST(SrupEndpoint, ACachedAnswerLivesAsLongAsItsCommand) {
  EndpointPair p;
  EndpointOptions hour;
  hour.is_c2 = true;
  hour.lifetime_ms = 3'600'000;
  hour.now_ms = [&p] { return p.clock; };
  Endpoint c2(p.c2_peer.identity, *p.c2_store, hour);
  c2.enrol(0xa1, p.device_peer.keys);
  const Bytes cmd = c2.make(0xa1, MessageType::action, Action{3, Value{}}, kToDevice, token_of("h"));
  const Inbound first = p.device->receive(cmd, kToDevice, kToC2);  // the device's lifetime: 60 s
  ASSERT_EQ(first.kind, Inbound::Kind::execute);
  p.device->answer(first.header, 0x20, "", kToC2);
  p.clock += 50 * 60 * 1000;  // the answer was lost; the C2 retries 50 minutes later
  const Inbound retry = p.device->receive(cmd, kToDevice, kToC2);
  ASSERT_EQ(retry.kind, Inbound::Kind::reply);
  EXPECT_EQ(std::get<Response>(c2.receive(retry.reply, kToC2, kToDevice).body).status, 0x20);
}

TEST(SrupEndpoint, InFlightDuplicateIsDroppedAndAbandonedCommandIsInterrupted) {
  EndpointPair p;
  const Bytes cmd = p.c2->make(0xa1, MessageType::action, Action{1, Value{}}, kToDevice, token_of("x"));
  const Inbound first = p.device->receive(cmd, kToDevice, kToC2);
  ASSERT_EQ(first.kind, Inbound::Kind::execute);
  EXPECT_EQ(p.device->receive(cmd, kToDevice, kToC2).kind, Inbound::Kind::in_progress);
  p.device->abandon(first.header);
  const Inbound retry = p.device->receive(cmd, kToDevice, kToC2);
  ASSERT_EQ(retry.kind, Inbound::Kind::reply);
  const Inbound at_c2 = p.c2->receive(retry.reply, kToC2, kToDevice);
  EXPECT_EQ(std::get<Response>(at_c2.body).status, static_cast<std::uint8_t>(Status::interrupted));
}

TEST(SrupEndpoint, StateSurvivesReopening) {
  EndpointPair p;
  const Bytes cmd = p.c2->make(0xa1, MessageType::id_request, Empty{}, kToDevice, token_of("id"));
  const Inbound first = p.device->receive(cmd, kToDevice, kToC2);
  ASSERT_EQ(first.kind, Inbound::Kind::execute);
  const Bytes rsp = p.device->answer(first.header, 0x20, "", kToC2);
  p.open();  // both restart
  const Inbound again = p.device->receive(cmd, kToDevice, kToC2);
  ASSERT_EQ(again.kind, Inbound::Kind::reply);
  EXPECT_EQ(again.reply, rsp);
  // The C2's counter continued: its next command has a higher number.
  const Bytes next = p.c2->make(0xa1, MessageType::id_request, Empty{}, kToDevice, token_of("id2"));
  const Inbound second = p.device->receive(next, kToDevice, kToC2);
  EXPECT_EQ(second.kind, Inbound::Kind::execute);
  EXPECT_GT(second.header.sequence, first.header.sequence);
}

TEST(SrupEndpoint, RefusesWhatTheReceiveOrderRefuses) {
  EndpointPair p;
  const Bytes cmd = p.c2->make(0xa1, MessageType::action, Action{2, Value{}}, kToDevice);
  // Re-topicked: the same bytes delivered on another device's topic.
  EXPECT_EQ(refusal_of([&] { p.device->receive(cmd, "srup/00000000000000b2/c2", kToC2); }),
            Refusal::wrong_topic);
  // Tampered.
  Bytes tampered = cmd;
  tampered.back() ^= 1;
  EXPECT_EQ(refusal_of([&] { p.device->receive(tampered, kToDevice, kToC2); }), Refusal::bad_signature);
  // Expired: the device's clock is past the lifetime.
  p.clock += 61'000;
  EXPECT_EQ(refusal_of([&] { p.device->receive(cmd, kToDevice, kToC2); }), Refusal::expired);
  p.clock -= 61'000;
  // From a key that is not the C2's: an impostor with the C2's ID.
  StateStore other_store(p.dir.path() / "impostor.db");
  test::SrupPeer impostor = test::srup_peer(0xc2, 0x77);
  Endpoint fake(impostor.identity, other_store);
  fake.enrol(0xa1, p.device_peer.keys);
  const Bytes forged = fake.make(0xa1, MessageType::action, Action{2, Value{}}, kToDevice);
  EXPECT_EQ(refusal_of([&] { p.device->receive(forged, kToDevice, kToC2); }), Refusal::bad_signature);
  // None of the refusals used up the command: the real one still runs.
  EXPECT_EQ(p.device->receive(cmd, kToDevice, kToC2).kind, Inbound::Kind::execute);
}

TEST(SrupEndpoint, TheC2RefusesCommandsAndAnUnknownSender) {
  EndpointPair p;
  // A device that sends a command type to the C2 (sealed Action): refused before any state.
  Endpoint& dev = *p.device;
  const Bytes bogus = dev.make(0xc2, MessageType::action, Action{1, Value{}}, kToC2);
  EXPECT_EQ(refusal_of([&] { p.c2->receive(bogus, kToC2, kToDevice); }), Refusal::bad_request);
  p.c2->remove(0xa1);  // deregistered
  const Bytes data = dev.make(0xc2, MessageType::data, Data{"temp", Value{}}, kToC2);
  EXPECT_EQ(refusal_of([&] { p.c2->receive(data, kToC2, kToDevice); }), Refusal::unknown_sender);
  EXPECT_THROW(p.c2->make(0xa1, MessageType::action, Action{1, Value{}}, kToDevice), std::invalid_argument);
}

TEST(SrupEndpoint, AnAuthenticatedCommandWithABadBodyIsAnsweredBadRequest) {
  EndpointPair p;
  // A well-formed Action whose body has a trailing byte, signed by the real C2 key.
  Header h;
  h.type = MessageType::action;
  h.suite = p.c2_peer.identity.suite;
  h.mode = Mode::sealed;
  h.sender = 0xc2;
  h.recipient = 0xa1;
  h.sequence = 99;
  h.timestamp_ms = p.clock;
  h.lifetime_ms = 60'000;
  h.topic = topic_tag(kToDevice);
  const Bytes bad_body = {0x07, 0x00, 0xFF};
  const Bytes wire = protect(h, bad_body, p.c2_peer.identity, &p.device_peer.keys);
  const Inbound in = p.device->receive(wire, kToDevice, kToC2);
  ASSERT_EQ(in.kind, Inbound::Kind::reply);
  const Inbound at_c2 = p.c2->receive(in.reply, kToC2, kToDevice);
  EXPECT_EQ(std::get<Response>(at_c2.body).status, static_cast<std::uint8_t>(Status::bad_request));
  EXPECT_FALSE(std::get<Response>(at_c2.body).detail.empty());
  // Never run: the retry gets the same answer.
  EXPECT_EQ(p.device->receive(wire, kToDevice, kToC2).kind, Inbound::Kind::reply);
}

TEST(SrupEndpoint, RefusesABadLifetimeAndSessionTypes) {
  test::TempDir dir("pqot-endpoint");
  StateStore store(dir.path() / "s.db");
  EndpointOptions options;
  options.lifetime_ms = 0;
  EXPECT_THROW(Endpoint(test::srup_c2().identity, store, options), std::invalid_argument);
  Endpoint ok(test::srup_c2().identity, store);
  ok.enrol(0xa1, test::srup_device().keys);
  EXPECT_THROW(ok.make(0xa1, MessageType::telemetry, Reading{}, kToDevice), std::invalid_argument);
}

}  // namespace
}  // namespace pqot::srup

namespace pqot::srup {
namespace {

// Signature keys are prepared for the peers heard from most recently, at most kMaxPreparedPeers of
// them; one dropped from the cache still verifies (from its bytes, then prepared again); a peer
// enrolled again with new keys is never verified with its old prepared key.
TEST(SrupEndpoint, PreparedPeerKeysAreBoundedAndFollowEnrolment) {
  EndpointPair p;
  const std::uint64_t device = p.device_peer.identity.id;
  auto data = [&] { return p.device->make(0xc2, MessageType::data, Data{"temp", Value{}}, kToC2); };
  EXPECT_FALSE(p.c2->peer(device)->verifier);
  EXPECT_EQ(p.c2->receive(data(), kToC2, kToDevice).kind, Inbound::Kind::message);
  EXPECT_TRUE(p.c2->peer(device)->verifier);
  EXPECT_TRUE(p.c2->peer(device)->encapsulator);

  // As many other peers heard from as the cache holds (the device's keys under other IDs).
  for (std::uint64_t id = 0x1000; id < 0x1000 + Endpoint::kMaxPreparedPeers; ++id) {
    p.c2->enrol(id, p.device_peer.keys);
    ASSERT_NE(p.c2->prepared_peer(id), nullptr);
  }
  EXPECT_FALSE(p.c2->peer(device)->verifier) << "the least recently used key was not dropped";
  EXPECT_FALSE(p.c2->peer(device)->encapsulator);
  std::size_t prepared = 0;
  for (std::uint64_t id = 0x1000; id < 0x1000 + Endpoint::kMaxPreparedPeers; ++id) {
    prepared += p.c2->peer(id)->verifier ? 1 : 0;
  }
  EXPECT_EQ(prepared, Endpoint::kMaxPreparedPeers);
  EXPECT_EQ(p.c2->receive(data(), kToC2, kToDevice).kind, Inbound::Kind::message);
  EXPECT_TRUE(p.c2->peer(device)->verifier);
  EXPECT_FALSE(p.c2->peer(0x1000)->verifier);

  // Enrolled again with another key: the prepared one goes with the old key.
  test::SrupPeer other = test::srup_peer(device, 0x55);
  p.c2->enrol(device, other.keys);
  EXPECT_FALSE(p.c2->peer(device)->verifier);
  EXPECT_FALSE(p.c2->peer(device)->encapsulator);
  EXPECT_EQ(refusal_of([&] { p.c2->receive(data(), kToC2, kToDevice); }), Refusal::bad_signature);
  // What the C2 seals now goes to the new key: the old device cannot open it.
  const Bytes sealed = p.c2->make(device, MessageType::action, Action{1, Value{}}, kToDevice);
  EXPECT_TRUE(p.c2->peer(device)->encapsulator);
  EXPECT_EQ(refusal_of([&] { p.device->receive(sealed, kToDevice, kToC2); }), Refusal::decrypt_failed);
  p.c2->remove(device);
  EXPECT_EQ(p.c2->prepared_peer(device), nullptr);
}

}  // namespace
}  // namespace pqot::srup
