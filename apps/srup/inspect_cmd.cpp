// srup inspect: an envelope's fields without verifying anything, for debugging (docs/srup-tool.md).
#include <iostream>

#include "cli.hpp"
#include "message_json.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/envelope.hpp"

namespace pqot::srup_tool {

namespace {

void run_inspect(bool json) {
  const Bytes wire = read_stdin(kMaxStdin);
  const srup::EnvelopeView v = srup::parse_envelope(wire);
  nlohmann::ordered_json j = header_json(v.header);
  j["verified"] = false;
  j["bytes"] = wire.size();
  j["header_bytes"] = v.header_bytes.size();
  if (v.header.mode == srup::Mode::session || v.header.mode == srup::Mode::telemetry_group) {
    j["epoch"] = v.epoch;
  }
  if (!v.kem_ciphertext.empty()) j["kem_ciphertext_bytes"] = v.kem_ciphertext.size();
  if (!v.signature.empty()) j["signature_bytes"] = v.signature.size();
  j["body_bytes"] = v.body.size();
  if (v.header.mode == srup::Mode::signed_clear) {
    // A clear body can be shown; whether it is genuine is what `srup open` finds out.
    try {
      j["body"] = body_json(srup::decode_body(v.header.type, v.header.suite, v.body));
    } catch (const srup::Refused& e) {
      j["body_error"] = e.what();
    }
  }
  print_message(j, json);
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Decode an envelope (standard input) without verifying it: header, sizes, a clear body");
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->callback([json] { run_inspect(*json); });
}

}  // namespace pqot::srup_tool
