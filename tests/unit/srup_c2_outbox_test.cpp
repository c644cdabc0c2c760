// The C2's outbox across a crash (docs/srup-c2.md, "Outbox" and "Follow-up steps"): an answer is
// stored in the registry before the replay window records it, a second copy of it changes nothing,
// and the step an answer triggers is kept in its row and taken once, also after reopening. The
// daemon's order is driven here by hand: the C2's srup::Endpoint and StateStore, the Registry, and
// a "crash" that drops them all and opens the files again.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>

#include "../support/temp_dir.hpp"
#include "pqot/srup/endpoint.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"
#include "registry.hpp"

namespace pqot::srup_c2::outbox_test {
namespace {

namespace fs = std::filesystem;
using pqot::test::TempDir;

constexpr std::uint64_t kOutboxC2 = 0xc2, kOutboxDevice = 0xa1;
constexpr auto kOutboxSuite = srup::Suite::ed25519_xwing;

// The C2 (registry, state, endpoint) and a device (its own state and endpoint) in files that
// survive crash(): everything the C2 holds in memory is dropped and opened again.
struct OutboxWorld {
  TempDir dir{"srup-c2-outbox"};
  srup::LoadedIdentity c2_id = srup::make_identity(kOutboxC2, kOutboxSuite, srup::random_seeds(kOutboxSuite));
  srup::LoadedIdentity dev_id = srup::make_identity(kOutboxDevice, kOutboxSuite, srup::random_seeds(kOutboxSuite));
  std::unique_ptr<Registry> registry;
  std::unique_ptr<srup::StateStore> c2_state, dev_state;
  std::unique_ptr<srup::Endpoint> c2, dev;

  OutboxWorld() {
    dev_state = std::make_unique<srup::StateStore>(dir.path() / "device.db");
    srup::EndpointOptions o;
    dev = std::make_unique<srup::Endpoint>(dev_id.self, *dev_state, o);
    dev->enrol(kOutboxC2, c2_id.pub.keys);
    open_c2();
    registry->enrol_device({"meter", srup::encode_public_identity(dev_id.pub), JoinMode::simple, std::nullopt}, 1, "t");
    registry->set_state(kOutboxDevice, DeviceState::joined, 2, "join");
  }
  void open_c2() {
    registry = std::make_unique<Registry>(dir.path() / "registry.db");
    c2_state = std::make_unique<srup::StateStore>(dir.path() / "state.db");
    srup::EndpointOptions o;
    o.is_c2 = true;
    c2 = std::make_unique<srup::Endpoint>(c2_id.self, *c2_state, o);
    c2->enrol(kOutboxDevice, dev_id.pub.keys);
  }
  void crash() {
    c2.reset();
    c2_state.reset();
    registry.reset();
    open_c2();
  }

