// RSA against every Wycheproof vector of tests/data/wycheproof (see its README): PKCS#1 v1.5 and
// PSS verification through RsaSignature, OAEP decryption through RsaOaep, each key taken in the
// form our API uses (the DER SPKI `publicKeyDer`, the DER PKCS#8 `privateKeyPkcs8`).
//
// "acceptable" (only tcId 8 of the PKCS#1 file, flag MissingNull: a DigestInfo without the NULL
// parameters) may be accepted or rejected per Wycheproof. We pin our choice, rejection: the
// verifier re-encodes EMSA-PKCS1-v1_5 with the NULL (RFC 8017 section 8.2.2 steps 3-4 and section
// 9.2 note 1) and compares, so there is exactly one valid signature per message and key.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/rsa.hpp"
#include "wycheproof.hpp"

namespace pqot::crypto {
namespace {

using nlohmann::json;

Bytes hex(const json& v) {
  return from_hex(v.get<std::string>());
}

bool has_flag(const json& t, const std::string& flag) {
  for (const auto& f : t.at("flags")) {
    if (f.get<std::string>() == flag) return true;
  }
  return false;
}

// Outcome counts per "<result>/<flag>" (or "<result>/-" without flags), printed as the other
// Wycheproof tests do.
struct Tally {
  std::map<std::string, std::pair<int, int>> by_flag;  // accepted, rejected
  std::map<std::string, int> by_result;

