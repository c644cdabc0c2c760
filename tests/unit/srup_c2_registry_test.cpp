// The SRUP-PQ C2's registry (docs/srup-c2.md, "Registry"): persistence across reopening, the
// device state machine, every bound, join codes, the outbox, monitors, retention, backup and
// restore, and refusal of damaged or foreign files.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "pqot/srup/identity.hpp"
#include "registry.hpp"

namespace pqot::srup_c2::registry_test {
namespace {

namespace fs = std::filesystem;
using pqot::test::TempDir;

std::string pub_pem(std::uint64_t id) {
  const auto suite = srup::Suite::ed25519_xwing;
  return srup::encode_public_identity(srup::make_identity(id, suite, srup::random_seeds(suite)).pub);
}

crypto::Bytes bytes(std::size_t n, std::uint8_t fill) { return crypto::Bytes(n, fill); }

NewDevice new_device(std::uint64_t id, std::string type = "meter") {
  return NewDevice{std::move(type), pub_pem(id), JoinMode::simple, std::nullopt};
}

NewCommand command(std::uint64_t device, std::uint8_t token, std::uint64_t now = 1000) {
  NewCommand c;
  c.device = device;
  c.token = bytes(16, token);
  c.type = 0x10;
  c.envelope = bytes(200, token);
  c.created_ms = now;
  c.expires_ms = now + 60'000;
  c.next_attempt_ms = now;
  return c;
}

class SrupC2Registry : public ::testing::Test {
 protected:
  fs::path db() const { return tmp_.path() / "registry.db"; }
  TempDir tmp_{"srup-c2-registry"};
};

TEST_F(SrupC2Registry, EverythingSurvivesClosingAndReopening) {
  const std::string pem = pub_pem(0xa1);
  {
    Registry r(db());
    const Device d = r.enrol_device({"meter", pem, JoinMode::human, std::nullopt}, 1000, "control");
    EXPECT_EQ(d.username, "dev-00000000000000a1");
    EXPECT_EQ(d.state, DeviceState::pending);
    r.set_state(0xa1, DeviceState::joined, 2000, "join");
    r.set_certificate(0xa1, "0123abcd", 1'900'000'000'000, 2001, "join");
    r.touch(0xa1, 3000);
    r.outbox_add(command(0xa1, 7));
    r.add_data(0xa1, 3001, "temp", "{\"f64\":21.5}");
    r.add_readings(std::vector<Reading>{{0xa1, 5, 3002, "{\"t\":1}"}});
  }
  // Mode 0600 (it holds the join codes), and still in WAL mode after closing.
  EXPECT_EQ((fs::status(db()).permissions() & fs::perms::all), fs::perms::owner_read | fs::perms::owner_write);
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db().c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "wal");
    sqlite3_finalize(st);
    sqlite3_close(raw);
  }
  Registry r(db());
  const auto d = r.device(0xa1);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->identity_pem, pem);
  EXPECT_EQ(d->identity.id, 0xa1u);
  EXPECT_EQ(d->identity.keys.suite, srup::Suite::ed25519_xwing);
  EXPECT_EQ(d->type, "meter");
  EXPECT_EQ(d->state, DeviceState::joined);
  EXPECT_EQ(d->join_mode, JoinMode::human);
  EXPECT_EQ(d->enrolled_ms, 1000u);
  EXPECT_EQ(d->joined_ms, 2000u);
  EXPECT_EQ(d->last_seen_ms, 3000u);
  EXPECT_EQ(d->cert_serial, "0123abcd");
  EXPECT_EQ(d->cert_not_after_ms, 1'900'000'000'000);
  EXPECT_EQ(r.device_by_username("dev-00000000000000a1")->id, 0xa1u);
  EXPECT_FALSE(r.device_by_username("dev-00000000000000a2"));
  const auto pending = r.outbox_oldest_pending(0xa1);
  ASSERT_TRUE(pending);
  EXPECT_EQ(pending->envelope, bytes(200, 7));
  ASSERT_EQ(r.data(0xa1, 10).size(), 1u);
  EXPECT_EQ(r.data(0xa1, 10)[0].value_json, "{\"f64\":21.5}");
  ASSERT_EQ(r.readings(0xa1, 10).size(), 1u);
  const auto ev = r.events(0, 100);
  ASSERT_GE(ev.size(), 3u);
  EXPECT_EQ(ev[0].action, "enrol");
  EXPECT_EQ(ev[0].actor, "control");
  EXPECT_EQ(ev[1].action, "state joined");
}

