// The `srup` tool from the outside (docs/srup-tool.md): identities, sealing and opening with the
// replay state kept across processes, every refusal reason `open` can meet with exit code 4 and
// one line, state untouched by a refusal, inspection, the original SRUP's envelopes, and the
// usage-error convention (exit 2, one line).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/child_process.hpp"
#include "../support/cli_fields.hpp"
#include "../support/temp_dir.hpp"
#include "../support/usage_error.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/protect.hpp"

namespace {

using pqot::test::cli_fields;
using pqot::test::ProcessResult;
using pqot::test::run_process;

const std::string kTopic = "srup/d/00000000000000a1/cmd";

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `srup ARGS [< in] [> out]`, through sh for the redirections.
ProcessResult srup(const std::vector<std::string>& args, const std::string& in = "",
                   const std::string& out = "") {
  std::string cmd = quoted(SRUP_BIN);
  for (const auto& a : args) cmd += " " + quoted(a);
  if (!in.empty()) cmd += " < " + quoted(in);
  if (!out.empty()) cmd += " > " + quoted(out);
  return run_process("/bin/sh", {"-c", cmd});
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

void expect_usage(const ProcessResult& r, const std::string& mentions) {
  pqot::test::expect_usage_error(r, mentions, "srup");
}

void expect_refused(const ProcessResult& r, const std::string& reason) {
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("srup: refused: " + reason + ": ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

class SrupCli : public ::testing::Test {
 protected:
  pqot::test::TempDir tmp{"srup-cli"};
  std::string at(const std::string& name) const { return (tmp.path() / name).string(); }

  void keygen(const std::string& dir, const std::string& id, const std::string& suite = "") {
    std::vector<std::string> args = {"keygen", "--id", id, "--out", at(dir)};
    if (!suite.empty()) args.insert(args.end(), {"--suite", suite});
    const auto r = srup(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // The C2 (c2) sends an action to the device (dev); both ML-DSA-65/ML-KEM-768 unless said.
  std::string seal_action(const std::string& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"seal", "--from", at("c2"), "--to", at("dev/identity.pub"),
                                     "--topic", kTopic, "--type", "action", "--action", "7"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = srup(args, "", at(out));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return at(out);
  }
  ProcessResult open_as(const std::string& dir, const std::string& peer, const std::string& msg,
                        const std::string& topic = kTopic, bool json = true) {
    std::vector<std::string> args = {"open", "--as", at(dir), "--peer", at(peer), "--topic", topic,
                                     "--state", at(dir + "/state.db")};
    if (json) args.push_back("--json");
    return srup(args, msg);
  }
};

TEST_F(SrupCli, KeygenWritesBothFilesOnceAndPicksTheSuite) {
  const auto r = srup({"keygen", "--id", "00000000000000c2", "--out", at("c2")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto f = cli_fields(r.out);
  EXPECT_EQ(f["id"], "00000000000000c2");
  EXPECT_EQ(f["suite"], "ML-DSA-65/ML-KEM-768");
  struct stat key {};
  ASSERT_EQ(::stat(at("c2/identity.key").c_str(), &key), 0);
  EXPECT_EQ(key.st_mode & 0777, 0600u);
  const std::string before = read_file(at("c2/identity.key"));

  expect_usage(srup({"keygen", "--id", "00000000000000c3", "--out", at("c2")}), "File exists");
  EXPECT_EQ(read_file(at("c2/identity.key")), before);

  const auto ed = srup({"keygen", "--id", "00000000000000a1", "--out", at("ed"), "--sig", "Ed25519"});
  ASSERT_EQ(ed.exit_code, 0) << ed.err;
  EXPECT_EQ(cli_fields(ed.out)["suite"], "Ed25519/X-Wing");
  const auto big = srup({"keygen", "--id", "00000000000000a2", "--out", at("big"), "--kem", "ML-KEM-1024"});
  ASSERT_EQ(big.exit_code, 0) << big.err;
  EXPECT_EQ(cli_fields(big.out)["suite"], "ML-DSA-65/ML-KEM-1024");

  expect_usage(srup({"keygen", "--id", "c2", "--out", at("x")}), "16 hex digits");
  expect_usage(srup({"keygen", "--id", "0000000000000000", "--out", at("x")}), "reserved");
  expect_usage(srup({"keygen", "--id", "00000000000000zz", "--out", at("x")}), "hex digit");
  expect_usage(srup({"keygen", "--id", "00000000000000c4", "--out", at("x"), "--suite", "RSA-2048"}),
               "unknown suite");
  expect_usage(srup({"keygen", "--id", "00000000000000c4", "--out", at("x"), "--sig", "Ed25519",
                     "--kem", "ML-KEM-768"}),
               "no suite pairs");
  expect_usage(srup({"keygen", "--out", at("x")}), "--id");

  // A relative directory, created private; its parents as the umask says.
  const auto rel = run_process("/bin/sh", {"-c", "cd " + quoted(tmp.path().string()) + " && " + quoted(SRUP_BIN) +
                                                     " keygen --id 00000000000000a9 --out rel/dev"});
  ASSERT_EQ(rel.exit_code, 0) << rel.err;
  struct stat dir {};
  ASSERT_EQ(::stat(at("rel/dev").c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 0777, 0700u);
  const auto flat = run_process("/bin/sh", {"-c", "cd " + quoted(tmp.path().string()) + " && " + quoted(SRUP_BIN) +
                                                      " keygen --id 00000000000000aa --out flat"});
  EXPECT_EQ(flat.exit_code, 0) << flat.err;
}

TEST_F(SrupCli, SealedActionOpensOnceAcrossProcesses) {
  keygen("c2", "00000000000000c2");
  keygen("dev", "00000000000000a1");
  const std::string msg = seal_action("cmd.bin", {"--arg", "2.5", "--arg-type", "float32", "--token", "746f6b"});
  const auto r = open_as("dev", "c2/identity.pub", msg);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["type"], "action");
  EXPECT_EQ(j["mode"], "sealed");
  EXPECT_EQ(j["sender"], "00000000000000c2");
  EXPECT_EQ(j["recipient"], "00000000000000a1");
  EXPECT_EQ(j["sequence"], 1);
  EXPECT_EQ(j["token_hex"], "746f6b");
  EXPECT_EQ(j["body"]["action"], 7);
  EXPECT_EQ(j["body"]["argument"]["type"], "float32");
  EXPECT_EQ(j["body"]["argument"]["value"], "2.5");

  // The same envelope again, in a new process: the window in dev/state.db refuses it.
  expect_refused(open_as("dev", "c2/identity.pub", msg), "REPLAY");
  // The text form: key=value lines, nested keys joined by dots.
  const std::string second = seal_action("cmd2.bin");
  const auto t = open_as("dev", "c2/identity.pub", second, kTopic, false);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(cli_fields(t.out)["body.action"], "7");
  EXPECT_EQ(cli_fields(t.out)["sequence"], "2");  // the C2's persisted counter went on
}

// A peer's text cannot add lines to the key=value output or reach the terminal raw.
TEST_F(SrupCli, PeerTextIsPrintedEscaped) {
  keygen("c2", "00000000000000c2");
  keygen("dev", "00000000000000a1");
  const auto r = srup({"seal", "--from", at("c2"), "--to", at("dev/identity.pub"), "--topic", kTopic,
                       "--type", "data", "--data-id", "temp\nsequence=999", "--value", "a\x1b[2Jb\\"},
                      "", at("data.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto t = open_as("dev", "c2/identity.pub", at("data.bin"), kTopic, false);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  auto f = cli_fields(t.out);
  EXPECT_EQ(f["sequence"], "1");
  EXPECT_EQ(f["body.data_id"], "temp\\x0asequence=999");
  EXPECT_EQ(f["body.value.value"], "a\\x1b[2Jb\\x5c");
  EXPECT_EQ(t.out.find('\x1b'), std::string::npos);
}

TEST_F(SrupCli, EveryRefusalExitsFourAndLeavesTheStateAlone) {
  keygen("c2", "00000000000000c2");
  keygen("dev", "00000000000000a1");
  keygen("dev2", "00000000000000a2");
  keygen("stranger", "00000000000000e5");
  keygen("c2-ed", "00000000000000c2", "Ed25519/X-Wing");  // same ID, another suite
  keygen("dev-old", "00000000000000a1");                  // same ID, other keys
  const std::string msg = seal_action("cmd.bin");

  write_file(at("garbage.bin"), "not an envelope at all");
  expect_refused(open_as("dev", "c2/identity.pub", at("garbage.bin")), "MALFORMED");
  expect_refused(open_as("dev", "stranger/identity.pub", msg), "UNKNOWN_SENDER");
  expect_refused(open_as("dev", "c2-ed/identity.pub", msg), "UNSUPPORTED_SUITE");
  std::string forged = read_file(msg);
  forged.back() = static_cast<char>(forged.back() ^ 0x01);
  write_file(at("forged.bin"), forged);
  expect_refused(open_as("dev", "c2/identity.pub", at("forged.bin")), "BAD_SIGNATURE");
  expect_refused(open_as("dev2", "c2/identity.pub", msg), "WRONG_RECIPIENT");
  expect_refused(open_as("dev", "c2/identity.pub", msg, "srup/d/00000000000000a2/cmd"), "WRONG_TOPIC");
  // Sealed to the device's old KEM key: signed correctly, addressed correctly, unreadable.
  const auto old = srup({"seal", "--from", at("c2"), "--to", at("dev-old/identity.pub"), "--topic",
                         kTopic, "--type", "action", "--action", "7"},
                        "", at("old.bin"));
  ASSERT_EQ(old.exit_code, 0) << old.err;
  expect_refused(open_as("dev", "c2/identity.pub", at("old.bin")), "DECRYPT_FAILED");
  const std::string brief = seal_action("brief.bin", {"--expires", "1"});
  ::usleep(1'200'000);  // the envelope's one-second lifetime passes
  expect_refused(open_as("dev", "c2/identity.pub", brief), "EXPIRED");

  // None of these touched the window: the genuine envelope is still accepted, once.
  const auto ok = open_as("dev", "c2/identity.pub", msg);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  expect_refused(open_as("dev", "c2/identity.pub", msg), "REPLAY");
}

// Step 11: an authenticated envelope whose body is not valid for its type. The tool cannot make
// one, so the C2's own identity file signs it through the library. Its sequence is recorded
// (step 10 came first): a retry is a replay.
TEST_F(SrupCli, AuthenticatedButInvalidBodyIsBadRequest) {
  keygen("c2", "00000000000000c2");
  keygen("dev", "00000000000000a1");
  const pqot::srup::LoadedIdentity c2 = pqot::srup::load_identity(at("c2"));
  const pqot::srup::PublicIdentity dev = pqot::srup::load_public_identity(at("dev/identity.pub"));
  pqot::srup::Header h;
  h.type = pqot::srup::MessageType::data;
  h.mode = pqot::srup::Mode::sealed;
  h.suite = c2.self.suite;
  h.sender = c2.self.id;
  h.recipient = dev.id;
  h.sequence = 5;
  h.timestamp_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  std::chrono::system_clock::now().time_since_epoch())
                                                  .count());
  h.lifetime_ms = 60'000;
  h.topic = pqot::srup::topic_tag(kTopic);
  const pqot::crypto::Bytes empty_data_id = {0x00, 0x00};  // a Data ID of length 0, no value
  const pqot::crypto::Bytes wire = pqot::srup::protect(h, empty_data_id, c2.self, &dev.keys);
  write_file(at("bad.bin"), std::string(wire.begin(), wire.end()));
  expect_refused(open_as("dev", "c2/identity.pub", at("bad.bin")), "BAD_REQUEST");
  expect_refused(open_as("dev", "c2/identity.pub", at("bad.bin")), "REPLAY");
}

TEST_F(SrupCli, SignedJoinRequestAndInspect) {
  keygen("c2", "00000000000000c2", "Ed25519/X-Wing");
  keygen("dev", "00000000000000a1", "Ed25519/X-Wing");
  const auto r = srup({"seal", "--from", at("dev"), "--to", at("c2/identity.pub"), "--topic",
                       "srup/c2/00000000000000c2/join", "--type", "join-request"},
                      "", at("join.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto i = srup({"inspect", "--json"}, at("join.bin"));
  ASSERT_EQ(i.exit_code, 0) << i.err;
  const auto j = nlohmann::json::parse(i.out);
  EXPECT_EQ(j["verified"], false);
  EXPECT_EQ(j["mode"], "signed");
  EXPECT_EQ(j["signature_bytes"], 64);
  EXPECT_EQ(j["body"]["keys"]["signature_public"]["bytes"], 32);
  EXPECT_EQ(j["body"]["keys"]["kem_public"]["bytes"], 1216);

  const auto opened = srup({"open", "--as", at("c2"), "--peer", at("dev/identity.pub"), "--topic",
                            "srup/c2/00000000000000c2/join", "--state", at("c2.db"), "--json"},
                           at("join.bin"));
  ASSERT_EQ(opened.exit_code, 0) << opened.err;
  EXPECT_EQ(nlohmann::json::parse(opened.out)["type"], "join-request");

  write_file(at("short.bin"), read_file(at("join.bin")).substr(0, 60));
  expect_refused(srup({"inspect"}, at("short.bin")), "MALFORMED");
}

TEST_F(SrupCli, SealRefusesWhatNoReceiverWouldAccept) {
  keygen("c2", "00000000000000c2");
  keygen("dev", "00000000000000a1");
  keygen("ed", "00000000000000a2", "Ed25519/X-Wing");
  const std::vector<std::string> base = {"seal", "--from", at("c2"), "--to", at("dev/identity.pub"),
                                         "--topic", kTopic};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return srup(a);
  };
  expect_usage(with({"--type", "action"}), "needs --action");
  expect_usage(with({"--type", "action", "--action", "256"}), "0 to 255");
  expect_usage(with({"--type", "action", "--action", "1", "--url", "http://x"}), "--url is not a field of action");
  expect_usage(with({"--type", "action", "--action", "1", "--mode", "signed"}), "always sealed");
  expect_usage(with({"--type", "telemetry"}), "session or a telemetry key");
  expect_usage(with({"--type", "no-such-type"}), "unknown type");
  expect_usage(with({"--type", "action", "--action", "1", "--seq", "0"}), "start at 1");
  expect_usage(with({"--type", "action", "--action", "1", "--arg", "x", "--arg-type", "int8"}), "--arg");
  expect_usage(with({"--type", "update-initiate", "--url", "http://x", "--digest", "00"}), "64 hex digits");
  expect_usage(with({"--type", "action", "--action", "1", "--expires", "0"}), "--expires");
  expect_usage(srup({"seal", "--from", at("c2"), "--to", at("ed/identity.pub"), "--topic", kTopic,
                     "--type", "action", "--action", "1"}),
               "one suite");
  expect_usage(srup({"seal", "--from", at("nowhere"), "--to", at("dev/identity.pub"), "--topic",
                     kTopic, "--type", "action", "--action", "1"}),
               "--from");
}

TEST_F(SrupCli, TheOriginalsEnvelopesVerifyAndAFlippedByteDoesNot) {
  const std::string dir = std::string(PQOT_TEST_DATA_DIR) + "/srup-original/";
  for (const char* name : {"action.bin", "data.bin", "response.bin", "initiate.bin"}) {
    SCOPED_TRACE(name);
    const auto r = srup({"legacy-verify", "--pub", dir + "c2.pub", "--json"}, dir + name);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["signature"], "valid");
    EXPECT_NE(r.err.find("warning: original SRUP"), std::string::npos) << r.err;
    std::string flipped = read_file(dir + name);
    flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x10);
    write_file(at("flipped.bin"), flipped);
    const auto bad = srup({"legacy-verify", "--pub", dir + "c2.pub"}, at("flipped.bin"));
    EXPECT_EQ(bad.exit_code, 4) << bad.err;
    EXPECT_EQ(bad.out, "");
  }
  // Another RSA-2048 key: the signature is not its.
  const auto kg = run_process(PQOT_BIN, {"sig", "keygen", "--alg", "RSA-2048-PKCS1", "--out-dir", at("")});
  ASSERT_EQ(kg.exit_code, 0) << kg.err;
  const auto other = srup({"legacy-verify", "--pub", at("public.pem")}, dir + "action.bin");
  EXPECT_EQ(other.exit_code, 4);
  EXPECT_NE(other.err.find("srup: refused: BAD_SIGNATURE: "), std::string::npos) << other.err;
  expect_usage(srup({"legacy-verify", "--pub", at("missing.pem")}, dir + "action.bin"), "--pub");
}

// bench-mqtt through its own broker: every contender answered, plain MQTT on both transports,
// sizes as the envelopes make them, a round trip never shorter than its one-way part, and a
// telemetry reading that costs exactly the mode-3 envelope's fields more than the same reading
// plain (docs/srup-tool.md, "bench-mqtt"; docs/srup-pq.md 2.1-2.2: 55 + 4 + 16 bytes).
TEST_F(SrupCli, BenchMqttAnswersEveryExchangeOfEveryContender) {
  const auto r = srup({"bench-mqtt", "--count", "10", "--rounds", "1", "--warmup", "0", "--tmpfs-dir", at(""),
                       "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& rows = j["results"];
  ASSERT_EQ(rows.size(), 12u) << r.out;
  EXPECT_EQ(rows[0]["contender"], "MQTT, no TLS");
  EXPECT_EQ(rows[0]["transport"], "plain");
  EXPECT_EQ(rows[1]["contender"], "MQTT over TLS");
  EXPECT_EQ(rows[1]["transport"], "tls");
  for (std::size_t i : {0u, 1u}) {
    EXPECT_EQ(rows[i]["message_bytes"], 1) << i;
    EXPECT_EQ(rows[i]["answer_bytes"], 1) << i;
  }
  for (const auto& row : rows) {
    SCOPED_TRACE(row.dump());
    EXPECT_EQ(row["lost"], 0);
    EXPECT_GT(row["one_way"]["p50"]["median"].get<double>(), 0);
    EXPECT_GE(row["payload_bytes_per_exchange"]["median"].get<double>(), row["message_bytes"].get<double>());
    if (row["flow"] == "command") {
      EXPECT_GE(row["round_trip"]["p50"]["median"].get<double>(), row["one_way"]["p50"]["median"].get<double>());
    } else {
      EXPECT_FALSE(row.contains("round_trip"));
    }
  }
  for (std::size_t i = 2; i < 8; ++i) EXPECT_GT(rows[i]["message_bytes"].get<int>(), 1000) << i;  // SRUP-PQ
  EXPECT_EQ(rows[8]["contender"], "SRUP original, RSA-2048");
  EXPECT_EQ(rows[9]["contender"], "telemetry, MQTT, no TLS");
  EXPECT_EQ(rows[10]["contender"], "telemetry, MQTT over TLS");
  EXPECT_EQ(rows[11]["contender"], "telemetry, SRUP-PQ mode 3");
  EXPECT_EQ(rows[9]["flow"], "telemetry");
  EXPECT_EQ(rows[10]["message_bytes"], rows[9]["message_bytes"]);
  EXPECT_EQ(rows[11]["added_message_bytes"].get<double>(), 75.0);
  EXPECT_EQ(rows[11]["message_bytes"].get<int>() - rows[9]["message_bytes"].get<int>(), 75);
  expect_usage(srup({"bench-mqtt", "--tmpfs-dir", at("missing")}), "--tmpfs-dir");
}

}  // namespace
