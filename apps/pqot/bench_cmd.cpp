// `pqot bench crypto`: microseconds per operation of every KEM and of the symmetric primitives,
// as medians over several timed rounds, with the machine printed alongside (docs/cli.md).
//
// --alg takes one KEM or a comma-separated list, the comparison contenders (NTRU, Saber) included,
// so that they are measured beside ML-KEM in one run. With --alg ALG --iterations N it runs exactly
// N keygen+encaps+decaps exchanges of ALG, each
// operation in its own non-inlined function, so that instruction counts can be taken with
//   valgrind --tool=callgrind --toggle-collect='*bench_op_*' pqot bench crypto --alg A --iterations
//   N
#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "bench_common.hpp"
#include "cli_common.hpp"
#include <iostream>

#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/hkdf.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"

namespace pqot::app {

namespace {

using Clock = std::chrono::steady_clock;

using bench::Options;
using bench::Row;

// The operations measured, each kept out of line so callgrind can attribute them.
[[gnu::noinline]] crypto::KemKeyPair bench_op_keygen(const crypto::Kem& kem) {
  return kem.generate_keypair();
}
[[gnu::noinline]] crypto::KemEncapsulation bench_op_encaps(const crypto::Kem& kem,
                                                           const crypto::Bytes& ek) {
  return kem.encapsulate(ek);
}
[[gnu::noinline]] crypto::SecretBytes bench_op_decaps(const crypto::Kem& kem,
                                                      const crypto::SecretBytes& dk,
                                                      const crypto::Bytes& ct) {
  return kem.decapsulate(dk, ct);
}

// The KEMs --alg names (a comma-separated list), the contenders among them announced on stderr;
// without --alg, every standard KEM.
std::vector<const crypto::Kem*> selected_kems(const Options& o) {
  std::vector<const crypto::Kem*> kems;
  if (o.alg.empty()) {
    for (auto name : crypto::kem_names()) kems.push_back(&crypto::kem_by_name(name));
    return kems;
  }
  std::size_t start = 0;
  while (start <= o.alg.size()) {
    const std::size_t comma = std::min(o.alg.find(',', start), o.alg.size());
    kems.push_back(&crypto::any_kem_by_name(o.alg.substr(start, comma - start)));
    start = comma + 1;
  }
  // Announced once every name is known good, so that a bad one is still a one-line error.
  for (const crypto::Kem* kem : kems) {
    if (kem->contender()) std::cerr << "pqot: " << crypto::contender_warning(*kem) << "\n";
  }
  return kems;
}

// --alg A --iterations N: exactly N exchanges of each KEM named; per-operation medians from the
// individual timings.
std::vector<Row> run_exchanges(const Options& o, const crypto::Kem& kem) {
  const std::string alg(kem.name());
  std::vector<double> t_keygen, t_encaps, t_decaps;
  // OpenSSL sets up its generator on the first draw: do that outside the counted functions, so
  // that callgrind's figures are per operation, not the first exchange's set-up.
  crypto::SecretBytes warm(kem.encaps_seed_size());
  crypto::random_secret_bytes(warm);
  for (long i = 0; i < o.iterations; ++i) {
    const auto t0 = Clock::now();
    const auto kp = bench_op_keygen(kem);
    const auto t1 = Clock::now();
    const auto enc = bench_op_encaps(kem, kp.public_key);
    const auto t2 = Clock::now();
    const auto ss = bench_op_decaps(kem, kp.secret_key, enc.ciphertext);
    const auto t3 = Clock::now();
    if (!crypto::ct_equal(ss, enc.shared_secret)) {
      throw std::runtime_error(alg + ": decapsulated secret differs from the encapsulated one");
    }
    t_keygen.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    t_encaps.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    t_decaps.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count());
  }
  return {bench::row_of_timings(alg + " keygen", t_keygen),
          bench::row_of_timings(alg + " encaps", t_encaps),
          bench::row_of_timings(alg + " decaps", t_decaps)};
}

std::vector<Row> run_all(const Options& o, const std::vector<const crypto::Kem*>& kems) {
  std::vector<Row> rows;
  for (const crypto::Kem* k : kems) {
    const crypto::Kem& kem = *k;
    const std::string_view name = kem.name();
    const auto kp = kem.generate_keypair();
    const auto enc = kem.encapsulate(kp.public_key);
    const std::string n(name);
    rows.push_back(bench::measure(n + " keygen", o, [&] { (void)bench_op_keygen(kem); }));
    rows.push_back(
        bench::measure(n + " encaps", o, [&] { (void)bench_op_encaps(kem, kp.public_key); }));
    rows.push_back(bench::measure(
        n + " decaps", o, [&] { (void)bench_op_decaps(kem, kp.secret_key, enc.ciphertext); }));
  }
  if (!o.alg.empty()) return rows;

  crypto::Bytes key(32);
  crypto::random_secret_bytes(key);
  crypto::Aes256Gcm aead(key);
  crypto::NonceSequence nonces({'b', 'e', 'n', 'c'});
  for (std::size_t size : {std::size_t{64}, std::size_t{1024}}) {
    const crypto::Bytes msg(size, 0x5a), aad(16, 0x01);
    crypto::Bytes out(size + crypto::kAesGcmTagSize);
    const std::string label = "AES-256-GCM seal " + std::to_string(size) + " B";
    rows.push_back(bench::measure(label, o, [&] { aead.seal_into(nonces.next(), aad, msg, out); }));
    const auto nonce = nonces.next();
    const auto sealed = aead.seal(nonce, aad, msg);
    crypto::Bytes plain(size);
    const std::string open_label = "AES-256-GCM open " + std::to_string(size) + " B";
    rows.push_back(
        bench::measure(open_label, o, [&] { aead.open_into(nonce, aad, sealed, plain); }));
  }
  const crypto::Bytes ikm(32, 0x11), salt(32, 0x22), info(24, 0x33);
  rows.push_back(bench::measure("HKDF-SHA-256 (32 B ikm, 96 B out)", o,
                                [&] { (void)crypto::hkdf_sha256(ikm, salt, info, 96); }));
  return rows;
}

}  // namespace

void add_bench_commands(CLI::App& app) {
  auto* bench_cmd = app.add_subcommand("bench", "Benchmarks");
  bench_cmd->require_subcommand(1);
  add_bench_sig_command(*bench_cmd);
  auto o = std::make_shared<Options>();
  auto* crypto_cmd = bench_cmd->add_subcommand(
      "crypto", "Microseconds per operation: KEM keygen/encaps/decaps, AES-256-GCM, HKDF");
  bench::add_options(*crypto_cmd, *o,
                     "Only these KEMs (comma-separated), the comparison contenders (NTRU, Saber) "
                     "included",
                     "Iterations per round; with --alg: run exactly this many full "
                     "keygen+encaps+decaps exchanges (for callgrind)");
  crypto_cmd->callback([o] {
    const auto kems = selected_kems(*o);  // validates every name before any work
    const bool exchanges = !o->alg.empty() && o->iterations > 0;
    std::vector<Row> rows;
    if (exchanges) {
      for (const crypto::Kem* kem : kems) {
        auto r = run_exchanges(*o, *kem);
        rows.insert(rows.end(), r.begin(), r.end());
      }
    } else {
      rows = run_all(*o, kems);
    }
    bench::print_rows(rows, *o, exchanges);
  });
}

}  // namespace pqot::app
