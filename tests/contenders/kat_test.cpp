// The contenders' known answers: the SHA-256 of each scheme's single-entry NIST KAT response
// (tests/support/nist_kat.hpp), as PQClean recorded it for the round-3 references. ML-KEM-768
// goes through the same construction first, as a check of the harness (DRBG, draw order, text).
#include <gtest/gtest.h>

#include <string>

#include "../support/nist_kat.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {
namespace {

using test::KnownAnswer;

TEST(NistKatHarness, MlKem768GivesPqCleansValue) {
  EXPECT_EQ(test::single_entry_kat_sha256(kem_by_name("ML-KEM-768")), test::kMlKem768KnownAnswer);
}

TEST(NistKatHarness, TheDrbgOfTheNistGeneratorGivesItsFirstSeed) {
  // PQCgenKAT_kem's first seed (count = 0) of every NIST KEM response file.
  EXPECT_EQ(to_hex(test::kat_entry_seed()),
            "061550234d158c5ec95595fe04ef7a25767f2e24cc2bc479d09d86dc9abcfde7056a8c266f9ef97ed08541d"
            "bd2e1ffa1");
}

TEST(NistKatHarness, TheDrbgTakesExactly48Bytes) {
  EXPECT_THROW(kat::NistDrbg(Bytes(47)), Error);
  EXPECT_THROW(kat::NistDrbg(Bytes(49)), Error);
}

class ContenderKat : public ::testing::TestWithParam<KnownAnswer> {};

TEST_P(ContenderKat, ReproducesTheRound3KnownAnswer) {
  const KnownAnswer& a = GetParam();
  const Kem& kem = contender_kem_by_name(a.name);
  EXPECT_EQ(kem.name(), a.name);
  EXPECT_TRUE(kem.contender());
  EXPECT_EQ(kem.public_key_size(), a.pk);
  EXPECT_EQ(kem.secret_key_size(), a.sk);
  EXPECT_EQ(kem.ciphertext_size(), a.ct);
  EXPECT_EQ(test::single_entry_kat_sha256(kem), a.sha256);
}

INSTANTIATE_TEST_SUITE_P(Round3, ContenderKat, ::testing::ValuesIn(test::kRound3KnownAnswers),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace pqot::crypto
