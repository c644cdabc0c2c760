// The contract of a command-line usage error (docs/cli.md, docs/srup-tool.md): exit code 2,
// nothing on stdout, one line on stderr starting "<program>: error: " and naming what was wrong.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "child_process.hpp"

namespace pqot::test {

inline void expect_usage_error(const ProcessResult& r, const std::string& mentions,
                               const std::string& program = "pqot") {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind(program + ": error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos) << "expected '" << mentions << "' in " << r.err;
}

}  // namespace pqot::test
