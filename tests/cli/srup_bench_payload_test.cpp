// `srup bench-payload --smoke` end to end (docs/srup-tool.md, "bench-payload"): every scheme's
// publisher and subscriber processes, 3 readings of each kind, with the stored RSA test keys
// (tests/data/rsa: a 7680-bit key takes 10-55 s to generate). No figure is judged: the test checks
// the report's structure and that every scheme decrypted every reading to the bytes encrypted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "../support/child_process.hpp"
#include "../support/usage_error.hpp"

namespace {

using pqot::test::run_process;

const std::string kRsaKeys = std::string(PQOT_TEST_DATA_DIR) + "/rsa";

TEST(SrupBenchPayload, SmokeEverySchemeDecryptsEveryReading) {
  const auto r =
      run_process(SRUP_BIN, {"bench-payload", "--smoke", "--json", "--rsa-keys", kRsaKeys});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  SCOPED_TRACE(j.dump());
  EXPECT_TRUE(j["all_decrypted"].get<bool>());
  const int messages = j["messages"].get<int>();
  EXPECT_EQ(messages, 3);
  std::set<std::string> schemes;
  std::set<int> levels;
  for (const auto& row : j["rows"]) {
    const std::string name = row["scheme"].get<std::string>();
    SCOPED_TRACE(name);
    schemes.insert(name);
    levels.insert(row["level"].get<int>());
    EXPECT_EQ(row["decrypted_ok"].get<int>(), messages) << row["first_error"];
    EXPECT_EQ(row["first_error"].get<std::string>(), "");
    const int phases = row["phases"].get<int>();
    EXPECT_TRUE(phases == 1 || phases == 3);
    EXPECT_GT(row["plaintext_bytes"]["median"].get<double>(), 0);
    // Every scheme adds something (a KEM ciphertext, RSA blocks, a header and tag), except
    // SRUP-PQ telemetry, whose native encoding is smaller than the JSON: compared to its own.
    EXPECT_GT(row["wire_bytes"]["median"].get<double>(),
              row["plaintext_bytes"]["median"].get<double>());
    for (const char* t : {"encrypt_us", "decrypt_us"}) {
      EXPECT_GT(row[t]["median"].get<double>(), 0) << t;
      EXPECT_GE(row[t]["p99"].get<double>(), row[t]["median"].get<double>()) << t;
    }
    for (const char* side : {"publisher", "subscriber"}) {
      EXPECT_GT(row[side]["max_rss_kb"].get<double>(), 0) << side;
      EXPECT_GE(row[side]["cpu_us_per_message"].get<double>(), 0) << side;
    }
  }
  EXPECT_EQ(j["rows"].size(), 2 * schemes.size());
  for (const char* s : {"RSA-2048-chunked", "RSA-3072-hybrid", "RSA-7680-chunked", "LightSaber",
                        "NTRU-HPS-2048-509", "Saber", "NTRU-HRSS-701", "FireSaber",
                        "NTRU-HPS-4096-821", "ML-KEM-512", "ML-KEM-768", "ML-KEM-1024", "X-Wing",
                        "SRUP-PQ-sealed", "SRUP-PQ-telemetry"}) {
    EXPECT_EQ(schemes.count(s), 1u) << s;
  }
  EXPECT_EQ(levels, (std::set<int>{0, 1, 3, 5}));
  EXPECT_EQ(j["rsa_keys"]["7680"]["source"].get<std::string>(), "file");
}

TEST(SrupBenchPayload, ChosenSchemesOnly) {
  const auto r = run_process(SRUP_BIN, {"bench-payload", "--smoke", "--json", "--schemes",
                                        "ML-KEM-768,RSA-2048-hybrid", "--rsa-keys", kRsaKeys});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][0]["scheme"], "ML-KEM-768");
  EXPECT_EQ(j["rows"][2]["scheme"], "RSA-2048-hybrid");
}

TEST(SrupBenchPayload, UsageErrorsNameTheOption) {
  pqot::test::expect_usage_error(
      run_process(SRUP_BIN, {"bench-payload", "--schemes", "RSA-1024-chunked"}), "--schemes",
      "srup");
  pqot::test::expect_usage_error(run_process(SRUP_BIN, {"bench-payload", "--messages", "0"}),
                                 "--messages", "srup");
  pqot::test::expect_usage_error(
      run_process(SRUP_BIN, {"bench-payload", "--rsa-keys", "/nonexistent"}), "--rsa-keys", "srup");
}

}  // namespace
