// SRUP-PQ identity files (docs/srup-pq.md section 1.1): the record inside the PEM byte for byte,
// round trips for every suite, every malformed record refused before anything is copied, and the
// files' permissions and no-overwrite rule.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "../support/temp_dir.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/pem.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/identity.hpp"

namespace pqot::srup {
namespace {

IdentitySeeds fixed_seeds(Suite suite, std::uint8_t byte) {
  const SuiteInfo info = suite_info(suite);
  return {crypto::SecretBytes(crypto::signature_by_name(info.signature).seed_size(), byte),
          crypto::SecretBytes(crypto::kem_by_name(info.kem).keygen_seed_size(), byte)};
}

crypto::ByteView text_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The DER-like record inside a public identity's PEM, to be edited by the tests.
Bytes public_record(const PublicIdentity& pub) {
  const std::string pem = encode_public_identity(pub);
  const crypto::SecretBytes der = crypto::pem::decode(text_bytes(pem), kPublicIdentityLabel);
  return Bytes(der.begin(), der.end());
}

std::string armour(const Bytes& record) {
  return crypto::pem::encode<std::string>(kPublicIdentityLabel, record);
}

crypto::ErrorCode decode_error(const std::string& pem) {
  try {
    (void)decode_public_identity(text_bytes(pem));
  } catch (const crypto::Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "decoded";
  return crypto::ErrorCode::internal;
}

TEST(SrupIdentity, RoundTripsForEverySuite) {
  for (Suite suite : {Suite::mldsa65_mlkem768, Suite::mldsa65_mlkem1024, Suite::mldsa65_xwing,
                      Suite::hybrid_xwing, Suite::mldsa87_mlkem1024, Suite::ed25519_xwing}) {
    SCOPED_TRACE(std::string(suite_info(suite).name));
    const IdentitySeeds seeds = random_seeds(suite);
    const LoadedIdentity made = make_identity(0xa1, suite, seeds);
    const auto key = encode_identity_key(0xa1, suite, seeds);
    const LoadedIdentity back = decode_identity_key(text_bytes(key));
    EXPECT_EQ(back.self.id, 0xa1u);
    EXPECT_EQ(back.self.suite, suite);
    EXPECT_EQ(back.self.signature_secret, made.self.signature_secret);
    EXPECT_EQ(back.self.kem_secret, made.self.kem_secret);
    EXPECT_EQ(back.pub.keys.signature_public, made.pub.keys.signature_public);
    const PublicIdentity pub = decode_public_identity(text_bytes(encode_public_identity(made.pub)));
    EXPECT_EQ(pub.id, 0xa1u);
    EXPECT_EQ(pub.keys.suite, suite);
    EXPECT_EQ(pub.keys.signature_public, made.pub.keys.signature_public);
    EXPECT_EQ(pub.keys.kem_public, made.pub.keys.kem_public);
  }
}

// Section 1.1's layout: magic, version, kind, ID, suite, then two length-prefixed fields.
TEST(SrupIdentity, RecordLayoutIsTheSpecs) {
  const IdentitySeeds seeds = fixed_seeds(Suite::ed25519_xwing, 0x04);
  const LoadedIdentity id = make_identity(0x0102030405060708, Suite::ed25519_xwing, seeds);
  const Bytes rec = public_record(id.pub);
  ASSERT_EQ(rec.size(), 17u + 32 + 2 + 1216);
  const Bytes head(rec.begin(), rec.begin() + 17);
  const Bytes want = {'S', 'R', 'P', 'Q', 1, 'P', 1, 2, 3, 4, 5, 6, 7, 8, 0x06, 0x00, 0x20};
  EXPECT_EQ(head, want);
  EXPECT_TRUE(std::equal(id.pub.keys.signature_public.begin(), id.pub.keys.signature_public.end(),
                         rec.begin() + 17));
  EXPECT_EQ(rec[17 + 32], 0x04);  // 1,216 = 0x04c0
  EXPECT_EQ(rec[17 + 33], 0xc0);

  const auto key = encode_identity_key(0x0102030405060708, Suite::ed25519_xwing, seeds);
  const crypto::SecretBytes der = crypto::pem::decode(text_bytes(std::string_view(key.data(), key.size())),
                                                      kIdentityKeyLabel);
  ASSERT_EQ(der.size(), 17u + 32 + 2 + 32);
  EXPECT_EQ(der[5], 'K');
  EXPECT_EQ(der[16], 32);
  EXPECT_EQ(der[17], 0x04);  // the seed itself
}

TEST(SrupIdentity, MalformedRecordsAreRefused) {
  const LoadedIdentity id = make_identity(0xa1, Suite::ed25519_xwing, fixed_seeds(Suite::ed25519_xwing, 0x05));
  const Bytes good = public_record(id.pub);
  ASSERT_NO_THROW((void)decode_public_identity(text_bytes(armour(good))));

  auto edited = [&](std::size_t at, std::uint8_t value) {
    Bytes r = good;
    r[at] = value;
    return armour(r);
  };
  EXPECT_EQ(decode_error(edited(0, 'X')), crypto::ErrorCode::invalid_encoding);   // magic
  EXPECT_EQ(decode_error(edited(4, 2)), crypto::ErrorCode::invalid_encoding);     // version
  EXPECT_EQ(decode_error(edited(5, 'K')), crypto::ErrorCode::invalid_encoding);   // kind
  EXPECT_EQ(decode_error(edited(14, 0x7F)), crypto::ErrorCode::invalid_encoding); // legacy suite
  EXPECT_EQ(decode_error(edited(14, 0x09)), crypto::ErrorCode::invalid_encoding); // unknown suite
  EXPECT_EQ(decode_error(edited(14, 0x01)), crypto::ErrorCode::invalid_encoding); // lengths of another suite
  EXPECT_EQ(decode_error(edited(16, 0x21)), crypto::ErrorCode::invalid_encoding); // signature key length
  EXPECT_EQ(decode_error(edited(17 + 32 + 1, 0xc1)), crypto::ErrorCode::invalid_encoding);  // KEM key length

  Bytes reserved = good;
  std::fill(reserved.begin() + 6, reserved.begin() + 14, 0x00);
  EXPECT_EQ(decode_error(armour(reserved)), crypto::ErrorCode::invalid_encoding);
  std::fill(reserved.begin() + 6, reserved.begin() + 14, 0xff);
  EXPECT_EQ(decode_error(armour(reserved)), crypto::ErrorCode::invalid_encoding);

  Bytes longer = good;
  longer.push_back(0);
  EXPECT_EQ(decode_error(armour(longer)), crypto::ErrorCode::invalid_encoding);
  for (std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{16}, good.size() - 1}) {
    EXPECT_EQ(decode_error(armour(Bytes(good.begin(), good.begin() + n))),
              crypto::ErrorCode::invalid_encoding) << n;
  }
  // The wrong PEM label: a key file is not a public identity.
  const auto key = encode_identity_key(0xa1, Suite::ed25519_xwing, fixed_seeds(Suite::ed25519_xwing, 5));
  EXPECT_EQ(decode_error(std::string(key.data(), key.size())), crypto::ErrorCode::invalid_encoding);
}

TEST(SrupIdentity, PublicKeysTheAlgorithmsRefuseAreRefused) {
  const LoadedIdentity id = make_identity(0xa1, Suite::mldsa65_mlkem768, fixed_seeds(Suite::mldsa65_mlkem768, 6));
  Bytes rec = public_record(id.pub);
  // The first ML-KEM coefficient set to 0xfff >= q: FIPS 203's modulus check fails.
  const std::size_t kem_at = 17 + 1952 + 2;
  rec[kem_at] = 0xff;
  rec[kem_at + 1] |= 0x0f;
  EXPECT_EQ(decode_error(armour(rec)), crypto::ErrorCode::invalid_key);
}

TEST(SrupIdentity, BadArgumentsAreRefused) {
  const IdentitySeeds seeds = fixed_seeds(Suite::ed25519_xwing, 7);
  EXPECT_THROW((void)make_identity(0, Suite::ed25519_xwing, seeds), std::invalid_argument);
  EXPECT_THROW((void)make_identity(~std::uint64_t{0}, Suite::ed25519_xwing, seeds), std::invalid_argument);
  EXPECT_THROW((void)make_identity(1, Suite::mldsa65_mlkem768, seeds), std::invalid_argument);
  EXPECT_THROW((void)random_seeds(Suite::legacy_rsa2048), std::invalid_argument);
  EXPECT_THROW((void)make_identity(1, Suite::legacy_rsa2048, seeds), std::invalid_argument);
}

TEST(SrupIdentity, FilesAreWrittenOnceWithTheirModes) {
  const test::TempDir dir("srup-identity");
  const IdentitySeeds seeds = fixed_seeds(Suite::ed25519_xwing, 8);
  write_identity(dir.path(), 0xc2, Suite::ed25519_xwing, seeds);
  struct stat key {}, pub {};
  ASSERT_EQ(::stat((dir.path() / "identity.key").c_str(), &key), 0);
  ASSERT_EQ(::stat((dir.path() / "identity.pub").c_str(), &pub), 0);
  EXPECT_EQ(key.st_mode & 0777, 0600u);
  EXPECT_EQ(pub.st_mode & 0777 & ~0022u, 0644u & ~0022u);  // the umask may narrow it

  const LoadedIdentity loaded = load_identity(dir.path());
  EXPECT_EQ(loaded.self.id, 0xc2u);
  const PublicIdentity pubid = load_public_identity(dir.path() / "identity.pub");
  EXPECT_EQ(pubid.keys.signature_public, loaded.pub.keys.signature_public);
  EXPECT_EQ(pubid.keys.kem_public, loaded.pub.keys.kem_public);

  // Never overwritten: the second keygen fails and the first identity is still there.
  EXPECT_THROW(write_identity(dir.path(), 0xc3, Suite::ed25519_xwing, seeds), std::system_error);
  EXPECT_EQ(load_identity(dir.path()).self.id, 0xc2u);

  // A key file others may read is refused, not used.
  ::chmod((dir.path() / "identity.key").c_str(), 0644);
  EXPECT_THROW((void)load_identity(dir.path()), std::runtime_error);
}

TEST(SrupIdentity, AnExistingPublicFileLeavesNoOrphanKey) {
  const test::TempDir dir("srup-identity");
  std::ofstream(dir.path() / "identity.pub") << "someone else's\n";
  EXPECT_THROW(write_identity(dir.path(), 0xc2, Suite::ed25519_xwing, fixed_seeds(Suite::ed25519_xwing, 9)),
               std::system_error);
  struct stat gone {};
  EXPECT_NE(::stat((dir.path() / "identity.key").c_str(), &gone), 0);
}

}  // namespace
}  // namespace pqot::srup