  // A command in the outbox and its envelope, as Daemon::send_command stores it.
  crypto::Bytes send(srup::MessageType type, const srup::Body& body, std::optional<FollowUp> follow_up = {},
                     crypto::Bytes token = {}) {
    if (token.empty()) token = crypto::Bytes(16, static_cast<std::uint8_t>(registry->outbox_pending(std::nullopt) + 1));
    NewCommand c;
    c.device = kOutboxDevice;
    c.token = token;
    c.type = static_cast<std::uint8_t>(type);
    c.envelope = c2->make(kOutboxDevice, type, body, srup::topic_to_device(kOutboxDevice), token);
    c.created_ms = 1000;
    c.expires_ms = 1000 + 3'600'000;
    c.next_attempt_ms = 1000;
    c.follow_up = follow_up;
    registry->outbox_add(c);
    return c.envelope;
  }
  // The device runs it (or finds it in its journal) and answers `status`: the answer's bytes.
  crypto::Bytes device_answers(const crypto::Bytes& command, std::uint8_t status) {
    srup::Inbound in = dev->receive(command, srup::topic_to_device(kOutboxDevice), srup::topic_from_device(kOutboxDevice));
    if (in.kind == srup::Inbound::Kind::reply) return in.reply;  // its journal's copy
    EXPECT_EQ(in.kind, srup::Inbound::Kind::execute);
    return dev->answer(in.header, status, "", srup::topic_from_device(kOutboxDevice));
  }
  // Daemon::on_answer's order: receive without recording, store in the outbox, then record.
  // `crash_before_record`: the C2 dies between the two commits.
  AnswerOutcome c2_receives(const crypto::Bytes& answer, bool crash_before_record = false) {
    srup::Inbound in = c2->receive_unrecorded(answer, srup::topic_from_device(kOutboxDevice),
                                              srup::topic_to_device(kOutboxDevice));
    Answer a;
    a.device = kOutboxDevice;
    a.token = in.header.token;
    a.status = std::get<srup::Response>(in.body).status;
    a.received_ms = 5000;
    a.sequence = in.header.sequence;
    const AnswerOutcome out = registry->outbox_record_answer(a);
    if (crash_before_record) {
      crash();
    } else {
      c2->record(in.header);
    }
    return out;
  }
};

constexpr std::uint8_t kOutboxSuccess = static_cast<std::uint8_t>(srup::Status::action_success);

TEST(SrupC2Outbox, AnAnswerStoredBeforeACrashStaysAnsweredAndItsCopyChangesNothing) {
  OutboxWorld w;
  const crypto::Bytes cmd = w.send(srup::MessageType::action, srup::Action{7, {}});
  const crypto::Bytes answer = w.device_answers(cmd, kOutboxSuccess);
  EXPECT_EQ(w.c2_receives(answer, /*crash_before_record=*/true).match, AnswerMatch::answered);
  // After the restart the command is answered (it is not sent again); the same envelope once more
  // (a broker's redelivery) passes the window, is known by its number, and changes nothing.
  const auto rows = w.registry->outbox_list(kOutboxDevice, std::nullopt, 10);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, OutboxState::answered);
  EXPECT_EQ(rows[0].status, kOutboxSuccess);
  EXPECT_EQ(w.c2_receives(answer).match, AnswerMatch::duplicate);
  // Recorded now: a third copy is a REPLAY.
  try {
    w.c2->receive_unrecorded(answer, srup::topic_from_device(kOutboxDevice), srup::topic_to_device(kOutboxDevice));
    ADD_FAILURE() << "a recorded answer was accepted again";
  } catch (const srup::Refused& r) {
    EXPECT_EQ(r.reason(), srup::Refusal::replay);
  }
  EXPECT_EQ(w.registry->outbox_entry(rows[0].row)->status, kOutboxSuccess);
}

TEST(SrupC2Outbox, AnAnswerLostInACrashBeforeItIsStoredIsTakenFromTheDevicesJournal) {
  OutboxWorld w;
  const crypto::Bytes cmd = w.send(srup::MessageType::action, srup::Action{7, {}});
  const crypto::Bytes answer = w.device_answers(cmd, kOutboxSuccess);
  // The C2 opened the answer and died before storing it: nothing was recorded anywhere.
  w.c2->receive_unrecorded(answer, srup::topic_from_device(kOutboxDevice), srup::topic_to_device(kOutboxDevice));
  w.crash();
  // The outbox sends the command again; the device answers from its journal with the same bytes,
  // which the C2 accepts (receive() would have recorded it before the crash: REPLAY for ever).
  const auto pending = w.registry->outbox_list(kOutboxDevice, OutboxState::pending, 10);
  ASSERT_EQ(pending.size(), 1u);
  const crypto::Bytes again = w.device_answers(pending[0].envelope, 0);
  EXPECT_EQ(again, answer);
  const AnswerOutcome out = w.c2_receives(again);
  EXPECT_EQ(out.match, AnswerMatch::answered);
  EXPECT_EQ(out.entry->status, kOutboxSuccess);
}

TEST(SrupC2Outbox, AnUpdatesActivateIsKeptInTheOutboxAndACopyOfTheInitiatesAnswerIsNotTakenForIt) {
  OutboxWorld w;
  const crypto::Bytes initiate = w.send(srup::MessageType::update_initiate,
                                        srup::UpdateInitiate{"file:///fw.bin", {}}, FollowUp::activate);
  const crypto::Bytes answer = w.device_answers(initiate, 0x00);
  const AnswerOutcome out = w.c2_receives(answer, /*crash_before_record=*/true);
  ASSERT_EQ(out.match, AnswerMatch::answered);
  EXPECT_EQ(out.entry->follow_up_state, FollowUpState::due);
  // Restarted: the step is due; taking it stores the Activate (same token) and is done once.
  auto due = w.registry->outbox_follow_ups_due(10);
  ASSERT_EQ(due.size(), 1u);
  NewCommand activate;
  activate.device = kOutboxDevice;
  activate.token = due[0].token;
  activate.type = static_cast<std::uint8_t>(srup::MessageType::update_activate);
  activate.envelope = w.c2->make(kOutboxDevice, srup::MessageType::update_activate, srup::Empty{},
                                 srup::topic_to_device(kOutboxDevice), due[0].token);
  activate.expires_ms = 3'600'000;
  EXPECT_TRUE(w.registry->outbox_follow_up_send(due[0].row, activate));
  EXPECT_FALSE(w.registry->outbox_follow_up_send(due[0].row, activate));
  EXPECT_TRUE(w.registry->outbox_follow_ups_due(10).empty());
  EXPECT_EQ(w.registry->outbox_entry(due[0].row)->follow_up_state, FollowUpState::done);
  // The Initiate's answer again carries the Activate's token: known by its number, it does not
  // answer the Activate.
  EXPECT_EQ(w.c2_receives(answer).match, AnswerMatch::duplicate);
  const auto pending = w.registry->outbox_list(kOutboxDevice, OutboxState::pending, 10);
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].type, static_cast<std::uint8_t>(srup::MessageType::update_activate));
}

