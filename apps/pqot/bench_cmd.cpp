// `pqot bench crypto`: microseconds per operation of every KEM and of the symmetric primitives,
// as medians over several timed rounds, with the machine printed alongside (docs/cli.md).
//
// With --alg ALG --iterations N it runs exactly N keygen+encaps+decaps exchanges of ALG, each
// operation in its own non-inlined function, so that instruction counts can be taken with
//   valgrind --tool=callgrind --toggle-collect='*bench_op_*' pqot bench crypto --alg A --iterations
//   N
#include <chrono>
#include <stdexcept>

#include "bench_common.hpp"
#include "cli_common.hpp"
#include "pqot/crypto/aead.hpp"
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

// --alg A --iterations N: exactly N exchanges; per-operation medians from the individual timings.
std::vector<Row> run_exchanges(const Options& o) {
  const auto& kem = crypto::kem_by_name(o.alg);
  std::vector<double> t_keygen, t_encaps, t_decaps;
  for (long i = 0; i < o.iterations; ++i) {
    const auto t0 = Clock::now();
    const auto kp = bench_op_keygen(kem);
    const auto t1 = Clock::now();
    const auto enc = bench_op_encaps(kem, kp.public_key);
    const auto t2 = Clock::now();
    const auto ss = bench_op_decaps(kem, kp.secret_key, enc.ciphertext);
    const auto t3 = Clock::now();
    if (!crypto::ct_equal(ss, enc.shared_secret)) {
      throw std::runtime_error(o.alg + ": decapsulated secret differs from the encapsulated one");
    }
    t_keygen.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    t_encaps.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
    t_decaps.push_back(std::chrono::duration<double, std::micro>(t3 - t2).count());
  }
  return {bench::row_of_timings(o.alg + " keygen", t_keygen),
          bench::row_of_timings(o.alg + " encaps", t_encaps),
          bench::row_of_timings(o.alg + " decaps", t_decaps)};
}

std::vector<Row> run_all(const Options& o) {
  std::vector<Row> rows;
  std::vector<std::string_view> algs(crypto::kem_names().begin(), crypto::kem_names().end());
  if (!o.alg.empty()) algs = {crypto::kem_by_name(o.alg).name()};
  for (auto name : algs) {
    const auto& kem = crypto::kem_by_name(name);
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
  bench::add_options(*crypto_cmd, *o, "Only this KEM",
                     "Iterations per round; with --alg: run exactly this many full "
                     "keygen+encaps+decaps exchanges (for callgrind)");
  crypto_cmd->callback([o] {
    if (!o->alg.empty()) (void)crypto::kem_by_name(o->alg);  // validate before any work
    const bool exchanges = !o->alg.empty() && o->iterations > 0;
    const auto rows = exchanges ? run_exchanges(*o) : run_all(*o);
    bench::print_rows(rows, *o, exchanges);
  });
}

}  // namespace pqot::app
