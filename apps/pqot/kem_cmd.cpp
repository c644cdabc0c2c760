// `pqot kem keygen | encaps | decaps | kat-draws`: deterministic or random KEM operations for
// operators and interop checks. Output is `name=<hex>` lines on stdout (docs/cli.md).
//
// The comparison contenders (NTRU, Saber; docs/crypto.md) are accepted too, with a warning on
// stderr. Their `--seed` is a 48-byte NIST KAT DRBG seed, from which keygen draws its randomness
// as the scheme's reference implementation does, so that a KAT entry's keys can be reproduced.
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/nist_kat_drbg.hpp"

namespace pqot::app {

namespace {

struct KemOptions {
  std::string alg;
  std::string seed, ek, m, dk, ct;
};

std::string joined(std::span<const std::string_view> names) {
  std::string s;
  for (auto n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

void add_alg_option(CLI::App* cmd, KemOptions& o) {
  cmd->add_option("--alg", o.alg,
                  "KEM: " + joined(crypto::kem_names()) +
                      "; comparison contenders, not standardized: " +
                      joined(crypto::contender_kem_names()))
      ->required();
}

const crypto::Kem& resolve(const KemOptions& o) { return crypto::any_kem_by_name(o.alg); }

// A contender is announced on stderr once the command has succeeded, just before its results, so
// that bad input still gives exactly one line on stderr (docs/cli.md, "Conventions").
void announce(const crypto::Kem& kem) {
  if (kem.contender()) std::cerr << "pqot: " << crypto::contender_warning(kem) << "\n";
}

void keygen(const KemOptions& o) {
  const auto& kem = resolve(o);
  crypto::KemKeyPair kp;
  if (o.seed.empty()) {
    kp = kem.generate_keypair();
  } else if (kem.contender()) {
    crypto::kat::NistDrbg drbg(read_secret_hex_arg(o.seed, "--seed"));
    kp = kem.generate_keypair(crypto::kat::keygen_draws(kem, drbg));
  } else {
    kp = kem.generate_keypair(read_secret_hex_arg(o.seed, "--seed"));
  }
  announce(kem);
  print_hex_field("ek", kp.public_key);
  print_hex_field("dk", kp.secret_key);
}

void encaps(const KemOptions& o) {
  const auto& kem = resolve(o);
  const auto ek = read_hex_arg(o.ek, "--ek");
  const auto enc =
      o.m.empty() ? kem.encapsulate(ek) : kem.encapsulate(ek, read_secret_hex_arg(o.m, "--m"));
  announce(kem);
  print_hex_field("ct", enc.ciphertext);
  print_hex_field("ss", enc.shared_secret);
}

void decaps(const KemOptions& o) {
  const auto& kem = resolve(o);
  const crypto::SecretBytes dk = read_secret_hex_arg(o.dk, "--dk");
  const crypto::SecretBytes ss = kem.decapsulate(dk, read_hex_arg(o.ct, "--ct"));
  announce(kem);
  print_hex_field("ss", ss);
}

// What one NIST KAT entry draws from a DRBG seeded with --seed: keygen's randombytes calls
// (concatenated: ML-KEM's --seed, or what a contender's --seed draws), then encapsulation's.
void kat_draws(const KemOptions& o) {
  const auto& kem = resolve(o);
  crypto::kat::NistDrbg drbg(read_secret_hex_arg(o.seed, "--seed"));
  const crypto::SecretBytes keygen_draws = crypto::kat::keygen_draws(kem, drbg);
  const crypto::SecretBytes m = drbg.draw(kem.encaps_seed_size());
  announce(kem);
  print_hex_field("keygen", keygen_draws);
  print_hex_field("m", m);
}

}  // namespace

void add_kem_commands(CLI::App& app) {
  auto* kem = app.add_subcommand("kem", "Key encapsulation: keygen, encaps, decaps");
  kem->require_subcommand(1);
  auto o = std::make_shared<KemOptions>();

  auto* kg = kem->add_subcommand("keygen", "Generate a key pair; prints ek=<hex> and dk=<hex>");
  add_alg_option(kg, *o);
  kg->add_option("--seed", o->seed,
                 "Deterministic seed, hex or @file: 64 bytes d||z for ML-KEM, 32 bytes for X-Wing, "
                 "a 48-byte NIST KAT DRBG seed for NTRU and Saber (default: from the OS CSPRNG)");
  kg->callback([o] { keygen(*o); });

  auto* en = kem->add_subcommand("encaps", "Encapsulate to ek; prints ct=<hex> and ss=<hex>");
  add_alg_option(en, *o);
  en->add_option("--ek", o->ek, "Encapsulation key, hex or @file")->required();
  en->add_option("--m", o->m,
                 "Deterministic randomness, hex or @file: 32 bytes m for ML-KEM, 64 bytes "
                 "m||ek_X for X-Wing, the bytes of the reference's one randombytes call for NTRU "
                 "and Saber (default: from the OS CSPRNG)");
  en->callback([o] { encaps(*o); });

  auto* de = kem->add_subcommand("decaps", "Decapsulate ct with dk; prints ss=<hex>");
  add_alg_option(de, *o);
  de->add_option("--dk", o->dk, "Decapsulation key, hex or @file")->required();
  de->add_option("--ct", o->ct, "Ciphertext, hex or @file")->required();
  de->callback([o] { decaps(*o); });

  auto* kd = kem->add_subcommand(
      "kat-draws",
      "What a NIST KAT entry draws from its DRBG: prints keygen=<hex> (keygen's randombytes "
      "calls) and m=<hex> (encapsulation's); deterministic, for reproducing known answers only");
  add_alg_option(kd, *o);
  kd->add_option("--seed", o->seed, "The entry's 48-byte DRBG seed, hex or @file")->required();
  kd->callback([o] { kat_draws(*o); });
}

}  // namespace pqot::app
