// `pqot sig` and `pqot bench sig` from the outside (docs/cli.md): agreement with the library,
// PEM key files, `valid`/exit 0 and `invalid`/exit 1, and the bad-input convention (one line on
// stderr, nothing on stdout, exit 2).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/child_process.hpp"
#include "../support/cli_fields.hpp"
#include "../support/temp_dir.hpp"
#include "../support/usage_error.hpp"
#include "pqot/crypto/signature.hpp"

namespace {

using pqot::test::cli_fields;
using pqot::test::expect_usage_error;
using pqot::test::ProcessResult;
using pqot::test::run_process;
namespace crypto = pqot::crypto;

ProcessResult pqot_cli(std::vector<std::string> args) {
  return run_process(PQOT_BIN, args);
}

std::string hex_of(std::size_t n, std::uint8_t fill) {
  return crypto::to_hex(crypto::Bytes(n, fill));
}

class SigCli : public ::testing::TestWithParam<const char*> {
 protected:
  const crypto::Signature& alg = crypto::signature_by_name(GetParam());
  std::string ctx() const { return alg.max_context_size() > 0 ? "c0ffee" : ""; }
  std::vector<std::string> with_ctx(std::vector<std::string> args) const {
    if (!ctx().empty()) {
      args.push_back("--ctx");
      args.push_back(ctx());
    }
    return args;
  }
};

TEST_P(SigCli, DeterministicKeygenAndSigningMatchTheLibrary) {
  const std::string seed = hex_of(alg.seed_size(), 0x07);
  const auto kg = pqot_cli({"sig", "keygen", "--alg", GetParam(), "--seed", seed});
  ASSERT_EQ(kg.exit_code, 0) << kg.err;
  auto f = cli_fields(kg.out);
  ASSERT_EQ(f.size(), 2u) << kg.out;
  const auto lib = alg.keygen(crypto::from_hex(seed));
  EXPECT_EQ(f["pk"], crypto::to_hex(lib.public_key));
  EXPECT_EQ(f["sk"], crypto::to_hex(lib.secret_key));

  const std::string msg = "000102";
  const auto sg = pqot_cli(with_ctx(
      {"sig", "sign", "--alg", GetParam(), "--sk", f["sk"], "--msg", msg, "--deterministic"}));
  ASSERT_EQ(sg.exit_code, 0) << sg.err;
  const std::string sig = cli_fields(sg.out)["sig"];
  const crypto::Bytes ctx_bytes = crypto::from_hex(ctx());
  EXPECT_EQ(sig, crypto::to_hex(
                     alg.sign_deterministic(lib.secret_key, crypto::from_hex(msg), ctx_bytes)));

  const auto ok = pqot_cli(with_ctx(
      {"sig", "verify", "--alg", GetParam(), "--pk", f["pk"], "--msg", msg, "--sig", sig}));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "valid\n");
  EXPECT_EQ(ok.err, "");

  // Any signature that does not verify: "invalid", exit 1, nothing on stderr.
  std::string flipped = sig;
  flipped[0] = flipped[0] == '0' ? '1' : '0';
  for (const std::string& bad : {flipped, sig.substr(2), sig + "00", std::string("00")}) {
    const auto r = pqot_cli(with_ctx(
        {"sig", "verify", "--alg", GetParam(), "--pk", f["pk"], "--msg", msg, "--sig", bad}));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out, "invalid\n");
    EXPECT_EQ(r.err, "");
  }
  const auto other_msg = pqot_cli(with_ctx(
      {"sig", "verify", "--alg", GetParam(), "--pk", f["pk"], "--msg", "000103", "--sig", sig}));
  EXPECT_EQ(other_msg.exit_code, 1);
}

// Key files for every scheme, RSA included (keys without a seed: the PKCS#8 DER is the file).
class SigCliFiles : public SigCli {};

TEST_P(SigCliFiles, PemKeyFilesRoundTripAndAreNeverReplaced) {
  const pqot::test::TempDir tmp("pqot-sig-cli");
  const std::string dir = tmp.path().string();
  const auto kg = pqot_cli({"sig", "keygen", "--alg", GetParam(), "--out-dir", dir});
  ASSERT_EQ(kg.exit_code, 0) << kg.err;
  auto f = cli_fields(kg.out);
  EXPECT_EQ(f.count("sk"), 0u) << "the secret key goes to the file only";
  EXPECT_EQ(f["private_key_file"], dir + "/private.pem");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/private.pem").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const auto sg = pqot_cli(with_ctx(
      {"sig", "sign", "--alg", GetParam(), "--sk", "@" + dir + "/private.pem", "--msg", "aa"}));
  ASSERT_EQ(sg.exit_code, 0) << sg.err;
  const auto vf =
      pqot_cli(with_ctx({"sig", "verify", "--alg", GetParam(), "--pk", "@" + dir + "/public.pem",
                         "--msg", "aa", "--sig", cli_fields(sg.out)["sig"]}));
  EXPECT_EQ(vf.exit_code, 0) << vf.err;
  EXPECT_EQ(vf.out, "valid\n");

  std::ifstream in(dir + "/private.pem");
  const std::string before((std::istreambuf_iterator<char>(in)), {});
  expect_usage_error(pqot_cli({"sig", "keygen", "--alg", GetParam(), "--out-dir", dir}),
                     "File exists");
  std::ifstream again(dir + "/private.pem");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), {}), before);

  // public.pem exists but private.pem does not: refused, and no orphan private key is left.
  const pqot::test::TempDir other("pqot-sig-cli-rollback");
  const std::string dir2 = other.path().string();
  std::ofstream(dir2 + "/public.pem") << "someone else's\n";
  expect_usage_error(pqot_cli({"sig", "keygen", "--alg", GetParam(), "--out-dir", dir2}),
                     "File exists");
  struct stat gone {};
  EXPECT_NE(::stat((dir2 + "/private.pem").c_str(), &gone), 0) << "private.pem left behind";
}

