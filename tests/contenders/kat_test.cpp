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

struct KnownAnswer {
  const char* name;
  std::size_t pk, sk, ct;
  const char* sha256;
};

// docs/crypto.md, "Comparison contenders" (from ../shared/testvectors/README.md: PQClean commit
// 6cd3167b, META.yml nistkat-sha256).
constexpr KnownAnswer kAnswers[] = {
    {"NTRU-HPS-2048-509", 699, 935, 699,
     "fc314366fbe795e2db6d29abb9f5b2ff43f0f608d0bd66161f9450364f0d271b"},
    {"NTRU-HPS-2048-677", 930, 1234, 930,
     "33e2cad6c2a2f17991517050d7a1b745908c84b8283a4e0f07dbe6f62d166507"},
    {"NTRU-HPS-4096-821", 1230, 1590, 1230,
     "1a8382ae0c801a43cf461c98d22743f5b2d8a1ffed1b1df0dd767de2c2874597"},
    {"NTRU-HRSS-701", 1138, 1450, 1138,
     "501e000c3eb374ffbfb81b0f16673a6282116465936608d7d164b05635e769e8"},
    {"LightSaber", 672, 1568, 736,
     "dc2233ae221cfabbb1db5ab1a76c93967d37de9f87a8092561f95ab28eff6061"},
    {"Saber", 992, 2304, 1088, "c9e2c16f41f162c607a1d5704107159e5e12713b9bb8c356b1d68b216e79096e"},
    {"FireSaber", 1312, 3040, 1472,
     "937d9b2e139112e13d4093a6afe715deff476e4d578208b9e8e1809de43835cd"},
};

TEST(NistKatHarness, MlKem768GivesPqCleansValue) {
  EXPECT_EQ(test::single_entry_kat_sha256(kem_by_name("ML-KEM-768")),
            "5352539586b6c3df58be6158a6250aeff402bd73060b0a3de68850ac074c17c3");
}

TEST(NistKatHarness, TheDrbgOfTheNistGeneratorGivesItsFirstSeed) {
  // PQCgenKAT_kem's first seed (count = 0) of every NIST KEM response file.
  Bytes entropy(48);
  for (std::size_t i = 0; i < entropy.size(); ++i) entropy[i] = static_cast<std::uint8_t>(i);
  NistKatDrbg drbg(entropy);
  const SecretBytes seed = drbg.randombytes(48);
  EXPECT_EQ(to_hex(seed),
            "061550234d158c5ec95595fe04ef7a25767f2e24cc2bc479d09d86dc9abcfde7056a8c266f9ef97ed08541d"
            "bd2e1ffa1");
}

TEST(NistKatHarness, TheDrbgTakesExactly48Bytes) {
  EXPECT_THROW(NistKatDrbg(Bytes(47)), Error);
  EXPECT_THROW(NistKatDrbg(Bytes(49)), Error);
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

INSTANTIATE_TEST_SUITE_P(Round3, ContenderKat, ::testing::ValuesIn(kAnswers),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace pqot::crypto