TEST_F(SrupC2Registry, OnlyTheDocumentedTransitionsAreAllowed) {
  using S = DeviceState;
  const S all[] = {S::pending, S::joined, S::resigned, S::deregistered};
  int allowed = 0;
  for (S from : all) {
    for (S to : all) allowed += transition_allowed(from, to) ? 1 : 0;
  }
  EXPECT_EQ(allowed, 5);
  EXPECT_TRUE(transition_allowed(S::pending, S::joined));
  EXPECT_TRUE(transition_allowed(S::pending, S::deregistered));
  EXPECT_TRUE(transition_allowed(S::joined, S::resigned));
  EXPECT_TRUE(transition_allowed(S::joined, S::deregistered));
  EXPECT_TRUE(transition_allowed(S::resigned, S::deregistered));

  Registry r(db());
  r.enrol_device(new_device(1), 1, "t");
  EXPECT_THROW(r.set_state(1, S::resigned, 2, "t"), TransitionError);
  EXPECT_THROW(r.set_state(1, S::pending, 2, "t"), TransitionError);
  EXPECT_EQ(r.device(1)->state, S::pending);
  r.set_state(1, S::joined, 3, "t");
  r.set_state(1, S::resigned, 4, "t");
  EXPECT_THROW(r.set_state(1, S::joined, 5, "t"), TransitionError);
  r.set_state(1, S::deregistered, 6, "t");
  for (S to : all) EXPECT_THROW(r.set_state(1, to, 7, "t"), TransitionError);
  EXPECT_THROW(r.set_state(99, S::joined, 7, "t"), std::out_of_range);
}

