// `pqot sig keygen | sign | verify`: signatures for operators and interop checks (docs/cli.md).
// Output is `name=<hex>` lines on stdout; `verify` prints `valid` (exit 0) or `invalid` (exit 1).
#include <iostream>
#include <memory>

#include "cli_common.hpp"
#include "key_args.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::app {

namespace {

struct SigOptions {
  std::string alg;
  std::string seed, out_dir;
  std::string sk, pk, msg, ctx, sig, rnd;
  bool deterministic = false;
};

std::string known_algs() {
  std::string s;
  for (auto n : crypto::signature_names()) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

const crypto::Signature& algorithm(const SigOptions& o) {
  return crypto::signature_by_name(o.alg);
}

// The context, refused here (not deep in the library) when the scheme takes none, so that the
// message names the option.
crypto::Bytes context(const crypto::Signature& alg, const SigOptions& o) {
  if (o.ctx.empty()) return {};
  crypto::Bytes ctx = read_hex_arg(o.ctx, "--ctx");
  if (ctx.size() > alg.max_context_size()) {
    throw UsageError("--ctx: " + std::string(alg.name()) +
                     (alg.max_context_size() == 0
                          ? " takes no context"
                          : " takes at most " + std::to_string(alg.max_context_size()) +
                                " bytes of context, got " + std::to_string(ctx.size())));
  }
  return ctx;
}

void keygen(const SigOptions& o) {
  const auto& alg = algorithm(o);
  crypto::SignatureKeyPair kp;
  crypto::SecretBytes seed;
  if (!o.seed.empty()) {
    if (alg.seed_size() == 0) {
      throw UsageError("--seed: " + std::string(alg.name()) +
                       " keys cannot be derived from a seed");
    }
    seed = read_secret_hex_arg(o.seed, "--seed");
    kp = alg.keygen(seed);
  } else if (alg.seed_size() > 0) {
    seed.resize(alg.seed_size());  // kept for the private-key file, which holds the seed
    crypto::random_secret_bytes(seed);
    kp = alg.keygen(seed);
  } else {
    kp = alg.keygen();
  }
  if (!o.out_dir.empty()) {
    const auto files = write_key_files(o.out_dir, alg, kp, seed);
    std::cout << "public_key_file=" << files.public_key << '\n'
              << "private_key_file=" << files.private_key << '\n';
    return;
  }
  print_hex_field("pk", kp.public_key);
  print_hex_field("sk", kp.secret_key);
}

void sign(const SigOptions& o) {
  const auto& alg = algorithm(o);
  const crypto::Bytes ctx = context(alg, o);
  const crypto::SecretBytes sk = read_secret_key_arg(alg, o.sk, "--sk");
  const crypto::Bytes msg = read_hex_arg(o.msg, "--msg");
  crypto::Bytes sig;
  if (!o.rnd.empty()) {
    if (alg.rnd_size() == 0) {
      throw UsageError("--rnd: " + std::string(alg.name()) + " takes no signing randomness");
    }
    sig = alg.sign(sk, msg, ctx, read_secret_hex_arg(o.rnd, "--rnd"));
  } else if (o.deterministic) {
    if (!alg.has_deterministic_signing()) {
      throw UsageError("--deterministic: " + std::string(alg.name()) +
                       " has no deterministic signing");
    }
    sig = alg.sign_deterministic(sk, msg, ctx);
  } else {
    sig = alg.sign(sk, msg, ctx);
  }
  print_hex_field("sig", sig);
}

// Exit status 0 (valid) or 1 (invalid) through the return value; errors throw.
int verify(const SigOptions& o) {
  const auto& alg = algorithm(o);
  const crypto::Bytes ctx = context(alg, o);
  const crypto::Bytes pk = read_public_key_arg(alg, o.pk, "--pk");
  alg.check_public_key(pk);
  const bool ok = alg.verify(pk, read_hex_arg(o.msg, "--msg"), ctx, read_hex_arg(o.sig, "--sig"));
  std::cout << (ok ? "valid" : "invalid") << '\n';
  return ok ? 0 : 1;
}

void add_alg_option(CLI::App* cmd, SigOptions& o) {
  cmd->add_option("--alg", o.alg, "Signature algorithm: " + known_algs())->required();
}

}  // namespace

void add_sig_commands(CLI::App& app) {
  auto* sig = app.add_subcommand("sig", "Signatures: keygen, sign, verify");
  sig->require_subcommand(1);
  auto o = std::make_shared<SigOptions>();

  auto* kg = sig->add_subcommand(
      "keygen",
      "Generate a key pair; prints pk=<hex> sk=<hex>, or writes PEM files with --out-dir");
  add_alg_option(kg, *o);
  kg->add_option("--seed", o->seed,
                 "Deterministic seed, hex or @file: xi (32 bytes) for ML-DSA, the private key (32) "
                 "for Ed25519, xi || Ed25519 key (64) for ML-DSA-65+Ed25519; not for RSA "
                 "(default: from the OS CSPRNG)");
  kg->add_option("--out-dir", o->out_dir,
                 "Write public.pem (SPKI) and private.pem (PKCS#8, mode 0600) into this "
                 "directory instead of printing the secret key; existing files are not replaced");
  kg->callback([o] { keygen(*o); });

  auto* sg = sig->add_subcommand("sign", "Sign a message; prints sig=<hex>");
  add_alg_option(sg, *o);
  sg->add_option("--sk", o->sk, "Secret key: hex, @file of hex, or @file of a PEM private key")
      ->required();
  sg->add_option("--msg", o->msg, "Message, hex or @file")->required();
  sg->add_option("--ctx", o->ctx, "Context, hex (ML-DSA and the hybrid: at most 255 bytes)");
  auto* det = sg->add_flag("--deterministic", o->deterministic,
                           "Deterministic signing (ML-DSA: rnd = 0^32)");
  sg->add_option("--rnd", o->rnd, "Explicit signing randomness, hex (ML-DSA: 32 bytes)")
      ->excludes(det);
  sg->callback([o] { sign(*o); });

  auto* vf = sig->add_subcommand("verify",
                                 "Verify a signature; prints valid (exit 0) or invalid (exit 1)");
  add_alg_option(vf, *o);
  vf->add_option("--pk", o->pk, "Public key: hex, @file of hex, or @file of a PEM public key")
      ->required();
  vf->add_option("--msg", o->msg, "Message, hex or @file")->required();
  vf->add_option("--sig", o->sig, "Signature, hex or @file")->required();
  vf->add_option("--ctx", o->ctx, "Context, hex");
  vf->callback([o] {
    if (verify(*o) != 0) throw VerifyFailed();
  });
}

}  // namespace pqot::app
