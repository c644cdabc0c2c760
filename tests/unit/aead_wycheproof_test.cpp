// AES-GCM against Wycheproof's aes_gcm_test.json (tests/data/wycheproof/README.md): every test of
// the file runs, through aes_gcm_encrypt/aes_gcm_decrypt and, for 256-bit keys with 96-bit IVs,
// through Aes256Gcm as well.
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

#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto {
namespace {

using nlohmann::json;


std::string describe(const json& t) {
  return "tcId " + std::to_string(t.at("tcId").get<int>()) + " " + t.at("flags").dump() + " (" +
         t.at("comment").get<std::string>() + ")";
}

Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
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

bool has_flag(const json& t, const char* flag) {
  for (const auto& f : t.at("flags")) {
    if (f.get<std::string>() == flag) return true;
  }
  return false;
}

TEST(AeadWycheproof, AesGcm) {
  const json file = pqot::test::load_wycheproof("aes_gcm_test.json");
  ASSERT_EQ(file.at("algorithm"), "AES-GCM");
  std::size_t run = 0;
  std::map<std::string, int> passed_by_flag;  // "<result>/<flag>" -> tests that behaved
  int valid_ok = 0, invalid_rejected = 0, aes256gcm_checked = 0;

  for (const auto& group : file.at("testGroups")) {
    ASSERT_EQ(group.at("tagSize").get<int>(), 128) << "the wrappers only produce 16-byte tags";
    for (const auto& t : group.at("tests")) {
      ++run;
      const std::string what = describe(t);
      const std::string result = t.at("result");
      const Bytes key = from_hex(t.at("key").get<std::string>());
      const Bytes iv = from_hex(t.at("iv").get<std::string>());
      const Bytes aad = from_hex(t.at("aad").get<std::string>());
      const Bytes msg = from_hex(t.at("msg").get<std::string>());
      const Bytes ct = from_hex(t.at("ct").get<std::string>());
      const Bytes tag = from_hex(t.at("tag").get<std::string>());
      const Bytes sealed = concat(ct, tag);
      bool ok = true;

      if (result == "valid") {
        Bytes enc, dec;
        const auto enc_err = error_of([&] { enc = aes_gcm_encrypt(key, iv, aad, msg); });
        const auto dec_err = error_of([&] { dec = aes_gcm_decrypt(key, iv, aad, sealed); });
        if (enc_err || dec_err) {
          ADD_FAILURE() << what << ": valid test threw "
                        << to_string(enc_err.value_or(dec_err.value_or(ErrorCode::internal)));
          ok = false;
        } else {
          EXPECT_EQ(to_hex(enc), to_hex(sealed)) << what << ": encryption";
          EXPECT_EQ(to_hex(dec), to_hex(msg)) << what << ": decryption";
          ok = enc == sealed && dec == msg;
        }
        // The protocol-level class must agree wherever it applies.
        if (key.size() == kAes256KeySize && iv.size() == kAesGcmNonceSize) {
          Nonce nonce;
          std::copy(iv.begin(), iv.end(), nonce.begin());
          Aes256Gcm gcm(key);
          EXPECT_EQ(to_hex(gcm.seal(nonce, aad, msg)), to_hex(sealed)) << what << ": Aes256Gcm";
          EXPECT_EQ(to_hex(gcm.open(nonce, aad, sealed)), to_hex(msg)) << what << ": Aes256Gcm";
          ++aes256gcm_checked;
        }
        if (ok) ++valid_ok;
      } else if (result == "invalid") {
        const auto dec_err = error_of([&] { (void)aes_gcm_decrypt(key, iv, aad, sealed); });
        if (!dec_err) {
          ADD_FAILURE() << what << ": invalid test decrypted";
          ok = false;
        }
        if (has_flag(t, "ZeroLengthIv")) {
          // Neither direction may run with an empty IV (SP 800-38D requires len(IV) >= 1).
          const auto enc_err = error_of([&] { (void)aes_gcm_encrypt(key, iv, aad, msg); });
          EXPECT_EQ(enc_err, ErrorCode::invalid_length) << what << ": encryption";
          EXPECT_EQ(dec_err, ErrorCode::invalid_length) << what << ": decryption";
          ok = ok && enc_err == ErrorCode::invalid_length && dec_err == ErrorCode::invalid_length;
        } else {
          // ModifiedTag: the ciphertext is genuine, only the tag was altered, so encrypting
          // reproduces ct with a different tag and decrypting fails on the tag.
          EXPECT_EQ(dec_err, ErrorCode::auth_failed) << what << ": decryption";
          Bytes enc;
          const auto enc_err = error_of([&] { enc = aes_gcm_encrypt(key, iv, aad, msg); });
          EXPECT_FALSE(enc_err) << what << ": encryption threw";
          EXPECT_NE(to_hex(enc), to_hex(sealed)) << what << ": encryption gave the invalid tag";
          if (has_flag(t, "ModifiedTag") && enc.size() == sealed.size()) {
            EXPECT_EQ(to_hex(ByteView(enc).first(ct.size())), to_hex(ct)) << what;
          }
          ok = ok && dec_err == ErrorCode::auth_failed && !enc_err && enc != sealed;
        }
        if (ok) ++invalid_rejected;
      } else {
        ADD_FAILURE() << what << ": unexpected result " << result;
        ok = false;
      }
      if (ok) {
        for (const auto& f : t.at("flags")) ++passed_by_flag[result + "/" + f.get<std::string>()];
      }
    }
  }

  EXPECT_EQ(run, file.at("numberOfTests").get<std::size_t>()) << "not every test ran";
  EXPECT_EQ(static_cast<std::size_t>(valid_ok + invalid_rejected), run);
  std::cout << "[ wycheproof ] aes_gcm_test.json: " << run << " tests, " << valid_ok
            << " valid accepted, " << invalid_rejected << " invalid rejected, " << aes256gcm_checked
            << " also through Aes256Gcm\n";
  for (const auto& [flag, n] : passed_by_flag) {
    std::cout << "[ wycheproof ]   " << flag << ": " << n << " behaved\n";
  }
  RecordProperty("tests_run", static_cast<int>(run));
  RecordProperty("valid_accepted", valid_ok);
  RecordProperty("invalid_rejected", invalid_rejected);
}

}  // namespace
}  // namespace pqot::crypto
