// srup seal: one signed or sealed envelope from DIR's identity to a peer (docs/srup-tool.md).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include "cli.hpp"
#include "pqot/common/clock.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/state.hpp"
#include "pqot/srup/status.hpp"
#include "type_fields.hpp"

namespace pqot::srup_tool {

namespace {

struct SealOptions {
  std::string from;
  std::string to;
  std::string topic;
  std::string type;
  std::string mode;
  std::string token_hex;
  std::optional<std::uint64_t> seq;
  std::uint32_t expires_s = 300;
  TypeFields fields;
};

srup::MessageType parse_type(const std::string& name) {
  const auto t = srup::message_type_by_name(name);
  if (!t) throw UsageError("--type: unknown type '" + name + "' (docs/srup-tool.md lists them)");
  const srup::Mode mode = srup::required_mode(*t);
  if (mode != srup::Mode::signed_clear && mode != srup::Mode::sealed) {
    throw UsageError("--type " + name + ": its envelopes need a session or a telemetry key; the "
                     "library and the MQTT applications make them, not this offline tool");
  }
  return *t;
}

void check_mode(const std::string& mode, srup::MessageType type) {
  if (mode.empty()) return;
  const srup::Mode want = srup::required_mode(type);
  const std::string_view want_name = want == srup::Mode::sealed ? "sealed" : "signed";
  if (mode != "signed" && mode != "sealed") throw UsageError("--mode: signed or sealed");
  if (mode != want_name) {
    throw UsageError("--mode " + mode + ": a " + std::string(srup::to_string(type)) + " is always " +
                     std::string(want_name) + " (docs/srup-pq.md section 2.4)");
  }
}

void run_seal(const SealOptions& o) {
  const srup::MessageType type = parse_type(o.type);
  check_mode(o.mode, type);
  if (o.topic.empty()) throw UsageError("--topic: the MQTT topic must not be empty");
  if (o.expires_s == 0 || o.expires_s > srup::kMaxLifetimeMs / 1000) {
    throw UsageError("--expires: 1 to 604800 seconds (7 days)");
  }
  const srup::LoadedIdentity me = [&] {
    try {
      return srup::load_identity(o.from);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--from: ") + e.what());
    }
  }();
  const srup::PublicIdentity peer = [&] {
    try {
      return srup::load_public_identity(o.to);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--to: ") + e.what());
    }
  }();
  if (peer.id == me.self.id) throw UsageError("--to: that is this peer's own identity");
  if (srup::required_mode(type) == srup::Mode::sealed && peer.keys.suite != me.self.suite) {
    throw UsageError("--to: the peer's suite is " + std::string(srup::suite_info(peer.keys.suite).name) +
                     ", this identity's " + std::string(srup::suite_info(me.self.suite).name) +
                     ": a sealed envelope needs both on one suite (docs/srup-pq.md section 3)");
  }

  const srup::Body body = build_body(type, o.fields, me);
  const Bytes plain = srup::encode_body(type, me.self.suite, body);

  srup::Header h;
  h.type = type;
  h.suite = me.self.suite;
  h.mode = srup::required_mode(type);
  h.sender = me.self.id;
  h.recipient = peer.id;
  h.timestamp_ms = common::unix_time_ms();
  h.lifetime_ms = o.expires_s * 1000;
  h.topic = srup::topic_tag(o.topic);
  if (!o.token_hex.empty()) {
    h.token = parse_hex(o.token_hex, "--token");
    if (h.token.size() > srup::kMaxToken) throw UsageError("--token: at most 64 bytes");
  } else {
    h.token = Bytes(16);
    crypto::random_bytes(h.token);
  }
  if (o.seq) {
    if (*o.seq == 0) throw UsageError("--seq: sequence numbers start at 1");
    h.sequence = *o.seq;
  } else {
    // The persisted counter (section 7.1): never reused, also across restarts.
    // One number per run: this process ends after one envelope (section 7.1 allows any block).
    srup::StateStoreOptions options;
    options.counter_block = 1;
    srup::StateStore state(std::filesystem::path(o.from) / "state.db", options);
    h.sequence = state.next_sequence(me.self.id, peer.id);
  }
  const Bytes wire = srup::protect(h, plain, me.self, &peer.keys);
  write_stdout(wire);
  std::cerr << "srup: " << srup::to_string(type) << " " << wire.size() << " bytes, sequence "
            << h.sequence << ", token " << to_hex(h.token) << "\n";
}

}  // namespace

void add_seal_command(CLI::App& app) {
  auto opts = std::make_shared<SealOptions>();
  CLI::App* cmd = app.add_subcommand(
      "seal", "Write one envelope (standard output) from DIR's identity to the peer of PUBFILE");
  cmd->add_option("--from", opts->from, "This peer's directory (identity.key; state.db keeps the counters)")
      ->required();
  cmd->add_option("--to", opts->to, "The recipient's identity.pub")->required();
  cmd->add_option("--topic", opts->topic, "The MQTT topic the envelope is for (bound by its tag)")->required();
  cmd->add_option("--type", opts->type, "Message type: action, data, update-initiate, ...")->required();
  cmd->add_option("--mode", opts->mode, "signed or sealed: must be the type's (docs/srup-pq.md 2.4)");
  cmd->add_option("--seq", opts->seq, "Sequence number (default: the next one of DIR's persisted counter)");
  cmd->add_option("--expires", opts->expires_s, "Lifetime in seconds (default 300, at most 604800)");
  cmd->add_option("--token", opts->token_hex, "Token in hex, up to 64 bytes (default: 16 random bytes)");
  add_type_field_options(*cmd, opts->fields);
  cmd->callback([opts] { run_seal(*opts); });
}

}  // namespace pqot::srup_tool