TEST(SrupC2Outbox, ATerminateAnsweredBeforeACrashResignsTheDeviceOnceAfterIt) {
  OutboxWorld w;
  w.send(srup::MessageType::action, srup::Action{7, {}});  // still pending: cancelled with the step
  const crypto::Bytes terminate = w.send(srup::MessageType::terminate_command, srup::Empty{}, FollowUp::resign);
  const crypto::Bytes answer = w.device_answers(terminate, static_cast<std::uint8_t>(srup::Status::resign_success));
  w.c2_receives(answer);
  w.crash();  // before the step was taken
  EXPECT_EQ(w.registry->device(kOutboxDevice)->state, DeviceState::joined);
  const auto due = w.registry->outbox_follow_ups_due(10);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_TRUE(w.registry->outbox_follow_up_resign(due[0].row, 6000, "terminate"));
  EXPECT_FALSE(w.registry->outbox_follow_up_resign(due[0].row, 6001, "terminate"));
  EXPECT_EQ(w.registry->device(kOutboxDevice)->state, DeviceState::resigned);
  EXPECT_EQ(w.registry->outbox_pending(kOutboxDevice), 0u);
  EXPECT_EQ(w.registry->events_of(device_username(kOutboxDevice), 1).front().actor, "terminate");
}

TEST(SrupC2Outbox, AFollowUpIsSkippedForAnotherAnswerOrNoAnswerAndADueOneIsNotPruned) {
  RegistryLimits l;
  l.outbox_finished_per_device = 1;
  TempDir dir{"srup-c2-outbox"};
  Registry r(dir.path() / "registry.db", l);
  const auto dev = srup::make_identity(kOutboxDevice, kOutboxSuite, srup::random_seeds(kOutboxSuite));
  r.enrol_device({"meter", srup::encode_public_identity(dev.pub), JoinMode::simple, std::nullopt}, 1, "t");
  auto command = [&](std::uint8_t token, std::optional<FollowUp> f) {
    NewCommand c;
    c.device = kOutboxDevice;
    c.token = crypto::Bytes(16, token);
    c.type = 1;
    c.envelope = crypto::Bytes(10, token);
    c.expires_ms = 100;
    c.follow_up = f;
    return r.outbox_add(c);
  };
  const std::int64_t due = command(1, FollowUp::resign);
  const std::int64_t refused = command(2, FollowUp::activate);
  const std::int64_t expiring = command(3, FollowUp::rehome);
  EXPECT_EQ(r.outbox_entry(refused)->follow_up_state, FollowUpState::waiting);
  r.outbox_answer(kOutboxDevice, crypto::Bytes(16, 1), 0x70, "", 10);  // due
  r.outbox_answer(kOutboxDevice, crypto::Bytes(16, 2), 0xFF, "", 11);  // digest mismatch: no Activate
  EXPECT_EQ(r.outbox_expire(200), 1u);
  // One finished row is kept per device (the newest), but a due one stays until its step is taken.
  EXPECT_FALSE(r.outbox_entry(refused));
  EXPECT_EQ(r.outbox_entry(expiring)->follow_up_state, FollowUpState::skipped);
  ASSERT_TRUE(r.outbox_entry(due));
  EXPECT_EQ(r.outbox_entry(due)->follow_up_state, FollowUpState::due);
  EXPECT_EQ(r.prune(300).outbox, 0u);
  EXPECT_TRUE(r.outbox_entry(due));
}

TEST(SrupC2Outbox, ASchemaVersion1RegistryIsMigratedAndKeepsItsCommands) {
  TempDir dir{"srup-c2-outbox"};
  const fs::path db = dir.path() / "registry.db";
  const auto dev = srup::make_identity(kOutboxDevice, kOutboxSuite, srup::random_seeds(kOutboxSuite));
  std::int64_t row = 0;
  {
    Registry r(db);
    r.enrol_device({"meter", srup::encode_public_identity(dev.pub), JoinMode::simple, std::nullopt}, 1, "t");
    NewCommand c;
    c.device = kOutboxDevice;
    c.token = crypto::Bytes(16, 1);
    c.type = 1;
    c.envelope = crypto::Bytes(10, 1);
    c.expires_ms = 100;
    row = r.outbox_add(c);
  }
  // Back to schema 1 as it was written (the columns of version 2 removed).
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  for (const char* s : {"DROP INDEX outbox_answer_seq", "DROP INDEX outbox_follow_up_due",
                        "ALTER TABLE outbox DROP COLUMN follow_up_arg", "ALTER TABLE outbox DROP COLUMN follow_up_state",
                        "ALTER TABLE outbox DROP COLUMN follow_up", "ALTER TABLE outbox DROP COLUMN answer_seq",
                        "PRAGMA user_version = 1"}) {
    ASSERT_EQ(sqlite3_exec(raw, s, nullptr, nullptr, nullptr), SQLITE_OK) << s << ": " << sqlite3_errmsg(raw);
  }
  sqlite3_close(raw);
  {
    Registry r(db);
    const auto e = r.outbox_entry(row);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->state, OutboxState::pending);
    EXPECT_FALSE(e->follow_up);
    EXPECT_TRUE(r.outbox_answer(kOutboxDevice, crypto::Bytes(16, 1), 0x20, "", 5));
  }
  ASSERT_EQ(sqlite3_open(db.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), Registry::kSchemaVersion);
  sqlite3_finalize(st);
  sqlite3_close(raw);
}

}  // namespace
}  // namespace pqot::srup_c2::outbox_test
