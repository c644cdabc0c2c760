// `pqot bench sig`: microseconds per keygen, sign and verify of every signature scheme, medians of
// several rounds, in one run (docs/cli.md).
//
// With --alg ALG --iterations N it runs exactly N keygen+sign+verify cycles of ALG on fixed inputs
// (seed i: 32 or 64 bytes of value i with byte 1 = i >> 8; message i: 64 bytes of value 7i mod 256;
// deterministic signing), each operation in its own non-inlined function, so that instruction
// counts are reproducible:
//   valgrind --tool=callgrind --toggle-collect='*bench_op_*' pqot bench sig --alg A --iterations N
// RSA keys cannot come from a seed and RSA-PSS signs with OpenSSL's own salt: those steps use the
// system's randomness (stated in the output).
#include <chrono>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "bench_common.hpp"
#include "cli_common.hpp"
#include "pqot/crypto/signature.hpp"

namespace pqot::app {

namespace {

using Clock = std::chrono::steady_clock;
using bench::Options;
using bench::Row;

[[gnu::noinline]] crypto::SignatureKeyPair bench_op_sig_keygen(const crypto::Signature& alg,
                                                               crypto::ByteView seed) {
  return alg.seed_size() > 0 ? alg.keygen(seed) : alg.keygen();
}
[[gnu::noinline]] crypto::Bytes bench_op_sig_sign(const crypto::Signature& alg,
                                                  const crypto::SecretBytes& sk,
                                                  crypto::ByteView msg) {
  return alg.has_deterministic_signing() ? alg.sign_deterministic(sk, msg) : alg.sign(sk, msg);
}
[[gnu::noinline]] bool bench_op_sig_verify(const crypto::Signature& alg, const crypto::Bytes& pk,
                                           crypto::ByteView msg, const crypto::Bytes& sig) {
  return alg.verify(pk, msg, {}, sig);
}

crypto::Bytes fixed_seed(const crypto::Signature& alg, long i) {
  crypto::Bytes seed(alg.seed_size(), static_cast<std::uint8_t>(i));
  if (seed.size() > 1) seed[1] = static_cast<std::uint8_t>(i >> 8);
  return seed;
}

crypto::Bytes fixed_message(long i) {
  return crypto::Bytes(64, static_cast<std::uint8_t>(i * 7));
}

double micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// --alg A --iterations N: exactly N cycles on the fixed inputs.
std::vector<Row> run_cycles(const Options& o) {
  const auto& alg = crypto::signature_by_name(o.alg);
  std::vector<double> t_keygen, t_sign, t_verify;
  for (long i = 0; i < o.iterations; ++i) {
    const crypto::Bytes seed = fixed_seed(alg, i);
    const crypto::Bytes msg = fixed_message(i);
    const auto t0 = Clock::now();
    const auto kp = bench_op_sig_keygen(alg, seed);
    const auto t1 = Clock::now();
    const auto sig = bench_op_sig_sign(alg, kp.secret_key, msg);
    const auto t2 = Clock::now();
    const bool ok = bench_op_sig_verify(alg, kp.public_key, msg, sig);
    const auto t3 = Clock::now();
    if (!ok) throw std::runtime_error(o.alg + ": a fresh signature did not verify");
    t_keygen.push_back(micros(t0, t1));
    t_sign.push_back(micros(t1, t2));
    t_verify.push_back(micros(t2, t3));
  }
  return {bench::row_of_timings(o.alg + " keygen", t_keygen),
          bench::row_of_timings(o.alg + " sign", t_sign),
          bench::row_of_timings(o.alg + " verify", t_verify)};
}

constexpr long kMessages = 64;

// RSA-7680 key generation takes seconds per key: only with --alg.
bool in_default_run(std::string_view name) {
  return name.find("7680") == std::string_view::npos;
}

std::vector<Row> run_all(const Options& o) {
  std::vector<std::string_view> algs;
  if (!o.alg.empty()) {
    algs = {crypto::signature_by_name(o.alg).name()};
  } else {
    for (auto n : crypto::signature_names()) {
      if (in_default_run(n)) algs.push_back(n);
    }
  }
  std::vector<Row> rows;
  for (auto name : algs) {
    const auto& alg = crypto::signature_by_name(name);
    const crypto::Bytes seed = fixed_seed(alg, 1);
    const auto kp = bench_op_sig_keygen(alg, seed);
    // ML-DSA's signing time depends on how many attempts a message needs: the operations cycle
    // through kMessages fixed messages so that the medians reflect the usual spread of attempts.
    std::vector<crypto::Bytes> msgs, sigs;
    for (long i = 0; i < kMessages; ++i) {
      msgs.push_back(fixed_message(i));
      sigs.push_back(bench_op_sig_sign(alg, kp.secret_key, msgs.back()));
    }
    std::size_t next = 0;
    const std::string n(name);
    rows.push_back(bench::measure(n + " keygen", o, [&] { (void)bench_op_sig_keygen(alg, seed); }));
    rows.push_back(bench::measure(n + " sign", o, [&] {
      (void)bench_op_sig_sign(alg, kp.secret_key, msgs[next++ % msgs.size()]);
    }));
    rows.push_back(bench::measure(n + " verify", o, [&] {
      const std::size_t i = next++ % msgs.size();
      if (!bench_op_sig_verify(alg, kp.public_key, msgs[i], sigs[i])) {
        throw std::runtime_error(n + ": a fresh signature did not verify");
      }
    }));
  }
  return rows;
}

}  // namespace

void add_bench_sig_command(CLI::App& bench_cmd) {
  auto o = std::make_shared<Options>();
  auto* sig = bench_cmd.add_subcommand(
      "sig",
      "Microseconds per signature keygen, sign and verify (every scheme but RSA-7680, "
      "which only runs with --alg)");
  bench::add_options(*sig, *o, "Only this scheme",
                     "Iterations per round; with --alg: run exactly this many keygen+sign+verify "
                     "cycles on fixed seeds and messages with deterministic signing (for "
                     "callgrind)");
  sig->callback([o] {
    if (!o->alg.empty()) (void)crypto::signature_by_name(o->alg);  // validate before any work
    const bool cycles = !o->alg.empty() && o->iterations > 0;
    const auto rows = cycles ? run_cycles(*o) : run_all(*o);
    bench::print_rows(rows, *o, cycles);
  });
}

}  // namespace pqot::app
