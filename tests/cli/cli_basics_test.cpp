// `pqot` command-line conventions shared by every subcommand (docs/cli.md).
#include <gtest/gtest.h>

#include "../support/child_process.hpp"

namespace {

using pqot::test::run_process;

TEST(PqotCli, HelpExitsZero) {
  const auto r = run_process(PQOT_BIN, {"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("kem"), std::string::npos);
  EXPECT_NE(r.out.find("pki"), std::string::npos);
}

TEST(PqotCli, UnknownSubcommandIsUsageError) {
  const auto r = run_process(PQOT_BIN, {"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("pqot: error:"), std::string::npos);
}

TEST(PqotCli, NoSubcommandIsUsageError) {
  const auto r = run_process(PQOT_BIN, {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
