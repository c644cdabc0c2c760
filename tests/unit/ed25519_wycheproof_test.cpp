// Ed25519 against Wycheproof's ed25519_test.json (tests/data/wycheproof/README.md), through the
// registry only: signature_by_name("Ed25519") with the raw 32-byte public key of RFC 8032 section
// 5.1.5 and 64-byte signatures. Every test of the file runs. The file has only "valid" and
// "invalid" results (asserted): valid signatures must verify; invalid ones (wrong lengths,
// S >= L, non-canonical encodings, truncated or extended signatures; RFC 8032 section 5.1.7)
// must give false, or, only where the public key itself is refused, Error{invalid_key}
// consistently with check_public_key().
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/signature.hpp"
#include "wycheproof.hpp"

namespace pqot::crypto {
namespace {

using nlohmann::json;

Bytes hex(const json& v) {
  return from_hex(v.get<std::string>());
}

// True when check_public_key refuses pk with Error{invalid_key}.
bool key_refused(const Signature& ed, ByteView pk) {
  try {
    ed.check_public_key(pk);
    return false;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_key) << e.what();
    return true;
  }
}

TEST(Ed25519Wycheproof, Verify) {
  const Signature& ed = signature_by_name("Ed25519");
  ASSERT_EQ(ed.public_key_size(), 32u);
  ASSERT_EQ(ed.signature_size(), 64u);
  ASSERT_EQ(ed.max_context_size(), 0u);

  const json file = pqot::test::load_wycheproof("ed25519_test.json");
  ASSERT_EQ(file.at("algorithm"), "EDDSA");
  int run = 0, valid_ok = 0, invalid_false = 0, invalid_key = 0;
  std::map<std::string, std::pair<int, int>> by_flag;  // "<result>/<flag>" -> accepted, rejected
  for (const auto& group : file.at("testGroups")) {
    const json& key = group.at("publicKey");
    ASSERT_EQ(key.at("curve"), "edwards25519");
    const Bytes pk = hex(key.at("pk"));
    const bool refused_key = key_refused(ed, pk);
    for (const auto& t : group.at("tests")) {
      ++run;
      SCOPED_TRACE("tcId " + std::to_string(t.at("tcId").get<int>()) + " " + t.at("flags").dump() +
                   " (" + t.value("comment", "") + ")");
      const std::string result = t.at("result");
      bool accepted = false;
      try {
        accepted = ed.verify(pk, hex(t.at("msg")), {}, hex(t.at("sig")));
        EXPECT_FALSE(refused_key) << "check_public_key refused a key verify() took";
      } catch (const Error& e) {
        EXPECT_TRUE(refused_key && e.code() == ErrorCode::invalid_key)
            << "verify threw " << to_string(e.code()) << ": " << e.what();
        EXPECT_EQ(result, "invalid") << "a valid test's key was refused";
        ++invalid_key;
      }
      for (const auto& f : t.at("flags")) {
        auto& n = by_flag[result + "/" + f.get<std::string>()];
        ++(accepted ? n.first : n.second);
      }
      if (result == "valid") {
        EXPECT_TRUE(accepted) << "valid signature rejected";
        if (accepted) ++valid_ok;
      } else if (result == "invalid") {
        EXPECT_FALSE(accepted) << "invalid signature accepted";
        if (!accepted && !refused_key) ++invalid_false;
      } else {
        ADD_FAILURE() << "unexpected result '" << result << "' (the file has no acceptable tests)";
      }
    }
  }
  EXPECT_EQ(run, file.at("numberOfTests").get<int>()) << "not every test ran";
  EXPECT_EQ(valid_ok + invalid_false + invalid_key, run);
  EXPECT_GT(valid_ok, 50);
  EXPECT_GT(invalid_false, 50);
  std::cout << "[ wycheproof ] ed25519_test.json: " << run << " tests, " << valid_ok
            << " valid accepted, " << invalid_false << " invalid rejected (false), " << invalid_key
            << " invalid refused (invalid_key)\n";
  for (const auto& [flag, n] : by_flag) {
    std::cout << "[ wycheproof ]   " << flag << ": " << n.first << " accepted, " << n.second
              << " rejected\n";
  }
}

}  // namespace
}  // namespace pqot::crypto
