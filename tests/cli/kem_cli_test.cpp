// `pqot kem` and `pqot bench crypto` from the outside: output format, determinism, agreement with
// the library, and the bad-input convention (one line on stderr, nothing on stdout, exit 2).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "../support/child_process.hpp"
#include "../support/cli_fields.hpp"
#include "../support/nist_kat.hpp"
#include "../support/temp_dir.hpp"
#include "../support/usage_error.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/crypto/kem.hpp"

namespace {

using pqot::test::ProcessResult;
using pqot::test::expect_usage_error;
using pqot::test::run_process;
namespace crypto = pqot::crypto;

ProcessResult pqot_cli(std::vector<std::string> args) { return run_process(PQOT_BIN, args); }

std::map<std::string, std::string> fields(const std::string& out) { return pqot::test::cli_fields(out); }

std::string seed_hex(std::size_t n, std::uint8_t fill) { return crypto::to_hex(crypto::Bytes(n, fill)); }

class KemCli : public ::testing::TestWithParam<const char*> {};

TEST_P(KemCli, DeterministicKeygenEncapsDecapsMatchTheLibrary) {
  const crypto::Kem& kem = crypto::kem_by_name(GetParam());
  const std::string seed = seed_hex(kem.keygen_seed_size(), 0x07);
  const auto kg = pqot_cli({"kem", "keygen", "--alg", GetParam(), "--seed", seed});
  ASSERT_EQ(kg.exit_code, 0) << kg.err;
  auto f = fields(kg.out);
  ASSERT_EQ(f.size(), 2u) << kg.out;
  const auto lib = kem.generate_keypair(crypto::from_hex(seed));
  EXPECT_EQ(f["ek"], crypto::to_hex(lib.public_key));
  EXPECT_EQ(f["dk"], crypto::to_hex(lib.secret_key));

  const std::string m = seed_hex(kem.encaps_seed_size(), 0x09);
  const auto en = pqot_cli({"kem", "encaps", "--alg", GetParam(), "--ek", f["ek"], "--m", m});
  ASSERT_EQ(en.exit_code, 0) << en.err;
  auto e = fields(en.out);
  const auto lib_enc = kem.encapsulate(lib.public_key, crypto::from_hex(m));
  EXPECT_EQ(e["ct"], crypto::to_hex(lib_enc.ciphertext));
  EXPECT_EQ(e["ss"], crypto::to_hex(lib_enc.shared_secret));

  const auto de = pqot_cli({"kem", "decaps", "--alg", GetParam(), "--dk", f["dk"], "--ct", e["ct"]});
  ASSERT_EQ(de.exit_code, 0) << de.err;
  EXPECT_EQ(fields(de.out)["ss"], e["ss"]);
}

TEST_P(KemCli, RandomKeysAndFileArguments) {
  const auto kg = pqot_cli({"kem", "keygen", "--alg", GetParam()});
  ASSERT_EQ(kg.exit_code, 0) << kg.err;
  auto f = fields(kg.out);
  const auto kg2 = pqot_cli({"kem", "keygen", "--alg", GetParam()});
  EXPECT_NE(fields(kg2.out)["ek"], f["ek"]) << "two random key pairs must differ";

  const pqot::test::TempDir tmp("pqot-kem-cli");
  const std::string ek_file = (tmp.path() / "ek.hex").string();
  std::ofstream(ek_file) << f["ek"] << "\n";  // trailing newline, as an editor would leave it
  const auto en = pqot_cli({"kem", "encaps", "--alg", GetParam(), "--ek", "@" + ek_file});
  ASSERT_EQ(en.exit_code, 0) << en.err;
  auto e = fields(en.out);
  const auto de = pqot_cli({"kem", "decaps", "--alg", GetParam(), "--dk", f["dk"], "--ct", e["ct"]});
  EXPECT_EQ(fields(de.out)["ss"], e["ss"]);
}

INSTANTIATE_TEST_SUITE_P(Algs, KemCli,
                         ::testing::Values("ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X-Wing"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(KemCliErrors, UnknownAlgorithm) {
  expect_usage_error(pqot_cli({"kem", "keygen", "--alg", "Kyber768"}), "unknown KEM 'Kyber768'");
}

TEST(KemCliErrors, MissingAlgorithm) {
  expect_usage_error(pqot_cli({"kem", "keygen"}), "--alg");
}

TEST(KemCliErrors, WrongSeedLength) {
  expect_usage_error(pqot_cli({"kem", "keygen", "--alg", "ML-KEM-768", "--seed", seed_hex(32, 1)}),
                     "must be 64 bytes, got 32");
}

TEST(KemCliErrors, BadHex) {
  expect_usage_error(pqot_cli({"kem", "keygen", "--alg", "ML-KEM-768", "--seed", "zz"}),
                     "--seed: invalid hex digit at position 0");
  expect_usage_error(pqot_cli({"kem", "keygen", "--alg", "ML-KEM-768", "--seed", "abc"}),
                     "odd number of digits");
}

TEST(KemCliErrors, MissingFile) {
  expect_usage_error(pqot_cli({"kem", "encaps", "--alg", "ML-KEM-768", "--ek", "@/nonexistent/ek"}),
                     "cannot read file");
}

TEST(KemCliErrors, EncapsulationKeyFailingTheModulusCheck) {
  const auto& kem = crypto::kem_by_name("ML-KEM-768");
  crypto::Bytes ek = kem.generate_keypair().public_key;
  ek[0] = 0xff;
  ek[1] |= 0x0f;  // first coefficient 4095 >= q
  expect_usage_error(pqot_cli({"kem", "encaps", "--alg", "ML-KEM-768", "--ek", crypto::to_hex(ek)}),
                     "modulus check");
}

TEST(KemCliErrors, WrongCiphertextLength) {
  const auto& kem = crypto::kem_by_name("ML-KEM-512");
  const auto kp = kem.generate_keypair();
  expect_usage_error(pqot_cli({"kem", "decaps", "--alg", "ML-KEM-512", "--dk",
                               crypto::to_hex(kp.secret_key), "--ct", seed_hex(767, 0)}),
                     "ciphertext must be 768 bytes, got 767");
}

// A contender through the command line alone: kat-draws gives the entry's encapsulation bytes,
// keygen --seed the entry's keys, encaps --m its ciphertext; the response text built from what
// the CLI printed hashes to the round-3 known answer. Each command warns once on stderr.
class ContenderCli : public ::testing::TestWithParam<pqot::test::KnownAnswer> {};

void expect_one_warning(const ProcessResult& r, const std::string& alg) {
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(r.err.rfind("pqot: warning: " + alg + " is a NIST round-3 candidate", 0), 0u) << r.err;
}

TEST_P(ContenderCli, ReproducesTheKnownAnswerFromTheCommandLine) {
  const auto& a = GetParam();
  const std::string seed = crypto::to_hex(pqot::test::kat_entry_seed());
  const auto draws = pqot_cli({"kem", "kat-draws", "--alg", a.name, "--seed", seed});
  ASSERT_EQ(draws.exit_code, 0) << draws.err;
  expect_one_warning(draws, a.name);
  const auto kg = pqot_cli({"kem", "keygen", "--alg", a.name, "--seed", seed});
  ASSERT_EQ(kg.exit_code, 0) << kg.err;
  expect_one_warning(kg, a.name);
  auto k = fields(kg.out);
  const auto en = pqot_cli({"kem", "encaps", "--alg", a.name, "--ek", k["ek"], "--m", fields(draws.out)["m"]});
  ASSERT_EQ(en.exit_code, 0) << en.err;
  auto e = fields(en.out);
  const auto de = pqot_cli({"kem", "decaps", "--alg", a.name, "--dk", k["dk"], "--ct", e["ct"]});
  ASSERT_EQ(de.exit_code, 0) << de.err;
  EXPECT_EQ(fields(de.out)["ss"], e["ss"]);

  const std::string text = pqot::test::kat_response_text(
      crypto::from_hex(seed), crypto::from_hex(k["ek"]), crypto::from_hex(k["dk"]),
      crypto::from_hex(e["ct"]), crypto::from_hex(e["ss"]));
  EXPECT_EQ(crypto::to_hex(crypto::sha256(crypto::as_bytes(text))), a.sha256);
}

INSTANTIATE_TEST_SUITE_P(Round3, ContenderCli, ::testing::ValuesIn(pqot::test::kRound3KnownAnswers),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(ContenderCliErrors, TheSeedIsA48ByteDrbgSeed) {
  expect_usage_error(pqot_cli({"kem", "keygen", "--alg", "Saber", "--seed", seed_hex(64, 1)}),
                     "48 bytes");
  expect_usage_error(pqot_cli({"kem", "kat-draws", "--alg", "NTRU-HRSS-701", "--seed", seed_hex(32, 1)}),
                     "48 bytes");
}

TEST(ContenderCliErrors, EncapsTakesExactlyTheReferencesDraw) {
  const auto& kem = crypto::contender_kem_by_name("NTRU-HPS-2048-509");
  const auto kp = kem.generate_keypair();
  expect_usage_error(pqot_cli({"kem", "encaps", "--alg", "NTRU-HPS-2048-509", "--ek",
                               crypto::to_hex(kp.public_key), "--m", seed_hex(32, 1)}),
                     std::to_string(kem.encaps_seed_size()) + " bytes");
}

TEST(ContenderCliErrors, AMistypedNameListsBothKinds) {
  const auto r = pqot_cli({"kem", "keygen", "--alg", "saber"});
  expect_usage_error(r, "unknown KEM");
  EXPECT_NE(r.err.find("comparison only: NTRU-HPS-2048-509"), std::string::npos) << r.err;
}

TEST(BenchCli, ContendersBesideMlKemInOneRun) {
  const auto r = pqot_cli({"bench", "crypto", "--alg", "ML-KEM-512,LightSaber,NTRU-HPS-2048-509",
                           "--iterations", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* op : {"\"ML-KEM-512 decaps\"", "\"LightSaber keygen\"", "\"NTRU-HPS-2048-509 encaps\""}) {
    EXPECT_NE(r.out.find(op), std::string::npos) << op;
  }
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;  // one warning per contender
}

TEST(BenchCli, ExactExchangesAsJson) {
  const auto r = pqot_cli({"bench", "crypto", "--alg", "ML-KEM-512", "--iterations", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"ML-KEM-512 keygen\""), std::string::npos);
  EXPECT_NE(r.out.find("\"ML-KEM-512 decaps\""), std::string::npos);
  EXPECT_NE(r.out.find("\"iterations\": 3"), std::string::npos);
  EXPECT_NE(r.out.find("\"openssl\""), std::string::npos);
}

TEST(BenchCli, UnknownAlgorithmIsUsageError) {
  expect_usage_error(pqot_cli({"bench", "crypto", "--alg", "nope"}), "unknown KEM");
}

}  // namespace
