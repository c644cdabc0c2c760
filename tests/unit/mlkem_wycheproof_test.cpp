// ML-KEM against every Wycheproof vector (tests/data/wycheproof, see its README):
// keygen from seed + decaps (incl. implicit rejection, strcmp cases and bad lengths) for all three
// parameter sets, encaps from m incl. the modulus check, and KeyGen_internal(d, z).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "wycheproof.hpp"

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/mlkem.hpp"

namespace pqot::crypto {
namespace {

using nlohmann::json;


Bytes hex(const json& v) { return from_hex(v.get<std::string>()); }

MlKemParameterSet set_named(const std::string& name) {
  if (name == "ML-KEM-512") return MlKemParameterSet::ml_kem_512;
  if (name == "ML-KEM-1024") return MlKemParameterSet::ml_kem_1024;
  EXPECT_EQ(name, "ML-KEM-768");
  return MlKemParameterSet::ml_kem_768;
}

// Runs `check` on every test of every group and asserts the file's numberOfTests were all run.
template <class F>
void for_each_test(const json& file, F&& check) {
  int run = 0;
  for (const auto& group : file["testGroups"]) {
    for (const auto& t : group["tests"]) {
      SCOPED_TRACE("tcId " + std::to_string(t["tcId"].get<int>()));
      check(group, t);
      ++run;
    }
  }
  EXPECT_EQ(run, file["numberOfTests"].get<int>());
}

void run_decaps_file(const std::string& name) {
  const json file = pqot::test::load_wycheproof(name);
  int valid = 0, rejected = 0;
  for_each_test(file, [&](const json& group, const json& t) {
    const MlKem kem(set_named(group["parameterSet"]));
    const Bytes seed = hex(t["seed"]);
    const Bytes c = hex(t["c"]);
    const std::string result = t["result"];
    if (result == "valid") {
      const auto kp = kem.generate_keypair(seed);
      EXPECT_EQ(to_hex(kp.public_key), t["ek"].get<std::string>());
      const auto k = kem.decapsulate(kp.secret_key, c);
      EXPECT_EQ(to_hex(Bytes(k.begin(), k.end())), t["K"].get<std::string>());
      ++valid;
      return;
    }
    ASSERT_EQ(result, "invalid");
    // Invalid vectors have a seed ("private key") or ciphertext of the wrong length: one of the
    // two steps must refuse with invalid_length.
    try {
      const auto kp = kem.generate_keypair(seed);
      (void)kem.decapsulate(kp.secret_key, c);
      ADD_FAILURE() << "accepted an invalid vector: " << t.value("comment", "");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_length) << e.what();
      ++rejected;
    }
  });
  EXPECT_GT(valid, 100);
  EXPECT_GT(rejected, 10);
}

TEST(MlKemWycheproof, Decaps512) { run_decaps_file("mlkem_512_test.json"); }
TEST(MlKemWycheproof, Decaps768) { run_decaps_file("mlkem_768_test.json"); }
TEST(MlKemWycheproof, Decaps1024) { run_decaps_file("mlkem_1024_test.json"); }

TEST(MlKemWycheproof, Encaps768) {
  const json file = pqot::test::load_wycheproof("mlkem_768_encaps_test.json");
  int modulus_rejections = 0;
  for_each_test(file, [&](const json& group, const json& t) {
    const MlKem kem(set_named(group["parameterSet"]));
    const Bytes ek = hex(t["ek"]);
    const Bytes m = hex(t["m"]);
    if (t["result"] == "valid") {
      const auto enc = kem.encapsulate(ek, m);
      EXPECT_EQ(to_hex(enc.ciphertext), t["c"].get<std::string>());
      EXPECT_EQ(to_hex(Bytes(enc.shared_secret.begin(), enc.shared_secret.end())),
                t["K"].get<std::string>());
      return;
    }
    try {
      (void)kem.encapsulate(ek, m);
      ADD_FAILURE() << "accepted an invalid encapsulation key: " << t.value("comment", "");
    } catch (const Error& e) {
      // Wrong-length keys fail the type check, the rest the modulus check.
      const bool right_length = ek.size() == kem.public_key_size();
      EXPECT_EQ(e.code(), right_length ? ErrorCode::invalid_key : ErrorCode::invalid_length);
      modulus_rejections += right_length ? 1 : 0;
    }
  });
  EXPECT_GE(modulus_rejections, 100);
}

TEST(MlKemWycheproof, KeyGenInternal768) {
  const json file = pqot::test::load_wycheproof("mlkem_768_keygen_seed_test.json");
  for_each_test(file, [&](const json& group, const json& t) {
    const MlKem kem(set_named(group["parameterSet"]));
    ASSERT_EQ(t["result"], "valid");
    const Bytes seed = hex(t["seed"]);
    ASSERT_EQ(seed.size(), 64u);
    const auto kp = kem.keygen_internal(ByteView(seed).first(32), ByteView(seed).subspan(32));
    EXPECT_EQ(to_hex(kp.public_key), t["ek"].get<std::string>());
    EXPECT_EQ(to_hex(Bytes(kp.secret_key.begin(), kp.secret_key.end())), t["dk"].get<std::string>());
  });
}

}  // namespace
}  // namespace pqot::crypto
