// X25519 against Wycheproof's x25519_test.json (tests/data/wycheproof/README.md): every test of
// the file runs. "acceptable" tests may be accepted (then the secret must match) or rejected;
// which one happened is counted per flag and printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "wycheproof.hpp"
#include <optional>
#include <stdexcept>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/x25519.hpp"

namespace pqot::crypto {
namespace {

using nlohmann::json;


std::string describe(const json& t) {
  return "tcId " + std::to_string(t.at("tcId").get<int>()) + " " + t.at("flags").dump() + " (" +
         t.at("comment").get<std::string>() + ")";
}

bool all_zero(ByteView b) {
  return std::all_of(b.begin(), b.end(), [](std::uint8_t x) { return x == 0; });
}

TEST(X25519Wycheproof, X25519) {
  const json file = pqot::test::load_wycheproof("x25519_test.json");
  ASSERT_EQ(file.at("algorithm"), "XDH");
  std::size_t run = 0;
  int valid_ok = 0, acceptable_accepted = 0, acceptable_rejected = 0, invalid_rejected = 0;
  // "<result>/<flag>" -> {accepted, rejected}
  std::map<std::string, std::pair<int, int>> by_flag;

  for (const auto& group : file.at("testGroups")) {
    ASSERT_EQ(group.at("curve"), "curve25519");
    for (const auto& t : group.at("tests")) {
      ++run;
      const std::string what = describe(t);
      const std::string result = t.at("result");
      const Bytes priv = from_hex(t.at("private").get<std::string>());
      const Bytes pub = from_hex(t.at("public").get<std::string>());
      const Bytes shared = from_hex(t.at("shared").get<std::string>());

      std::optional<Secret<kX25519Size>> got;
      try {
        got = x25519(priv, pub);
      } catch (const Error& e) {
        ADD_FAILURE() << what << ": threw " << to_string(e.code()) << " " << e.what();
        continue;
      }
      const bool accepted = got.has_value();
      const bool matches = accepted && to_hex(got->span()) == to_hex(shared);
      for (const auto& f : t.at("flags")) {
        auto& tally = by_flag[result + "/" + f.get<std::string>()];
        ++(accepted ? tally.first : tally.second);
      }

      if (result == "valid") {
        EXPECT_TRUE(accepted) << what << ": valid test rejected";
        if (accepted) {
          EXPECT_EQ(to_hex(got->span()), to_hex(shared)) << what;
        }
        if (matches) ++valid_ok;
      } else if (result == "acceptable") {
        if (accepted) {
          // Accepting is allowed only with the exact expected secret.
          EXPECT_EQ(to_hex(got->span()), to_hex(shared)) << what << ": accepted, wrong secret";
          ++acceptable_accepted;
        } else {
          ++acceptable_rejected;
        }
        // The API's contract: std::nullopt exactly when the secret is all zero (RFC 7748 6.1).
        EXPECT_EQ(accepted, !all_zero(shared)) << what;
      } else if (result == "invalid") {
        EXPECT_FALSE(accepted) << what << ": invalid test accepted";
        if (!accepted) ++invalid_rejected;
      } else {
        ADD_FAILURE() << what << ": unexpected result " << result;
      }
    }
  }

  EXPECT_EQ(run, file.at("numberOfTests").get<std::size_t>()) << "not every test ran";
  EXPECT_EQ(static_cast<std::size_t>(valid_ok + acceptable_accepted + acceptable_rejected +
                                     invalid_rejected),
            run);
  std::cout << "[ wycheproof ] x25519_test.json: " << run << " tests, " << valid_ok
            << " valid accepted, acceptable: " << acceptable_accepted << " accepted / "
            << acceptable_rejected << " rejected, " << invalid_rejected << " invalid rejected\n";
  for (const auto& [flag, n] : by_flag) {
    std::cout << "[ wycheproof ]   " << flag << ": " << n.first << " accepted, " << n.second
              << " rejected\n";
  }
  RecordProperty("tests_run", static_cast<int>(run));
  RecordProperty("valid_accepted", valid_ok);
  RecordProperty("acceptable_accepted", acceptable_accepted);
  RecordProperty("acceptable_rejected", acceptable_rejected);
}

}  // namespace
}  // namespace pqot::crypto
