// srup open: the receive order of docs/srup-pq.md section 6 on one envelope from standard input,
// with the replay window kept in a SQLite state file (docs/srup-tool.md).
#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "pqot/common/clock.hpp"
#include "message_json.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/protect.hpp"
#include "pqot/srup/state.hpp"

namespace pqot::srup_tool {

namespace {

struct OpenOptions {
  std::string as;
  std::string peer;
  std::string topic;
  std::string state;
  bool json = false;
};

void run_open(const OpenOptions& o) {
  const srup::LoadedIdentity me = [&] {
    try {
      return srup::load_identity(o.as);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--as: ") + e.what());
    }
  }();
  const srup::PublicIdentity peer = [&] {
    try {
      return srup::load_public_identity(o.peer);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--peer: ") + e.what());
    }
  }();
  // Opened before the message is read, so that a state file that cannot be used is a usage error,
  // never a refusal of the message.
  std::unique_ptr<srup::StateStore> state;
  try {
    state = std::make_unique<srup::StateStore>(o.state);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--state: ") + e.what());
  }
  const Bytes wire = read_stdin(kMaxStdin);
  const std::uint64_t now = common::unix_time_ms();

  // Steps 1-9: no state is read or written.
  const srup::Opened opened = srup::open_protected(
      wire, o.topic, now, me.self,
      [&](std::uint64_t sender) { return sender == peer.id ? &peer.keys : nullptr; });
  // Step 6 for a Checkpoint (recipient 0): only a telemetry reader holding the device's key may
  // take one (TelemetryReader); this tool is none.
  if (opened.header.type == srup::MessageType::checkpoint) {
    throw srup::Refused(srup::Refusal::wrong_recipient, "a Checkpoint is for the device's telemetry readers");
  }
  // Step 10: the window of (sender, recipient), committed before anything is printed.
  if (!state->accept({opened.header.sender, opened.header.recipient}, opened.header.sequence)) {
    throw srup::Refused(srup::Refusal::replay,
                        "sequence " + std::to_string(opened.header.sequence) + " was seen already");
  }
  // Step 11.
  const srup::Body body = srup::decode_body(opened.header.type, opened.header.suite, opened.body);
  nlohmann::ordered_json j = header_json(opened.header);
  j["body"] = body_json(body);
  print_message(j, o.json);
}

}  // namespace

void add_open_command(CLI::App& app) {
  auto opts = std::make_shared<OpenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "open", "Check, decrypt and print one envelope (standard input) for DIR's identity; exit 4 if refused");
  cmd->add_option("--as", opts->as, "This peer's directory (identity.key)")->required();
  cmd->add_option("--peer", opts->peer, "The sender's identity.pub (the enrolled peer)")->required();
  cmd->add_option("--topic", opts->topic, "The MQTT topic the envelope arrived on")->required();
  cmd->add_option("--state", opts->state, "SQLite state file of the replay windows (created if missing)")
      ->required();
  cmd->add_flag("--json", opts->json, "Print one JSON object");
  cmd->callback([opts] { run_open(*opts); });
}

}  // namespace pqot::srup_tool
