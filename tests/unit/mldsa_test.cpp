// ML-DSA (FIPS 204) beyond the vectors: the accumulated ML-DSA-65 test, round trips, rejection of
// modified signatures, messages and contexts, and the input checks of the API edge.
#include "pqot/crypto/mldsa.hpp"

#include <gtest/gtest.h>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/sha3.hpp"

namespace pqot::crypto {
namespace {

// The accumulated construction of ../shared/testvectors/README.md: seeds xi streamed from
// SHAKE128(""), pk and the deterministic signature of the empty message absorbed into a SHAKE128
// accumulator (Algorithms 6 and 2).
TEST(MlDsa, Accumulated100Iterations65) {
  const MlDsa dsa(MlDsaParameterSet::ml_dsa_65);
  Shake128 stream;
  Shake128 acc;
  Bytes xi(32);
  for (int i = 0; i < 100; ++i) {
    stream.squeeze(xi);
    const auto kp = dsa.keygen_internal(xi);
    const Bytes sig = dsa.sign_deterministic(kp.secret_key, {}, {});
    ASSERT_TRUE(dsa.verify(kp.public_key, {}, {}, sig)) << "iteration " << i;
    acc.absorb(kp.public_key);
    acc.absorb(sig);
  }
  Bytes digest(32);
  acc.squeeze(digest);
  EXPECT_EQ(to_hex(digest), "8358a1843220194417cadbc2651295cd8fc65125b5a5c1a239a16dc8b57ca199");
}

class MlDsaAllSets : public ::testing::TestWithParam<MlDsaParameterSet> {
 protected:
  MlDsa dsa{GetParam()};
};

TEST_P(MlDsaAllSets, SizesFollowTable2) {
  const std::size_t pk[] = {1312, 1952, 2592}, sk[] = {2560, 4032, 4896},
                    sig[] = {2420, 3309, 4627};
  const std::size_t i = GetParam() == MlDsaParameterSet::ml_dsa_44   ? 0
                        : GetParam() == MlDsaParameterSet::ml_dsa_65 ? 1
                                                                     : 2;
  EXPECT_EQ(dsa.public_key_size(), pk[i]);
  EXPECT_EQ(dsa.secret_key_size(), sk[i]);
  EXPECT_EQ(dsa.signature_size(), sig[i]);
}

TEST_P(MlDsaAllSets, RoundTripHedgedAndDeterministic) {
  const Bytes msg = {'s', 'r', 'u', 'p'};
  const Bytes ctx = {'c', 't', 'x'};
  for (int i = 0; i < 5; ++i) {
    const auto kp = dsa.keygen();
    ASSERT_EQ(kp.public_key.size(), dsa.public_key_size());
    ASSERT_EQ(kp.secret_key.size(), dsa.secret_key_size());
    const Bytes hedged = dsa.sign(kp.secret_key, msg, ctx);
    ASSERT_EQ(hedged.size(), dsa.signature_size());
    EXPECT_TRUE(dsa.verify(kp.public_key, msg, ctx, hedged));
    const Bytes det1 = dsa.sign_deterministic(kp.secret_key, msg, ctx);
    const Bytes det2 = dsa.sign_deterministic(kp.secret_key, msg, ctx);
    EXPECT_EQ(det1, det2);
    EXPECT_TRUE(dsa.verify(kp.public_key, msg, ctx, det1));
    EXPECT_NE(hedged, dsa.sign(kp.secret_key, msg, ctx)) << "hedged signing draws a fresh rnd";
  }
}

TEST_P(MlDsaAllSets, KeygenIsDeterministicInXi) {
  const Bytes xi(32, 0x5a);
  const auto a = dsa.keygen_internal(xi);
  const auto b = dsa.keygen_internal(xi);
  EXPECT_EQ(a.public_key, b.public_key);
  EXPECT_TRUE(a.secret_key == b.secret_key);
}

TEST_P(MlDsaAllSets, FlippedBitsAreRejected) {
  const auto kp = dsa.keygen_internal(Bytes(32, 0x01));
  const Bytes msg = {1, 2, 3, 4, 5};
  const Bytes ctx = {9, 8, 7};
  const Bytes sig = dsa.sign_deterministic(kp.secret_key, msg, ctx);
  ASSERT_TRUE(dsa.verify(kp.public_key, msg, ctx, sig));
  // One bit in c~, in z, in the hint positions and in the hint counts (Algorithm 26 layout).
  for (const std::size_t pos :
       {std::size_t{0}, std::size_t{40}, sig.size() / 2, sig.size() - 20, sig.size() - 1}) {
    Bytes bad = sig;
    bad[pos] ^= 0x01;
    EXPECT_FALSE(dsa.verify(kp.public_key, msg, ctx, bad)) << "byte " << pos;
  }
  Bytes bad_msg = msg;
  bad_msg[2] ^= 0x80;
  EXPECT_FALSE(dsa.verify(kp.public_key, bad_msg, ctx, sig));
  Bytes bad_ctx = ctx;
  bad_ctx[0] ^= 0x01;
  EXPECT_FALSE(dsa.verify(kp.public_key, msg, bad_ctx, sig));
  EXPECT_FALSE(dsa.verify(kp.public_key, msg, {}, sig));
  Bytes bad_pk = kp.public_key;
  bad_pk[100] ^= 0x04;
  EXPECT_FALSE(dsa.verify(bad_pk, msg, ctx, sig));
  // Wrong lengths are plain failures for a signature.
  EXPECT_FALSE(dsa.verify(kp.public_key, msg, ctx, Bytes(sig.begin(), sig.end() - 1)));
  Bytes longer = sig;
  longer.push_back(0);
  EXPECT_FALSE(dsa.verify(kp.public_key, msg, ctx, longer));
  EXPECT_FALSE(dsa.verify(kp.public_key, msg, ctx, {}));
}

TEST_P(MlDsaAllSets, ContextOf255BytesWorksAnd256IsRefused) {
  const auto kp = dsa.keygen_internal(Bytes(32, 0x02));
  const Bytes msg = {0x42};
  const Bytes ctx255(255, 0xcc);
  const Bytes sig = dsa.sign_deterministic(kp.secret_key, msg, ctx255);
  EXPECT_TRUE(dsa.verify(kp.public_key, msg, ctx255, sig));
  const Bytes ctx256(256, 0xcc);
  try {
    (void)dsa.sign_deterministic(kp.secret_key, msg, ctx256);
    ADD_FAILURE() << "signed with a 256-byte context";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
  }
  EXPECT_THROW((void)dsa.verify(kp.public_key, msg, ctx256, sig), Error);
}

TEST_P(MlDsaAllSets, PureModeIsSignInternalOnThePrefixedMessage) {
  const auto kp = dsa.keygen_internal(Bytes(32, 0x03));
  const Bytes msg = {'m'};
  const Bytes ctx = {'c', 'x'};
  const Bytes rnd(32, 0x77);
  const Bytes m_prime = {0, 2, 'c', 'x', 'm'};  // 0 || |ctx| || ctx || M (Algorithm 2 line 10)
  const Bytes sig = dsa.sign(kp.secret_key, msg, ctx, rnd);
  EXPECT_EQ(sig, dsa.sign_internal(kp.secret_key, m_prime, rnd));
  EXPECT_TRUE(dsa.verify_internal(kp.public_key, m_prime, sig));
  const Bytes mu = dsa.message_representative(kp.public_key, msg, ctx);
  EXPECT_EQ(sig, dsa.sign_mu(kp.secret_key, mu, rnd));
  EXPECT_TRUE(dsa.verify_mu(kp.public_key, mu, sig));
}

TEST_P(MlDsaAllSets, WrongInputLengthsAreRefused) {
  const auto kp = dsa.keygen_internal(Bytes(32, 0x04));
  auto expect_length_error = [](auto&& f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_length);
    }
  };
  expect_length_error([&] { (void)dsa.keygen_internal(Bytes(31)); });
  expect_length_error([&] { (void)dsa.keygen_internal(Bytes(33)); });
  const Bytes sk(kp.secret_key.begin(), kp.secret_key.end());
  expect_length_error([&] { (void)dsa.sign_deterministic(Bytes(sk.begin(), sk.end() - 1), {}); });
  expect_length_error([&] { (void)dsa.sign(sk, {}, {}, Bytes(31)); });
  expect_length_error([&] { (void)dsa.sign_mu(sk, Bytes(63), Bytes(32)); });
  const Bytes sig = dsa.sign_deterministic(sk, {});
  expect_length_error([&] {
    (void)dsa.verify(Bytes(kp.public_key.begin(), kp.public_key.end() - 1), {}, {}, sig);
  });
}

INSTANTIATE_TEST_SUITE_P(MlDsa, MlDsaAllSets,
                         ::testing::Values(MlDsaParameterSet::ml_dsa_44,
                                           MlDsaParameterSet::ml_dsa_65,
                                           MlDsaParameterSet::ml_dsa_87),
                         [](const auto& info) {
                           return std::string(MlDsa(info.param).name()).substr(7);
                         });

}  // namespace
}  // namespace pqot::crypto
