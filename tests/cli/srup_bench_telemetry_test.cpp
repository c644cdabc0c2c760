// `srup bench-telemetry` end to end, kept short (docs/srup-tool.md, "bench-telemetry"): its own
// broker, the real srup-c2 found next to srup (pqot_cli_tests depends on it), two in-process devices enrolled and joined through
// it; the readings the C2 opened and stored come from its metrics page. No figure is judged: the
// test checks that readings were stored, that nothing was refused, dropped or forged on the way,
// and the usage errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/child_process.hpp"
#include "../support/usage_error.hpp"

namespace {

using pqot::test::run_process;

TEST(SrupBenchTelemetry, TwoDevicesReadingsConfirmedAndStoredNothingRefused) {
  const auto r = run_process(SRUP_BIN, {"bench-telemetry", "--devices", "2", "--rounds", "1", "--duration", "1",
                                           "--warmup", "0.5", "--checkpoint", "8", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j["c2_counters"];
  SCOPED_TRACE(j.dump());
  EXPECT_GT(c["readings_stored"].get<double>(), 0);
  EXPECT_LE(c["readings_stored"].get<double>(), c["readings_opened"].get<double>());
  EXPECT_LE(c["readings_opened"].get<double>(), c["published"].get<double>());
  // By reason. A QoS 1 message delivered twice (at least once, after a reconnect under load) is
  // rightly refused as REPLAY; every other reason is a failure of the bench or of the C2.
  for (const auto& [reason, n] : c["refusals"].items()) EXPECT_EQ(reason, "REPLAY") << n;
  EXPECT_EQ(c["overload_drops"].get<double>(), 0);
  EXPECT_EQ(c["mismatch"].get<double>(), 0);
  ASSERT_EQ(j["per_round"].size(), 1u);
  EXPECT_GT(j["median"]["stored_per_s"].get<double>(), 0);
  EXPECT_GT(j["median"]["c2_cpu_us_per_reading"].get<double>(), 0);
  EXPECT_GT(j["loop_core_capacity_per_s"].get<double>(), 0);
  EXPECT_FALSE(j["verdict"].get<std::string>().empty());
  EXPECT_NE(r.err.find("srup-c2 running as pid"), std::string::npos) << r.err;
}

TEST(SrupBenchTelemetry, UsageErrorsNameTheOption) {
  pqot::test::expect_usage_error(run_process(SRUP_BIN, {"bench-telemetry", "--c2-program", "/nonexistent/srup-c2"}),
                                 "--c2-program", "srup");
  pqot::test::expect_usage_error(run_process(SRUP_BIN, {"bench-telemetry", "--devices", "0"}), "--devices", "srup");
  pqot::test::expect_usage_error(run_process(SRUP_BIN, {"bench-telemetry", "--suite", "RSA"}), "--suite", "srup");
}

}  // namespace
