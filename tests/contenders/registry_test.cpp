// The contender registry: no protocol can name NTRU or Saber (kem_by_name refuses them), the
// command line and the benchmarks can (any_kem_by_name), and each says it is a contender.
#include <gtest/gtest.h>

#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {
namespace {

TEST(ContenderRegistry, ProtocolsCannotNameAContender) {
  for (auto name : contender_kem_names()) {
    EXPECT_THROW((void)kem_by_name(name), Error) << name;
    EXPECT_EQ(any_kem_by_name(name).name(), name);
    EXPECT_TRUE(contender_kem_by_name(name).contender());
  }
  for (auto name : kem_names()) {
    EXPECT_FALSE(any_kem_by_name(name).contender()) << name;
    EXPECT_THROW((void)contender_kem_by_name(name), Error) << name;
  }
  EXPECT_THROW((void)any_kem_by_name("NTRU-HPS-2048-5O9"), Error);
}

TEST(ContenderRegistry, TheWarningNamesTheSchemeAndTheAdvice) {
  const std::string w = contender_warning(contender_kem_by_name("Saber"));
  EXPECT_NE(w.find("Saber"), std::string::npos);
  EXPECT_NE(w.find("not standardized"), std::string::npos);
  EXPECT_NE(w.find("ML-KEM"), std::string::npos);
  EXPECT_EQ(w.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace pqot::crypto