TEST_F(SrupC2Registry, InputsOverTheirBoundsAreRefusedBeforeWriting) {
  Registry r(db());
  EXPECT_THROW(r.enrol_device(new_device(1, std::string(kMaxTypeLength + 1, 't')), 1, "t"), std::invalid_argument);
  EXPECT_THROW(r.enrol_device(new_device(1, "two words"), 1, "t"), std::invalid_argument);
  EXPECT_THROW(r.enrol_device({"meter", std::string(kMaxIdentityBytes + 1, 'A'), JoinMode::simple, {}}, 1, "t"),
               std::invalid_argument);
  EXPECT_THROW(r.enrol_device({"meter", "garbage", JoinMode::simple, {}}, 1, "t"), std::invalid_argument);
  EXPECT_THROW(r.enrol_device({"meter", pub_pem(1), JoinMode::observed, {}}, 1, "t"), std::invalid_argument);
  EXPECT_THROW(r.enrol_device(new_device(1), 1, std::string(kMaxActorLength + 1, 'a')), std::invalid_argument);
  EXPECT_EQ(r.count_devices(std::nullopt), 0u);
  r.enrol_device(new_device(1), 1, "t");
  EXPECT_THROW(r.enrol_device(new_device(1), 1, "t"), std::invalid_argument);  // already enrolled

  NewCommand c = command(1, 1);
  c.token = bytes(kMaxTokenLength + 1, 1);
  EXPECT_THROW(r.outbox_add(c), std::invalid_argument);
  c = command(1, 1);
  c.envelope = bytes(kMaxEnvelopeBytes + 1, 1);
  EXPECT_THROW(r.outbox_add(c), std::invalid_argument);
  c.envelope.clear();
  EXPECT_THROW(r.outbox_add(c), std::invalid_argument);
  EXPECT_THROW(r.outbox_add(command(2, 1)), std::out_of_range);  // unknown device
  EXPECT_THROW(r.add_data(1, 1, std::string(kMaxDataIdLength + 1, 'd'), "1"), std::invalid_argument);
  EXPECT_THROW(r.add_data(1, 1, "d", std::string(kMaxValueLength + 1, '1')), std::invalid_argument);
  EXPECT_THROW(r.add_readings(std::vector<Reading>{{1, 1, 1, std::string(kMaxReadingLength + 1, '1')}}),
               std::invalid_argument);
  EXPECT_THROW(r.set_certificate(1, "XYZ", 1, 1, "t"), std::invalid_argument);
  EXPECT_THROW(r.set_join_code(1, bytes(15, 1), 1, "t"), std::invalid_argument);
  DeviceFilter too_many;
  too_many.limit = Registry::kMaxListLimit + 1;
  EXPECT_THROW(r.list_devices(too_many), std::invalid_argument);
  EXPECT_TRUE(r.outbox_due(10'000, 10).empty());
  EXPECT_TRUE(r.data(1, 10).empty());
}

TEST_F(SrupC2Registry, DeviceAndPendingCountsAreBounded) {
  RegistryLimits l;
  l.max_devices = 3;
  l.pending_max = 2;
  Registry r(db(), l);
  r.enrol_device(new_device(1), 1, "t");
  r.enrol_device(new_device(2), 1, "t");
  EXPECT_THROW(r.enrol_device(new_device(3), 1, "t"), RegistryFull);  // two pending
  r.set_state(1, DeviceState::joined, 2, "t");
  r.enrol_device(new_device(3), 1, "t");
  r.set_state(2, DeviceState::joined, 2, "t");
  EXPECT_THROW(r.enrol_device(new_device(4), 1, "t"), RegistryFull);  // three devices
  r.set_state(2, DeviceState::deregistered, 3, "t");
  r.enrol_device(new_device(4), 1, "t");  // a deregistered device no longer counts
  EXPECT_EQ(r.count_devices(std::nullopt), 4u);
  EXPECT_EQ(r.count_devices(DeviceState::pending), 2u);
}

TEST_F(SrupC2Registry, JoinCodesAreOneUseBoundedAndExpire) {
  RegistryLimits l;
  l.join_code_attempts = 3;
  l.join_code_lifetime_ms = 10'000;
  Registry r(db(), l);
  r.enrol_device(new_device(1), 1, "t");
  EXPECT_EQ(r.check_join_code(1, bytes(16, 9), 100), JoinCodeCheck::none);
  r.set_join_code(1, bytes(16, 9), 100, "t");
  EXPECT_EQ(r.check_join_code(1, bytes(16, 8), 200), JoinCodeCheck::wrong);
  EXPECT_EQ(r.check_join_code(1, bytes(5, 8), 200), JoinCodeCheck::wrong);
  EXPECT_EQ(r.check_join_code(1, bytes(16, 9), 300), JoinCodeCheck::accepted);
  EXPECT_EQ(r.check_join_code(1, bytes(16, 9), 300), JoinCodeCheck::none);  // one use

  r.set_join_code(1, bytes(16, 9), 1000, "t");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.check_join_code(1, bytes(16, 1), 1100), JoinCodeCheck::wrong);
  EXPECT_EQ(r.check_join_code(1, bytes(16, 9), 1200), JoinCodeCheck::exhausted);  // even the right one

  r.set_join_code(1, bytes(16, 9), 2000, "t");  // a new code resets the failures
  EXPECT_EQ(r.check_join_code(1, bytes(16, 9), 2000 + 10'001), JoinCodeCheck::expired);
  EXPECT_EQ(r.prune(2000 + 10'001).join_codes, 1u);

  r.set_state(1, DeviceState::joined, 3000, "t");
  EXPECT_THROW(r.set_join_code(1, bytes(16, 9), 3000, "t"), TransitionError);
  for (const Event& e : r.events(0, 100)) EXPECT_EQ(e.detail.find("0909"), std::string::npos);
}

TEST_F(SrupC2Registry, OutboxRetransmitsAnswersExpiresAndIsBounded) {
  RegistryLimits l;
  l.outbox_max_per_device = 2;
  l.outbox_max_total = 3;
  l.outbox_finished_per_device = 1;
  Registry r(db(), l);
  r.enrol_device(new_device(1), 1, "t");
  r.enrol_device(new_device(2), 1, "t");
  const std::int64_t a = r.outbox_add(command(1, 1, 1000));
  const std::int64_t b = r.outbox_add(command(1, 2, 1001));
  EXPECT_THROW(r.outbox_add(command(1, 3)), RegistryFull);  // per device
  const std::int64_t c = r.outbox_add(command(2, 1, 1002));  // the same token on another device
  EXPECT_THROW(r.outbox_add(command(2, 2)), RegistryFull);  // in total
  EXPECT_EQ(r.outbox_pending(std::nullopt), 3u);

  // Due now, earliest first; a retransmission moves the next attempt.
  auto due = r.outbox_due(1001, 10);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].row, a);
  EXPECT_EQ(due[1].row, b);
  r.outbox_attempted(a, 5000);
  due = r.outbox_due(1002, 10);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].row, b);
  EXPECT_EQ(due[1].row, c);
  EXPECT_EQ(r.outbox_entry(a)->attempts, 1u);
  EXPECT_EQ(r.outbox_oldest_pending(1)->row, a);

  // An answer matches by device and token, once; an unknown or late one changes nothing.
  EXPECT_FALSE(r.outbox_answer(2, bytes(16, 2), 0, "", 2000));
  const auto answered = r.outbox_answer(1, bytes(16, 1), 0x00, std::string(5000, 'x'), 2000);
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->state, OutboxState::answered);
  EXPECT_EQ(answered->status, 0);
  EXPECT_EQ(answered->detail->size(), kMaxDetailLength);  // cut to its bound
  EXPECT_FALSE(r.outbox_answer(1, bytes(16, 1), 0, "", 2001));
  EXPECT_EQ(r.outbox_oldest_pending(1)->row, b);
  // One pending command per token (an answer must name exactly one); a finished command's token
  // may be used again (an update's Activate carries its Initiate's token).
  EXPECT_THROW(r.outbox_add(command(1, 2)), std::invalid_argument);

  // Expiry; finished rows beyond outbox_finished_per_device (1) go, oldest first.
  EXPECT_EQ(r.outbox_expire(1001 + 60'000), 1u);
  EXPECT_EQ(r.outbox_entry(b)->state, OutboxState::expired);
  EXPECT_FALSE(r.outbox_entry(a));
  EXPECT_TRUE(r.outbox_cancel(c, 3000));
  EXPECT_FALSE(r.outbox_cancel(c, 3000));
  EXPECT_EQ(r.outbox_entry(c)->state, OutboxState::cancelled);
  EXPECT_EQ(r.outbox_pending(std::nullopt), 0u);
  r.outbox_add(command(1, 1));  // its row is gone: the token is free again
}

TEST_F(SrupC2Registry, RetentionEvictsTheOldestFirst) {
  RegistryLimits l;
  l.data_per_device = 3;
  l.telemetry_per_device = 2;
  l.events_max = 4;
  Registry r(db(), l);
  r.enrol_device(new_device(1), 1, "t");
  r.enrol_device(new_device(2), 1, "t");
  for (int i = 0; i < 5; ++i) r.add_data(1, 100 + i, "v", std::to_string(i));
  r.add_data(2, 100, "v", "other");
  const auto kept = r.data(1, 10);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].value_json, "4");  // newest first
  EXPECT_EQ(kept[2].value_json, "2");
  EXPECT_EQ(r.data(2, 10).size(), 1u);
  std::vector<Reading> batch;
  for (std::uint64_t s = 1; s <= 5; ++s) batch.push_back({1, s, 200 + s, "{}"});
  r.add_readings(batch);
  const auto readings = r.readings(1, 10);
  ASSERT_EQ(readings.size(), 2u);
  EXPECT_EQ(readings[0].seq, 5u);
  EXPECT_EQ(readings[1].seq, 4u);
  for (int i = 0; i < 6; ++i) r.touch(1, 300 + i);  // no events
  r.set_state(1, DeviceState::joined, 400, "t");
  r.set_state(2, DeviceState::joined, 401, "t");
  r.set_state(2, DeviceState::resigned, 402, "t");
  const auto ev = r.events(0, 100);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev.back().action, "state resigned");
  const PruneCounts none = r.prune(1000);
  EXPECT_EQ(none.data + none.readings + none.outbox + none.events, 0u);
}

