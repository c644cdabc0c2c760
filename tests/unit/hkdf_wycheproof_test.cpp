// HKDF-SHA-256 against Wycheproof's hkdf_sha256_test.json (tests/data/wycheproof/README.md):
// every test of the file runs, one-shot and as extract then expand.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "wycheproof.hpp"
#include <optional>
#include <stdexcept>
#include <string>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/hkdf.hpp"

namespace pqot::crypto {
namespace {

using nlohmann::json;


std::string describe(const json& t) {
  return "tcId " + std::to_string(t.at("tcId").get<int>()) + " " + t.at("flags").dump() + " (" +
         t.at("comment").get<std::string>() + ")";
}

// The ErrorCode thrown by f, or nothing when f returns normally.
template <class F>
std::optional<ErrorCode> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}

TEST(HkdfWycheproof, HkdfSha256) {
  const json file = pqot::test::load_wycheproof("hkdf_sha256_test.json");
  ASSERT_EQ(file.at("algorithm"), "HKDF-SHA-256");
  std::size_t run = 0;
  int valid_ok = 0, invalid_rejected = 0;
  std::map<std::string, int> passed_by_flag;  // "<result>/<flag>" -> tests that behaved

  for (const auto& group : file.at("testGroups")) {
    for (const auto& t : group.at("tests")) {
      ++run;
      const std::string what = describe(t);
      const std::string result = t.at("result");
      const Bytes ikm = from_hex(t.at("ikm").get<std::string>());
      const Bytes salt = from_hex(t.at("salt").get<std::string>());
      const Bytes info = from_hex(t.at("info").get<std::string>());
      const std::size_t size = t.at("size").get<std::size_t>();
      bool ok = false;

      if (result == "valid") {
        const Bytes okm = from_hex(t.at("okm").get<std::string>());
        SecretBytes one_shot, two_step;
        const auto err = error_of([&] {
          one_shot = hkdf_sha256(ikm, salt, info, size);
          two_step = hkdf_sha256_expand(hkdf_sha256_extract(ikm, salt), info, size);
        });
        if (err) {
          ADD_FAILURE() << what << ": valid test threw " << to_string(*err);
        } else {
          EXPECT_EQ(to_hex(one_shot), to_hex(okm)) << what << ": hkdf_sha256";
          EXPECT_EQ(to_hex(two_step), to_hex(okm)) << what << ": extract + expand";
          ok = to_hex(one_shot) == to_hex(okm) && to_hex(two_step) == to_hex(okm);
        }
        if (ok) ++valid_ok;
      } else if (result == "invalid") {
        // The file's only invalid kind is SizeTooLarge (> 255 * HashLen, RFC 5869 section 2.3).
        const auto err = error_of([&] { (void)hkdf_sha256(ikm, salt, info, size); });
        const auto err2 =
            error_of([&] { (void)hkdf_sha256_expand(hkdf_sha256_extract(ikm, salt), info, size); });
        EXPECT_EQ(err, ErrorCode::invalid_argument) << what << ": hkdf_sha256";
        EXPECT_EQ(err2, ErrorCode::invalid_argument) << what << ": extract + expand";
        ok = err == ErrorCode::invalid_argument && err2 == ErrorCode::invalid_argument;
        if (ok) ++invalid_rejected;
      } else {
        ADD_FAILURE() << what << ": unexpected result " << result;
      }
      if (ok) {
        for (const auto& f : t.at("flags")) ++passed_by_flag[result + "/" + f.get<std::string>()];
      }
    }
  }

  EXPECT_EQ(run, file.at("numberOfTests").get<std::size_t>()) << "not every test ran";
  EXPECT_EQ(static_cast<std::size_t>(valid_ok + invalid_rejected), run);
  std::cout << "[ wycheproof ] hkdf_sha256_test.json: " << run << " tests, " << valid_ok
            << " valid accepted, " << invalid_rejected << " invalid rejected\n";
  for (const auto& [flag, n] : passed_by_flag) {
    std::cout << "[ wycheproof ]   " << flag << ": " << n << " behaved\n";
  }
  RecordProperty("tests_run", static_cast<int>(run));
  RecordProperty("valid_accepted", valid_ok);
  RecordProperty("invalid_rejected", invalid_rejected);
}

}  // namespace
}  // namespace pqot::crypto
