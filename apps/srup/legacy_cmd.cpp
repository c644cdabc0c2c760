// srup legacy-verify: an original SRUP version-5 envelope checked against its sender's RSA-2048
// public key (docs/srup-legacy.md, docs/srup-tool.md).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "pqot/srup/topics.hpp"
#include "pqot/common/files.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/key_file.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/legacy.hpp"
#include "pqot/srup/refusal.hpp"

namespace pqot::srup_tool {

namespace {

struct LegacyOptions {
  std::string pub;
  bool json = false;
};

crypto::Bytes read_rsa_key(const std::string& path) {
  crypto::Bytes text;
  try {
    text = common::read_bounded_file<crypto::Bytes>(path, crypto::kMaxKeyFileSize);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--pub: ") + e.what());
  }
  try {
    return crypto::decode_public_key(text, &crypto::signature_by_name(srup::legacy::kSuiteName)).public_key;
  } catch (const crypto::Error& e) {
    throw UsageError("--pub: " + path + ": " + e.what());
  }
}

void run_legacy_verify(const LegacyOptions& o) {
  const crypto::Bytes key = read_rsa_key(o.pub);
  const crypto::Bytes wire = read_stdin(kMaxStdin);
  std::cerr << "srup: warning: " << srup::legacy::kLegacyWarning << "\n";
  const srup::legacy::LegacyEnvelope env = srup::legacy::decode(wire);
  if (!srup::legacy::verify(env, key)) {
    throw srup::Refused(srup::Refusal::bad_signature, "the RSA-2048 signature does not verify under --pub");
  }
  const std::string type(srup::legacy::type_name(env.type));
  if (o.json) {
    nlohmann::ordered_json j;
    j["version"] = srup::legacy::kVersion;
    j["type"] = type;
    j["type_code"] = env.type;
    j["sequence"] = env.sequence;
    j["sender"] = srup::id_text(env.sender);
    j["token_hex"] = to_hex(env.token);
    j["signature"] = "valid";
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "type=" << type << "\n"
              << "sequence=" << env.sequence << "\n"
              << "sender=" << srup::id_text(env.sender) << "\n"
              << "token=" << to_hex(env.token) << "\n"
              << "signature=valid\n";
  }
}

}  // namespace

void add_legacy_verify_command(CLI::App& app) {
  auto opts = std::make_shared<LegacyOptions>();
  CLI::App* cmd = app.add_subcommand(
      "legacy-verify", "Verify an original SRUP version-5 envelope (standard input) under its sender's RSA-2048 key");
  cmd->add_option("--pub", opts->pub, "The sender's RSA-2048 public key (PEM or DER)")->required();
  cmd->add_flag("--json", opts->json, "Print one JSON object");
  cmd->callback([opts] { run_legacy_verify(*opts); });
}

}  // namespace pqot::srup_tool