TEST_F(SrupC2Registry, MonitorsReadOnlyWhatTheyAreAllowed) {
  Registry r(db());
  r.enrol_device(new_device(1), 1, "t");
  r.enrol_device(new_device(2), 1, "t");
  const Monitor m = r.enrol_monitor(pub_pem(0x70), 1, "control");
  EXPECT_EQ(m.username, "mon-0000000000000070");
  EXPECT_THROW(r.enrol_monitor(pub_pem(0x70), 1, "control"), std::invalid_argument);
  r.allow_read(0x70, 1, 2, "control");
  r.allow_read(0x70, 1, 2, "control");  // idempotent
  EXPECT_EQ(r.readable_devices(0x70), std::vector<std::uint64_t>{1});
  EXPECT_EQ(r.readers_of(1), std::vector<std::uint64_t>{0x70});
  EXPECT_TRUE(r.readers_of(2).empty());
  r.set_state(1, DeviceState::joined, 3, "t");
  r.set_state(1, DeviceState::deregistered, 4, "t");  // drops the grant
  EXPECT_TRUE(r.readers_of(1).empty());
  EXPECT_THROW(r.allow_read(0x70, 1, 5, "control"), TransitionError);
  r.allow_read(0x70, 2, 5, "control");
  r.revoke_monitor(0x70, 6, "control");
  EXPECT_TRUE(r.readable_devices(0x70).empty());
  EXPECT_THROW(r.allow_read(0x70, 2, 7, "control"), TransitionError);
  EXPECT_THROW(r.revoke_monitor(0x70, 7, "control"), TransitionError);
  EXPECT_EQ(r.monitor(0x70)->state, MonitorState::revoked);
  EXPECT_EQ(r.list_monitors(0, 10).size(), 1u);
}