  void add(const json& t, bool accepted) {
    const std::string result = t.at("result");
    ++by_result[result];
    if (t.at("flags").empty()) {
      auto& n = by_flag[result + "/-"];
      ++(accepted ? n.first : n.second);
    }
    for (const auto& f : t.at("flags")) {
      auto& n = by_flag[result + "/" + f.get<std::string>()];
      ++(accepted ? n.first : n.second);
    }
  }
  void print(const std::string& file, int run) const {
    std::cout << "[ wycheproof ] " << file << ": " << run << " tests";
    for (const auto& [result, n] : by_result) std::cout << ", " << n << " " << result;
    std::cout << "\n";
    for (const auto& [flag, n] : by_flag) {
      std::cout << "[ wycheproof ]   " << flag << ": " << n.first << " accepted, " << n.second
                << " rejected\n";
    }
  }
};

// Runs `check(group, test)` on every test of the file, asserts numberOfTests of them ran, and
// returns the tally of accepted / rejected per result and flag.
template <class F>
Tally for_each_test(const std::string& name, F&& check) {
  const json file = pqot::test::load_wycheproof(name);
  Tally tally;
  int run = 0;
  for (const auto& group : file.at("testGroups")) {
    for (const auto& t : group.at("tests")) {
      SCOPED_TRACE("tcId " + std::to_string(t.at("tcId").get<int>()) + " " + t.at("flags").dump() +
                   " (" + t.value("comment", "") + ")");
      const bool accepted = check(group, t);
      const std::string result = t.at("result");
      if (result == "valid") {
        EXPECT_TRUE(accepted) << "valid test rejected";
      } else if (result == "invalid") {
        EXPECT_FALSE(accepted) << "invalid test accepted";
      } else if (result != "acceptable") {  // acceptable: the caller's check pins our choice
        ADD_FAILURE() << "unexpected result '" << result << "'";
      }
      tally.add(t, accepted);
      ++run;
    }
  }
  EXPECT_EQ(run, file.at("numberOfTests").get<int>()) << "not every test ran";
  tally.print(name, run);
  return tally;
}

// Every key of the file is a well-formed 2048-bit RSA key, so it must pass the key checks
// (including the two e = 3 keys: the SmallPublicKey vectors are "valid", see rsa.hpp).
bool verify_test(const RsaSignature& rsa, const json& group, const json& t) {
  EXPECT_EQ(group.at("keySize").get<int>(), 2048);
  EXPECT_EQ(group.at("sha"), "SHA-256");
  const Bytes pk = hex(group.at("publicKeyDer"));
  EXPECT_NO_THROW(rsa.check_public_key(pk));
  return rsa.verify(pk, hex(t.at("msg")), {}, hex(t.at("sig")));
}

TEST(RsaWycheproof, Pkcs1v15Sha256Verify) {
  const RsaSignature rsa(RsaModulus::rsa_2048, RsaSignaturePadding::pkcs1_v1_5);
  int acceptable = 0;
  const Tally tally =
      for_each_test("rsa_signature_2048_sha256_test.json", [&](const json& group, const json& t) {
        const bool accepted = verify_test(rsa, group, t);
        if (t.at("result") == "acceptable") {
          // See the top of this file: the one acceptable vector is the missing-NULL DigestInfo,
          // which our strict re-encoding refuses.
          EXPECT_TRUE(has_flag(t, "MissingNull"));
          EXPECT_FALSE(accepted) << "a DigestInfo without NULL verified";
          ++acceptable;
        }
        return accepted;
      });
  EXPECT_EQ(acceptable, 1);
  EXPECT_GT(tally.by_flag.at("valid/SmallPublicKey").first, 0) << "e = 3 keys not exercised";
  EXPECT_GT(tally.by_result.at("invalid"), 200);
}

TEST(RsaWycheproof, PssSha256Mgf1Salt32Verify) {
  const RsaSignature rsa(RsaModulus::rsa_2048, RsaSignaturePadding::pss);
  const Tally tally =
      for_each_test("rsa_pss_2048_sha256_mgf1_32_test.json", [&](const json& group, const json& t) {
        EXPECT_EQ(group.at("mgf"), "MGF1");
        EXPECT_EQ(group.at("mgfSha"), "SHA-256");
        EXPECT_EQ(group.at("sLen").get<int>(), 32);
        return verify_test(rsa, group, t);
      });
  EXPECT_GT(tally.by_result.at("valid"), 50);
  EXPECT_GT(tally.by_result.at("invalid"), 40);
  EXPECT_EQ(tally.by_result.count("acceptable"), 0u);
  // A valid PKCS#1 v1.5 signature must not pass as PSS (and the reverse is in rsa_test.cpp).
  EXPECT_EQ(tally.by_flag.at("invalid/WrongPrimitive").first, 0);
}

// Decryption with the given PKCS#8 key and label: the message for "valid", std::nullopt for
// "invalid" (bad padding and malformed ciphertexts alike, never an exception).
TEST(RsaWycheproof, OaepSha256Mgf1Sha256Decrypt) {
  const RsaOaep& oaep = rsa_oaep_by_name("RSA-2048-OAEP");
  int labelled = 0;
  const Tally tally = for_each_test(
      "rsa_oaep_2048_sha256_mgf1sha256_test.json", [&](const json& group, const json& t) {
        EXPECT_EQ(group.at("keySize").get<int>(), 2048);
        EXPECT_EQ(group.at("sha"), "SHA-256");
        EXPECT_EQ(group.at("mgfSha"), "SHA-256");
        const Bytes sk = hex(group.at("privateKeyPkcs8"));
        const Bytes label = hex(t.at("label"));
        if (!label.empty()) ++labelled;
        std::optional<SecretBytes> msg;
        try {
          msg = oaep.decrypt(sk, hex(t.at("ct")), label);
        } catch (const Error& e) {
          ADD_FAILURE() << "decrypt threw " << to_string(e.code()) << ": " << e.what();
          return false;
        }
        if (msg && t.at("result") == "valid") {
          EXPECT_EQ(to_hex(*msg), t.at("msg").get<std::string>());
        }
        return msg.has_value();
      });
  EXPECT_GT(labelled, 5);
  EXPECT_EQ(tally.by_result.count("acceptable"), 0u);
  EXPECT_GT(tally.by_flag.at("invalid/InvalidCiphertext").second, 0);
  EXPECT_GT(tally.by_flag.at("invalid/InvalidOaepPadding").second, 0);
}

}  // namespace
}  // namespace pqot::crypto
