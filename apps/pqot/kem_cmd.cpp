// `pqot kem keygen | encaps | decaps`: deterministic or random KEM operations for operators and
// interop checks. Output is `name=<hex>` lines on stdout (docs/cli.md).
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "pqot/crypto/kem.hpp"

namespace pqot::app {

namespace {

struct KemOptions {
  std::string alg;
  std::string seed, ek, m, dk, ct;
};

std::string known_kems() {
  std::string s;
  for (auto n : crypto::kem_names()) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

void add_alg_option(CLI::App* cmd, KemOptions& o) {
  cmd->add_option("--alg", o.alg, "KEM: " + known_kems())->required();
}

void keygen(const KemOptions& o) {
  const auto& kem = crypto::kem_by_name(o.alg);
  crypto::KemKeyPair kp;
  if (o.seed.empty()) {
    kp = kem.generate_keypair();
  } else {
    kp = kem.generate_keypair(read_secret_hex_arg(o.seed, "--seed"));
  }
  print_hex_field("ek", kp.public_key);
  print_hex_field("dk", kp.secret_key);
}

void encaps(const KemOptions& o) {
  const auto& kem = crypto::kem_by_name(o.alg);
  const auto ek = read_hex_arg(o.ek, "--ek");
  const auto enc =
      o.m.empty() ? kem.encapsulate(ek) : kem.encapsulate(ek, read_hex_arg(o.m, "--m"));
  print_hex_field("ct", enc.ciphertext);
  print_hex_field("ss", enc.shared_secret);
}

void decaps(const KemOptions& o) {
  const auto& kem = crypto::kem_by_name(o.alg);
  const crypto::SecretBytes dk = read_secret_hex_arg(o.dk, "--dk");
  print_hex_field("ss", kem.decapsulate(dk, read_hex_arg(o.ct, "--ct")));
}

}  // namespace

void add_kem_commands(CLI::App& app) {
  auto* kem = app.add_subcommand("kem", "Key encapsulation: keygen, encaps, decaps");
  kem->require_subcommand(1);
  auto o = std::make_shared<KemOptions>();

  auto* kg = kem->add_subcommand("keygen", "Generate a key pair; prints ek=<hex> and dk=<hex>");
  add_alg_option(kg, *o);
  kg->add_option("--seed", o->seed,
                 "Deterministic seed, hex or @file: 64 bytes d||z for ML-KEM, 32 bytes for X-Wing "
                 "(default: from the OS CSPRNG)");
  kg->callback([o] { keygen(*o); });

  auto* en = kem->add_subcommand("encaps", "Encapsulate to ek; prints ct=<hex> and ss=<hex>");
  add_alg_option(en, *o);
  en->add_option("--ek", o->ek, "Encapsulation key, hex or @file")->required();
  en->add_option("--m", o->m,
                 "Deterministic randomness, hex or @file: 32 bytes m for ML-KEM, 64 bytes "
                 "m||ek_X for X-Wing (default: from the OS CSPRNG)");
  en->callback([o] { encaps(*o); });

  auto* de = kem->add_subcommand("decaps", "Decapsulate ct with dk; prints ss=<hex>");
  add_alg_option(de, *o);
  de->add_option("--dk", o->dk, "Decapsulation key, hex or @file")->required();
  de->add_option("--ct", o->ct, "Ciphertext, hex or @file")->required();
  de->callback([o] { decaps(*o); });
}

}  // namespace pqot::app