TEST_F(SrupC2Registry, ListingPagesInUnsignedIdOrder) {
  Registry r(db());
  const std::uint64_t ids[] = {5, 0x8000000000000001ULL, 3, 0xfffffffffffffffeULL};
  for (std::uint64_t id : ids) r.enrol_device(new_device(id, id == 3 ? "valve" : "meter"), 1, "t");
  std::vector<std::uint64_t> seen;
  DeviceFilter f;
  f.limit = 1;
  for (;;) {
    const auto page = r.list_devices(f);
    if (page.empty()) break;
    seen.push_back(page[0].id);
    f.after_id = page[0].id;
  }
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{3, 5, 0x8000000000000001ULL, 0xfffffffffffffffeULL}));
  DeviceFilter valves;
  valves.type = "valve";
  EXPECT_EQ(r.list_devices(valves).size(), 1u);
  r.set_state(5, DeviceState::joined, 2, "t");
  DeviceFilter joined_only;
  joined_only.state = DeviceState::joined;
  const auto joined = r.list_devices(joined_only);
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(joined[0].id, 5u);
}

TEST_F(SrupC2Registry, BackupIsAConsistentCopyThatRestores) {
  const fs::path copy = tmp_.path() / "backup.db";
  {
    Registry r(db());
    r.enrol_device(new_device(1), 1, "t");
    r.outbox_add(command(1, 1));
    r.backup(copy);
    EXPECT_THROW(r.backup(copy), RegistryError);  // never overwrites
    r.enrol_device(new_device(2), 2, "t");  // after the backup
  }
  // Restore: the copy in place of the registry (the daemon stopped).
  fs::remove(db());
  fs::remove(tmp_.path() / "registry.db-wal");
  fs::remove(tmp_.path() / "registry.db-shm");
  fs::copy_file(copy, db());
  Registry r(db());
  EXPECT_TRUE(r.device(1));
  EXPECT_FALSE(r.device(2));
  EXPECT_EQ(r.outbox_pending(1), 1u);
  EXPECT_EQ((fs::status(copy).permissions() & fs::perms::all), fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(SrupC2Registry, ForeignNewerLockedAndDamagedFilesAreRefused) {
  {
    Registry r(db());
    RegistryLimits quick;
    quick.busy_timeout = std::chrono::milliseconds(50);
    EXPECT_THROW(Registry second(db(), quick), RegistryError);
    r.enrol_device(new_device(1), 1, "t");
  }
  // A stored identity that no longer decodes: the row is an error, never a device.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE devices SET identity = x'00ff'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  {
    Registry r(db());
    EXPECT_THROW(r.device(1), RegistryError);
    EXPECT_THROW(r.list_devices({}), RegistryError);
  }
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 3", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  try {
    Registry r(db());
    ADD_FAILURE();
  } catch (const RegistryError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 3 is newer"), std::string::npos) << e.what();
  }
  const fs::path other = tmp_.path() / "other.db";
  ASSERT_EQ(sqlite3_open(other.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_THROW(Registry r(other), RegistryError);
  const fs::path text = tmp_.path() / "text.db";
  { std::FILE* f = std::fopen(text.c_str(), "w"); std::fputs(std::string(2000, 'x').c_str(), f); std::fclose(f); }
  EXPECT_THROW(Registry r(text), RegistryError);
}

TEST(SrupC2Records, RowChecksRefuseWhatTheRegistryNeverWrites) {
  DeviceRecord row;
  row.id = 0xa1;
  row.username = "dev-00000000000000a1";
  row.type = "meter";
  row.suite = static_cast<std::int64_t>(srup::Suite::ed25519_xwing);
  const std::string pem = pub_pem(0xa1);
  row.identity.assign(pem.begin(), pem.end());
  row.state = "joined";
  row.join_mode = "simple";
  row.enrolled_ms = 1;
  EXPECT_EQ(check_device_record(row, "row").id, 0xa1u);
  auto refused = [](DeviceRecord r) { EXPECT_THROW(check_device_record(r, "row"), RegistryError); };
  DeviceRecord bad = row;
  bad.id = 0xa2;
  bad.username = "dev-00000000000000a2";
  refused(bad);  // the identity is of another ID
  bad = row;
  bad.suite = 1;
  refused(bad);
  bad = row;
  bad.username = "dev-00000000000000A1";
  refused(bad);
  bad = row;
  bad.state = "gone";
  refused(bad);
  bad = row;
  bad.observer = 5;
  refused(bad);
  bad = row;
  bad.cert_serial = "ab";
  refused(bad);  // without notAfter
  bad = row;
  bad.enrolled_ms = -1;
  refused(bad);
  bad = row;
  bad.identity.resize(bad.identity.size() / 2);
  refused(bad);
}

}  // namespace
}  // namespace pqot::srup_c2::registry_test