std::string param_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string n = info.param;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Schemes, SigCli,
                         ::testing::Values("ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "Ed25519",
                                           "ML-DSA-65+Ed25519"),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Schemes, SigCliFiles,
                         ::testing::Values("ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "Ed25519",
                                           "ML-DSA-65+Ed25519", "RSA-2048-PKCS1", "RSA-2048-PSS"),
                         param_name);

TEST(SigCliErrors, BadInputIsOneLineOnStderrAndExitTwo) {
  const std::string sk = cli_fields(pqot_cli({"sig", "keygen", "--alg", "Ed25519"}).out)["sk"];
  const std::string pk65 = cli_fields(pqot_cli({"sig", "keygen", "--alg", "ML-DSA-65"}).out)["pk"];
  expect_usage_error(pqot_cli({"sig", "keygen", "--alg", "ML-DSA-66"}), "ML-DSA-66");
  expect_usage_error(pqot_cli({"sig", "keygen", "--alg", "ML-DSA-65", "--seed", "00"}), "32 bytes");
  expect_usage_error(
      pqot_cli({"sig", "sign", "--alg", "Ed25519", "--sk", sk, "--msg", "00", "--ctx", "01"}),
      "takes no context");
  expect_usage_error(pqot_cli({"sig", "sign", "--alg", "ML-DSA-65", "--sk", "00", "--msg", "00",
                               "--ctx", std::string(512, 'a')}),
                     "at most 255");
  expect_usage_error(pqot_cli({"sig", "sign", "--alg", "Ed25519", "--sk", sk, "--msg", "0g"}),
                     "--msg");
  expect_usage_error(
      pqot_cli({"sig", "sign", "--alg", "Ed25519", "--sk", sk, "--msg", "00", "--rnd", "00"}),
      "--rnd");
  expect_usage_error(pqot_cli({"sig", "sign", "--alg", "ML-DSA-65", "--sk", "00", "--msg", "00",
                               "--deterministic", "--rnd", hex_of(32, 0)}),
                     "excludes");
  // A malformed key is not an invalid signature: exit 2, not 1.
  expect_usage_error(pqot_cli({"sig", "verify", "--alg", "ML-DSA-65", "--pk", pk65.substr(2),
                               "--msg", "00", "--sig", "00"}),
                     "public key");
  expect_usage_error(pqot_cli({"sig", "verify", "--alg", "Ed25519", "--pk", "@/nonexistent/pk",
                               "--msg", "00", "--sig", "00"}),
                     "cannot read");
  // A key file of another scheme is named as such.
  const pqot::test::TempDir tmp("pqot-sig-cli-errors");
  const std::string dir = tmp.path().string();
  ASSERT_EQ(pqot_cli({"sig", "keygen", "--alg", "ML-DSA-44", "--out-dir", dir}).exit_code, 0);
  expect_usage_error(pqot_cli({"sig", "sign", "--alg", "ML-DSA-65", "--sk",
                               "@" + dir + "/private.pem", "--msg", "00"}),
                     "ML-DSA-44");
  // A PEM file with a blank line before it is still PEM.
  std::ifstream pem_in(dir + "/public.pem");
  std::ofstream(dir + "/padded.pem") << "\n  \n" << pem_in.rdbuf();
  const auto padded = pqot_cli({"sig", "verify", "--alg", "ML-DSA-44", "--pk",
                                "@" + dir + "/padded.pem", "--msg", "00", "--sig", "00"});
  EXPECT_EQ(padded.exit_code, 1) << padded.err;  // the key was read; the signature is invalid
  // An argument file larger than any key or message is refused, not read into memory.
  {
    std::ofstream big(dir + "/big.hex");
    const std::string chunk(1 << 20, 'a');
    for (int i = 0; i < 17; ++i) big << chunk;
  }
  expect_usage_error(
      pqot_cli({"sig", "verify", "--alg", "ML-DSA-44", "--pk", "@" + dir + "/public.pem", "--msg",
                "@" + dir + "/big.hex", "--sig", "00"}),
      "16 MiB");
  // A PEM file that is not a key at all.
  std::ofstream(dir + "/junk.pem")
      << "-----BEGIN PUBLIC KEY-----\nnot base64!\n-----END PUBLIC KEY-----\n";
  expect_usage_error(pqot_cli({"sig", "verify", "--alg", "ML-DSA-44", "--pk",
                               "@" + dir + "/junk.pem", "--msg", "00", "--sig", "00"}),
                     "--pk");
}

TEST(BenchSigCli, FixedCyclesReportEveryOperationAsJson) {
  const auto r = pqot_cli({"bench", "sig", "--alg", "ML-DSA-44", "--iterations", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.at("results").size(), 3u);
  EXPECT_EQ(j["results"][0]["name"], "ML-DSA-44 keygen");
  EXPECT_EQ(j["results"][1]["name"], "ML-DSA-44 sign");
  EXPECT_EQ(j["results"][2]["name"], "ML-DSA-44 verify");
  EXPECT_EQ(j["results"][2]["iterations"], 3);
  expect_usage_error(pqot_cli({"bench", "sig", "--alg", "nope"}), "nope");
}

}  // namespace
