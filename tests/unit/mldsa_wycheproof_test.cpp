// ML-DSA against every Wycheproof vector (tests/data/wycheproof, see its README): verification of
// valid and malformed signatures and keys, and deterministic or hedged signing from a seed xi,
// through the external-mu entry where a vector gives only mu, for all three parameter sets. The
// *Portable tests run the same vectors through the portable NTT where the CPU would take the AVX2
// code (src/crypto/simd.hpp; docs/crypto.md, "Vector code and its dispatch"): every verification
// file (l = 4, 5, 7 in poly_dot) and the ML-DSA-65 signing file, not all six (CI time).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "crypto/simd.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/mldsa.hpp"
#include "wycheproof.hpp"

namespace pqot::crypto {
namespace {

using nlohmann::json;

Bytes hex(const json& v) {
  return from_hex(v.get<std::string>());
}
Bytes hex_or_empty(const json& t, const char* key) {
  return t.contains(key) ? hex(t[key]) : Bytes{};
}

// Runs `check` on every test of every group and asserts the file's numberOfTests were all run.
template <class F>
void for_each_test(const json& file, F&& check) {
  int run = 0;
  for (const auto& group : file["testGroups"]) {
    for (const auto& t : group["tests"]) {
      SCOPED_TRACE("tcId " + std::to_string(t["tcId"].get<int>()) + ": " + t.value("comment", ""));
      check(group, t);
      ++run;
    }
  }
  EXPECT_EQ(run, file["numberOfTests"].get<int>());
}

// Algorithm 3. A vector is invalid either because the signature does not verify (false) or
// because an input is refused at the API edge: a public key of the wrong length (invalid_length)
// or a context over 255 bytes (invalid_argument).
void run_verify_file(MlDsaParameterSet set, const std::string& name) {
  const MlDsa dsa(set);
  const json file = pqot::test::load_wycheproof(name);
  int valid = 0, rejected = 0, refused = 0;
  for_each_test(file, [&](const json& group, const json& t) {
    const Bytes pk = hex(group["publicKey"]);
    const Bytes msg = hex(t["msg"]);
    const Bytes ctx = hex_or_empty(t, "ctx");
    const Bytes sig = hex(t["sig"]);
    const std::string result = t["result"];
    if (result == "valid") {
      EXPECT_TRUE(dsa.verify(pk, msg, ctx, sig));
      ++valid;
      return;
    }
    ASSERT_EQ(result, "invalid");
    try {
      EXPECT_FALSE(dsa.verify(pk, msg, ctx, sig));
      ++rejected;
    } catch (const Error& e) {
      const bool refusable =
          (pk.size() != dsa.public_key_size() && e.code() == ErrorCode::invalid_length) ||
          (ctx.size() > MlDsa::kMaxContextSize && e.code() == ErrorCode::invalid_argument);
      EXPECT_TRUE(refusable) << e.what();
      ++refused;
    }
  });
  EXPECT_GT(valid, 50);
  EXPECT_GT(rejected, 50);
  EXPECT_GT(refused, 0);
}

TEST(MlDsaWycheproof, Verify44) {
  run_verify_file(MlDsaParameterSet::ml_dsa_44, "mldsa_44_verify_test.json");
}
TEST(MlDsaWycheproof, Verify65) {
  run_verify_file(MlDsaParameterSet::ml_dsa_65, "mldsa_65_verify_test.json");
}
TEST(MlDsaWycheproof, Verify87) {
  run_verify_file(MlDsaParameterSet::ml_dsa_87, "mldsa_87_verify_test.json");
}

// KeyGen_internal(xi) then Algorithm 2 (msg given) or Algorithm 7 from mu (mu only), with rnd
// given or all zero; the signature must match byte for byte and verify.
void run_sign_file(MlDsaParameterSet set, const std::string& name) {
  const MlDsa dsa(set);
  const json file = pqot::test::load_wycheproof(name);
  int signed_msg = 0, signed_mu = 0, refused = 0;
  for_each_test(file, [&](const json& group, const json& t) {
    const Bytes xi = hex(group["privateSeed"]);
    const std::string result = t["result"];
    if (xi.size() != MlDsa::kSeedSize) {
      ASSERT_EQ(result, "invalid");
      try {
        (void)dsa.keygen_internal(xi);
        ADD_FAILURE() << "accepted a seed of " << xi.size() << " bytes";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::invalid_length);
        ++refused;
      }
      return;
    }
    const auto kp = dsa.keygen_internal(xi);
    if (group.contains("publicKey") && group["publicKey"].is_string()) {
      EXPECT_EQ(to_hex(kp.public_key), group["publicKey"].get<std::string>());
    }
    const Bytes rnd = t.contains("rnd") ? hex(t["rnd"]) : Bytes(MlDsa::kRndSize, 0);
    const Bytes ctx = hex_or_empty(t, "ctx");
    if (result == "invalid") {
      // The only invalid vectors with a well-formed seed have a context over 255 bytes.
      ASSERT_GT(ctx.size(), MlDsa::kMaxContextSize);
      try {
        (void)dsa.sign(kp.secret_key, hex(t["msg"]), ctx, rnd);
        ADD_FAILURE() << "signed with a " << ctx.size() << "-byte context";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
        ++refused;
      }
      return;
    }
    ASSERT_EQ(result, "valid");
    const std::string expected = t["sig"];
    if (t.contains("msg")) {
      const Bytes msg = hex(t["msg"]);
      if (t.contains("mu")) {
        EXPECT_EQ(to_hex(dsa.message_representative(kp.public_key, msg, ctx)),
                  t["mu"].get<std::string>());
      }
      const Bytes sig = dsa.sign(kp.secret_key, msg, ctx, rnd);
      EXPECT_EQ(to_hex(sig), expected);
      EXPECT_TRUE(dsa.verify(kp.public_key, msg, ctx, sig));
      ++signed_msg;
    } else {
      const Bytes mu = hex(t["mu"]);
      const Bytes sig = dsa.sign_mu(kp.secret_key, mu, rnd);
      EXPECT_EQ(to_hex(sig), expected);
      EXPECT_TRUE(dsa.verify_mu(kp.public_key, mu, sig));
      ++signed_mu;
    }
  });
  EXPECT_GT(signed_msg, 50);
  EXPECT_GT(signed_mu, 0);
  EXPECT_EQ(refused, 4);
}

TEST(MlDsaWycheproof, SignSeed44) {
  run_sign_file(MlDsaParameterSet::ml_dsa_44, "mldsa_44_sign_seed_test.json");
}
TEST(MlDsaWycheproof, SignSeed65) {
  run_sign_file(MlDsaParameterSet::ml_dsa_65, "mldsa_65_sign_seed_test.json");
}
TEST(MlDsaWycheproof, SignSeed87) {
  run_sign_file(MlDsaParameterSet::ml_dsa_87, "mldsa_87_sign_seed_test.json");
}

TEST(MlDsaWycheproof, Verify44Portable) {
  const simd::PortableScope portable;
  run_verify_file(MlDsaParameterSet::ml_dsa_44, "mldsa_44_verify_test.json");
}
TEST(MlDsaWycheproof, Verify65Portable) {
  const simd::PortableScope portable;
  run_verify_file(MlDsaParameterSet::ml_dsa_65, "mldsa_65_verify_test.json");
}
TEST(MlDsaWycheproof, Verify87Portable) {
  const simd::PortableScope portable;
  run_verify_file(MlDsaParameterSet::ml_dsa_87, "mldsa_87_verify_test.json");
}
TEST(MlDsaWycheproof, SignSeed65Portable) {
  const simd::PortableScope portable;
  run_sign_file(MlDsaParameterSet::ml_dsa_65, "mldsa_65_sign_seed_test.json");
}

}  // namespace
}  // namespace pqot::crypto
