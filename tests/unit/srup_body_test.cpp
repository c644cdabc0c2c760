// SRUP-PQ bodies (docs/srup-pq.md sections 2.4, 2.5 and 2.7): a round trip for every type in
// every suite, the exact bytes of the spec's examples, every limit at and one past it, every key
// length the suite does not fix, every truncation, trailing bytes, and the sender bugs encode
// refuses.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <stdexcept>

#include "pqot/srup/body.hpp"

namespace pqot::srup {
namespace {

constexpr std::uint64_t kAllOnes = std::numeric_limits<std::uint64_t>::max();

Bytes hex(std::string_view h) {
  return crypto::from_hex(h);
}

constexpr std::array<Suite, 7> kAllSuites = {
    Suite::mldsa65_mlkem768,  Suite::mldsa65_mlkem1024, Suite::mldsa65_xwing, Suite::hybrid_xwing,
    Suite::mldsa87_mlkem1024, Suite::ed25519_xwing,     Suite::legacy_rsa2048};

constexpr std::array<MessageType, 24> kAllTypes = {MessageType::update_initiate,
                                                   MessageType::response,
                                                   MessageType::update_activate,
                                                   MessageType::action,
                                                   MessageType::data,
                                                   MessageType::id_request,
                                                   MessageType::join_request,
                                                   MessageType::join_command,
                                                   MessageType::human_join_request,
                                                   MessageType::human_join_response,
                                                   MessageType::observed_join_request,
                                                   MessageType::observed_join_response,
                                                   MessageType::observation_request,
                                                   MessageType::resign_request,
                                                   MessageType::terminate_command,
                                                   MessageType::deregister_request,
                                                   MessageType::deregister_command,
                                                   MessageType::telemetry,
                                                   MessageType::session_offer,
                                                   MessageType::session_accept,
                                                   MessageType::telemetry_key,
                                                   MessageType::reader_set,
                                                   MessageType::checkpoint,
                                                   MessageType::key_rotation};

// Legacy public keys have no fixed size: the usual RSA-2048 SPKI size stands in.
std::size_t size_or_spki(std::size_t n) {
  return n != 0 ? n : 294;
}

PublicKeys keys_for(Suite suite, std::uint8_t fill = 0x11) {
  const KeySizes s = key_sizes(suite);
  return {Bytes(size_or_spki(s.signature_public), fill),
          Bytes(size_or_spki(s.kem_public), static_cast<std::uint8_t>(fill + 1))};
}

Reading three_phase_reading() {
  Reading r;
  r.timestamp_ms = 1'790'000'000'000;
  r.channels = {{0x0101, 230.5f},  {0x0102, 231.25f},   {0x0103, 229.75f},
                {0x0130, 3450.0f}, {0x0140, 1234567.5}, {0x0150, 50.0f}};
  return r;
}

// A valid body of `type` for an envelope of `suite`.
Body sample(MessageType type, Suite suite) {
  const KeySizes s = key_sizes(suite);
  switch (type) {
    case MessageType::update_initiate: {
      UpdateInitiate b{"https://updates.example/fw-1.2.bin", {}};
      b.digest.fill(0xab);
      return b;
    }
    case MessageType::response:
      return Response{0x20, "done"};
    case MessageType::action:
      return Action{7, Value(21.5f)};
    case MessageType::data:
      return Data{"temperature", Value(std::int16_t{-40})};
    case MessageType::join_request:
    case MessageType::human_join_request:
      return JoinRequest{keys_for(suite)};
    case MessageType::observed_join_request:
      return ObservedJoinRequest{keys_for(suite), 0x0b};
    case MessageType::join_command:
      return JoinCommand{0xc3, Suite::ed25519_xwing, keys_for(Suite::ed25519_xwing)};
    case MessageType::human_join_response:
    case MessageType::observed_join_response: {
      OneTimeCode b;
      b.code.fill(0x42);
      return b;
    }
    case MessageType::observation_request: {
      ObservationRequest b{0xa1, {}};
      b.code.fill(0x43);
      return b;
    }
    case MessageType::telemetry:
      return three_phase_reading();
    case MessageType::session_offer:
      return SessionOffer{
          Bytes(size_or_spki(s.kem_public), 0x21), {1, 2, 3, 4, 5, 6, 7, 8}, 1u << 20, 3600};
    case MessageType::session_accept: {
      SessionAccept b{{8, 7, 6, 5, 4, 3, 2, 1}, Bytes(s.kem_ciphertext, 0x22), {}};
      b.offer_hash.fill(0x23);
      return b;
    }
    case MessageType::telemetry_key:
      return TelemetryKey{9, crypto::SecretBytes(kTelemetryKeySize, 0x5a), 64, 60};
    case MessageType::reader_set:
      return ReaderSet{{{0xc2, suite, Bytes(size_or_spki(s.kem_public), 0x31)},
                        {0xd1, Suite::mldsa65_mlkem1024, Bytes(1568, 0x32)}}};
    case MessageType::checkpoint: {
      Checkpoint b{1, 65, 64, {}};
      b.digest.fill(0xcc);
      return b;
    }
    case MessageType::key_rotation:
      return KeyRotation{keys_for(suite, 0x51), Bytes(s.signature, 0x53)};
    default:
      return Empty{};
  }
}

Refusal refusal_of(MessageType type, Suite suite, ByteView plain) {
  try {
    (void)decode_body(type, suite, plain);
  } catch (const Refused& r) {
    return r.reason();
  }
  ADD_FAILURE() << to_string(type) << ": accepted " << plain.size() << " bytes";
  return Refusal::malformed;
}

void expect_bad_request(MessageType type, Suite suite, ByteView plain, const std::string& why) {
  SCOPED_TRACE(why);
  EXPECT_EQ(refusal_of(type, suite, plain), Refusal::bad_request);
}

// encode(decode(x)) == x, and the decoded alternative is the type's.
void expect_canonical(MessageType type, Suite suite, const Bytes& wire) {
  const Body body = decode_body(type, suite, wire);
  EXPECT_EQ(body.index(), body_index(type)) << to_string(type);
  EXPECT_EQ(encode_body(type, suite, body), wire) << to_string(type);
}

class SrupBody : public ::testing::TestWithParam<Suite> {};

TEST_P(SrupBody, EveryTypeRoundTrips) {
  for (MessageType type : kAllTypes) {
    SCOPED_TRACE(std::string(to_string(type)));
    const Body body = sample(type, GetParam());
    ASSERT_EQ(body.index(), body_index(type));
    const Bytes wire = encode_body(type, GetParam(), body);
    expect_canonical(type, GetParam(), wire);
  }
}

TEST_P(SrupBody, EveryTruncationAndTrailingByteIsBadRequest) {
  for (MessageType type : kAllTypes) {
    const Bytes wire = encode_body(type, GetParam(), sample(type, GetParam()));
    for (std::size_t n = 0; n < wire.size(); ++n) {
      expect_bad_request(type, GetParam(), ByteView(wire).first(n),
                         std::string(to_string(type)) + " cut to " + std::to_string(n));
    }
    Bytes longer = wire;
    longer.push_back(0);
    expect_bad_request(type, GetParam(), longer, std::string(to_string(type)) + " + 1 byte");
  }
}

TEST_P(SrupBody, EncodeRefusesAnAlternativeThatDoesNotFitTheType) {
  for (MessageType type : kAllTypes) {
    for (MessageType other : kAllTypes) {
      if (body_index(other) == body_index(type)) continue;
      EXPECT_THROW(encode_body(type, GetParam(), sample(other, GetParam())), std::invalid_argument)
          << to_string(type) << " with the body of " << to_string(other);
    }
  }
}

// u16 length ‖ bytes for each of the two public keys.
Bytes keys_wire(std::size_t sig, std::size_t kem) {
  Bytes w;
  w.push_back(static_cast<std::uint8_t>(sig >> 8));
  w.push_back(static_cast<std::uint8_t>(sig));
  w.resize(w.size() + sig, 0x11);
  w.push_back(static_cast<std::uint8_t>(kem >> 8));
  w.push_back(static_cast<std::uint8_t>(kem));
  w.resize(w.size() + kem, 0x12);
  return w;
}

TEST_P(SrupBody, KeyLengthsAreTheSuites) {
  const Suite suite = GetParam();
  const KeySizes s = key_sizes(suite);
  if (s.signature_public == 0) GTEST_SKIP() << "legacy: see LegacyKeysAreBounded";
  expect_canonical(MessageType::join_request, suite, keys_wire(s.signature_public, s.kem_public));
  for (std::size_t d : {std::size_t{1}, s.signature_public}) {
    expect_bad_request(MessageType::join_request, suite,
                       keys_wire(s.signature_public - d, s.kem_public), "signature key short");
    expect_bad_request(MessageType::join_request, suite,
                       keys_wire(s.signature_public, s.kem_public - d), "KEM key short");
  }
  expect_bad_request(MessageType::join_request, suite,
                     keys_wire(s.signature_public + 1, s.kem_public), "signature key long");
  expect_bad_request(MessageType::join_request, suite,
                     keys_wire(s.signature_public, s.kem_public + 1), "KEM key long");
  // Encoding checks the same sizes.
  EXPECT_THROW(encode_body(MessageType::join_request, suite,
                           JoinRequest{{Bytes(s.signature_public + 1), Bytes(s.kem_public)}}),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::session_offer, suite,
                           SessionOffer{Bytes(s.kem_public - 1), {}, 1, 1}),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::session_accept, suite,
                           SessionAccept{{}, Bytes(s.kem_ciphertext + 1), {}}),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::key_rotation, suite,
                           KeyRotation{keys_for(suite), Bytes(s.signature - 1)}),
               std::invalid_argument);
}

// A field of `size` bytes is accepted where the suite fixes that size (0: legacy DER, 1..1,024).
bool fits(std::size_t size, std::size_t rule) {
  return rule != 0 ? size == rule : size >= 1 && size <= kMaxLegacyPublicKey;
}

TEST_P(SrupBody, KeyFieldsOfAnotherSuitesSizeAreRefused) {
  const KeySizes mine = key_sizes(GetParam());
  for (Suite other : kAllSuites) {
    const KeySizes theirs = key_sizes(other);
    const std::size_t sig_pub = size_or_spki(theirs.signature_public);
    const std::size_t kem_pub = size_or_spki(theirs.kem_public);
    const std::vector<std::pair<MessageType, bool>> cases = {
        {MessageType::join_request,
         fits(sig_pub, mine.signature_public) && fits(kem_pub, mine.kem_public)},
        {MessageType::session_offer, fits(kem_pub, mine.kem_public)},
        {MessageType::session_accept, theirs.kem_ciphertext == mine.kem_ciphertext},
        {MessageType::key_rotation, fits(sig_pub, mine.signature_public) &&
                                        fits(kem_pub, mine.kem_public) &&
                                        theirs.signature == mine.signature},
    };
    for (const auto& [type, accepted] : cases) {
      SCOPED_TRACE(std::string(to_string(type)) + " of suite " +
                   std::to_string(static_cast<int>(other)));
      const Bytes wire = encode_body(type, other, sample(type, other));
      if (accepted) {
        expect_canonical(type, GetParam(), wire);
      } else {
        expect_bad_request(type, GetParam(), wire, "another suite's sizes");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllSuites, SrupBody, ::testing::ValuesIn(kAllSuites),
                         [](const auto& info) {
                           return std::to_string(static_cast<int>(info.param));
                         });

TEST(SrupBodyKeys, EachSuiteFixesItsOwnSizes) {
  // ML-KEM-768 public key 1,184 vs ML-KEM-1024 1,568: a suite-1 join request is no suite-2 one.
  const Bytes wire = encode_body(MessageType::join_request, Suite::mldsa65_mlkem768,
                                 sample(MessageType::join_request, Suite::mldsa65_mlkem768));
  expect_bad_request(MessageType::join_request, Suite::mldsa65_mlkem1024, wire, "suite 2");
  expect_bad_request(MessageType::join_request, Suite::ed25519_xwing, wire, "suite 6");
  EXPECT_EQ(key_sizes(Suite::mldsa65_mlkem768).signature_public, 1952u);
  EXPECT_EQ(key_sizes(Suite::mldsa65_mlkem768).kem_public, 1184u);
  EXPECT_EQ(key_sizes(Suite::mldsa65_mlkem768).kem_ciphertext, 1088u);
  EXPECT_EQ(key_sizes(Suite::mldsa65_mlkem768).signature, 3309u);
  EXPECT_EQ(key_sizes(Suite::ed25519_xwing).signature_public, 32u);
  EXPECT_EQ(key_sizes(Suite::ed25519_xwing).kem_public, 1216u);
  EXPECT_EQ(key_sizes(Suite::legacy_rsa2048).signature, 256u);
}

TEST(SrupBodyKeys, LegacyKeysAreBounded) {
  const Suite legacy = Suite::legacy_rsa2048;
  expect_canonical(MessageType::join_request, legacy, keys_wire(1, 1));
  expect_canonical(MessageType::join_request, legacy, keys_wire(kMaxLegacyPublicKey, 294));
  expect_bad_request(MessageType::join_request, legacy, keys_wire(0, 294), "empty signature key");
  expect_bad_request(MessageType::join_request, legacy, keys_wire(294, 0), "empty KEM key");
  expect_bad_request(MessageType::join_request, legacy, keys_wire(kMaxLegacyPublicKey + 1, 294),
                     "signature key over 1,024");
  expect_bad_request(MessageType::join_request, legacy, keys_wire(294, kMaxLegacyPublicKey + 1),
                     "KEM key over 1,024");
  EXPECT_THROW(encode_body(MessageType::join_request, legacy,
                           JoinRequest{{Bytes(kMaxLegacyPublicKey + 1), Bytes(294)}}),
               std::invalid_argument);
}

TEST(SrupBodyKeys, JoinCommandKeysHaveTheBodysSuite) {
  // The envelope is suite 1; the new C2 is Ed25519/X-Wing: 32-byte and 1,216-byte keys.
  Bytes wire = hex("00000000000000c306");
  const Bytes keys = keys_wire(32, 1216);
  wire.insert(wire.end(), keys.begin(), keys.end());
  expect_canonical(MessageType::join_command, Suite::mldsa65_mlkem768, wire);
  const auto body =
      std::get<JoinCommand>(decode_body(MessageType::join_command, kDefaultSuite, wire));
  EXPECT_EQ(body.suite, Suite::ed25519_xwing);
  EXPECT_EQ(body.c2_id, 0xc3u);
  for (std::uint8_t suite : {0x00, 0x07, 0x7e, 0x80, 0xff}) {
    Bytes unknown = wire;
    unknown[8] = suite;
    expect_bad_request(MessageType::join_command, kDefaultSuite, unknown, "unknown suite byte");
  }
  EXPECT_THROW(encode_body(MessageType::join_command, kDefaultSuite,
                           JoinCommand{0xc3, static_cast<Suite>(0x09), {}}),
               std::invalid_argument);
}

// A body whose u64 ID at `offset` is replaced by each reserved value must be refused, and encode
// must refuse the same body.
void expect_reserved_ids_refused(MessageType type, const Body& body, std::size_t offset,
                                 const std::function<Body(std::uint64_t)>& with_id) {
  const Bytes wire = encode_body(type, kDefaultSuite, body);
  for (std::uint64_t id : {std::uint64_t{0}, kAllOnes}) {
    Bytes bad = wire;
    for (std::size_t i = 0; i < 8; ++i)
      bad[offset + i] = static_cast<std::uint8_t>(id >> (56 - 8 * i));
    expect_bad_request(type, kDefaultSuite, bad, std::string(to_string(type)) + " reserved ID");
    EXPECT_THROW(encode_body(type, kDefaultSuite, with_id(id)), std::invalid_argument);
  }
}

TEST(SrupBodyIds, ReservedPeerIdsAreRefused) {
  const Suite s = kDefaultSuite;
  const std::size_t keys_size =
      encode_body(MessageType::join_request, s, sample(MessageType::join_request, s)).size();
  expect_reserved_ids_refused(MessageType::observed_join_request,
                              sample(MessageType::observed_join_request, s), keys_size,
                              [&](std::uint64_t id) {
                                return Body(ObservedJoinRequest{keys_for(s), id});
                              });
  expect_reserved_ids_refused(
      MessageType::join_command, sample(MessageType::join_command, s), 0, [](std::uint64_t id) {
        return Body(JoinCommand{id, Suite::ed25519_xwing, keys_for(Suite::ed25519_xwing)});
      });
  expect_reserved_ids_refused(MessageType::observation_request,
                              sample(MessageType::observation_request, s), 0, [](std::uint64_t id) {
                                return Body(ObservationRequest{id, {}});
                              });
  expect_reserved_ids_refused(MessageType::reader_set, sample(MessageType::reader_set, s), 1,
                              [](std::uint64_t id) {
                                return Body(ReaderSet{{{id, kDefaultSuite, Bytes(1184)}}});
                              });
}

// Bodies built byte by byte at each limit and one past it.
Bytes u16_text(std::size_t n, char fill = 'a') {
  Bytes w = {static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
  w.resize(2 + n, static_cast<std::uint8_t>(fill));
  return w;
}

TEST(SrupBodyLimits, UpdateUrlIsOneTo2048Bytes) {
  const auto wire = [](std::size_t n) {
    Bytes w = u16_text(n);
    w.resize(w.size() + 32, 0xab);
    return w;
  };
  expect_canonical(MessageType::update_initiate, kDefaultSuite, wire(1));
  expect_canonical(MessageType::update_initiate, kDefaultSuite, wire(kMaxUrl));
  expect_bad_request(MessageType::update_initiate, kDefaultSuite, wire(kMaxUrl + 1), "2,049");
  expect_bad_request(MessageType::update_initiate, kDefaultSuite, wire(0), "empty URL");
  EXPECT_THROW(encode_body(MessageType::update_initiate, kDefaultSuite,
                           UpdateInitiate{std::string(kMaxUrl + 1, 'a'), {}}),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::update_initiate, kDefaultSuite, UpdateInitiate{"", {}}),
               std::invalid_argument);
}

TEST(SrupBodyLimits, ResponseDetailIsAtMost256Bytes) {
  const auto wire = [](std::size_t n) {
    Bytes w = {0x20};
    const Bytes t = u16_text(n);
    w.insert(w.end(), t.begin(), t.end());
    return w;
  };
  expect_canonical(MessageType::response, kDefaultSuite, wire(0));
  expect_canonical(MessageType::response, kDefaultSuite, wire(kMaxDetail));
  expect_bad_request(MessageType::response, kDefaultSuite, wire(kMaxDetail + 1), "257");
  EXPECT_THROW(encode_body(MessageType::response, kDefaultSuite,
                           Response{0, std::string(kMaxDetail + 1, 'a')}),
               std::invalid_argument);
}

TEST(SrupBodyLimits, DataIdIsOneTo255Bytes) {
  const auto wire = [](std::size_t n) {
    Bytes w = {static_cast<std::uint8_t>(n)};
    w.resize(1 + n, 'i');
    w.push_back(0x00);  // value: none
    return w;
  };
  expect_canonical(MessageType::data, kDefaultSuite, wire(1));
  expect_canonical(MessageType::data, kDefaultSuite, wire(kMaxDataId));
  expect_bad_request(MessageType::data, kDefaultSuite, wire(0), "empty data ID");
  EXPECT_THROW(encode_body(MessageType::data, kDefaultSuite,
                           Data{std::string(kMaxDataId + 1, 'i'), Value()}),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::data, kDefaultSuite, Data{"", Value()}),
               std::invalid_argument);
}

TEST(SrupBodyLimits, TextFieldsMustBeValidUtf8) {
  expect_bad_request(MessageType::update_initiate, kDefaultSuite,
                     hex("0002c0af" + std::string(64, 'a')), "overlong URL");
  expect_bad_request(MessageType::response, kDefaultSuite, hex("200003eda080"), "surrogate detail");
  expect_bad_request(MessageType::data, kDefaultSuite, hex("01ff00"), "FF data ID");
  expect_bad_request(MessageType::data, kDefaultSuite, hex("01610c0001ff"), "FF string value");
  EXPECT_THROW(encode_body(MessageType::response, kDefaultSuite, Response{0, "\xed\xa0\x80"}),
               std::invalid_argument);
}

Bytes reading_wire(std::size_t count, const std::function<std::uint16_t(std::size_t)>& channel) {
  Bytes w = hex("000001a0c4506c00");
  w.push_back(static_cast<std::uint8_t>(count));
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint16_t c = channel(i);
    w.push_back(static_cast<std::uint8_t>(c >> 8));
    w.push_back(static_cast<std::uint8_t>(c));
    w.push_back(0x06);  // uint8
    w.push_back(static_cast<std::uint8_t>(i));
  }
  return w;
}

TEST(SrupBodyLimits, ReadingHasOneTo64ChannelsInAscendingOrder) {
  const auto ascending = [](std::size_t i) { return static_cast<std::uint16_t>(i + 1); };
  expect_canonical(MessageType::telemetry, kDefaultSuite, reading_wire(1, ascending));
  expect_canonical(MessageType::telemetry, kDefaultSuite, reading_wire(kMaxChannels, ascending));
  expect_bad_request(MessageType::telemetry, kDefaultSuite,
                     reading_wire(kMaxChannels + 1, ascending), "65 channels");
  expect_bad_request(MessageType::telemetry, kDefaultSuite, reading_wire(0, ascending), "none");
  expect_bad_request(MessageType::telemetry, kDefaultSuite,
                     reading_wire(2, [](std::size_t) { return std::uint16_t{7}; }), "twice");
  expect_bad_request(
      MessageType::telemetry, kDefaultSuite,
      reading_wire(2, [](std::size_t i) { return static_cast<std::uint16_t>(9 - i); }),
      "descending");
  expect_bad_request(MessageType::telemetry, kDefaultSuite, hex("000001a0c4506c0001010100"),
                     "channel without a value");
  Reading r = three_phase_reading();
  std::swap(r.channels[0], r.channels[1]);
  EXPECT_THROW(encode_body(MessageType::telemetry, kDefaultSuite, r), std::invalid_argument);
  r.channels.clear();
  EXPECT_THROW(encode_body(MessageType::telemetry, kDefaultSuite, r), std::invalid_argument);
  r.channels.resize(kMaxChannels + 1);
  for (std::size_t i = 0; i < r.channels.size(); ++i) {
    r.channels[i] = {static_cast<std::uint16_t>(i), Value(true)};
  }
  EXPECT_THROW(encode_body(MessageType::telemetry, kDefaultSuite, r), std::invalid_argument);
}

TEST(SrupBodyLimits, ReaderSetHasOneTo16ReadersInAscendingOrder) {
  const auto set = [](std::size_t n, bool ascending) {
    ReaderSet b;
    for (std::size_t i = 0; i < n; ++i) {
      b.readers.push_back({ascending ? 10 + i : 10 + n - i, kDefaultSuite, Bytes(1184, 0x31)});
    }
    return b;
  };
  const Bytes at = encode_body(MessageType::reader_set, kDefaultSuite, set(kMaxReaders, true));
  expect_canonical(MessageType::reader_set, kDefaultSuite, at);
  EXPECT_THROW(encode_body(MessageType::reader_set, kDefaultSuite, set(kMaxReaders + 1, true)),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::reader_set, kDefaultSuite, set(0, true)),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::reader_set, kDefaultSuite, set(2, false)),
               std::invalid_argument);
  // 17 readers on the wire: the count is refused before any reader is read.
  Bytes past = at;
  past[0] = static_cast<std::uint8_t>(kMaxReaders + 1);
  const Bytes one = encode_body(MessageType::reader_set, kDefaultSuite, set(1, true));
  past.insert(past.end(), one.begin() + 1, one.end());
  expect_bad_request(MessageType::reader_set, kDefaultSuite, past, "17 readers");
  expect_bad_request(MessageType::reader_set, kDefaultSuite, hex("00"), "no reader");
  // The same reader twice.
  Bytes twice = hex("02");
  twice.insert(twice.end(), one.begin() + 1, one.end());
  twice.insert(twice.end(), one.begin() + 1, one.end());
  expect_bad_request(MessageType::reader_set, kDefaultSuite, twice, "duplicate reader");
  // A reader's key has the reader's own suite's size.
  Bytes other_suite = one;
  other_suite[9] = static_cast<std::uint8_t>(Suite::mldsa65_mlkem1024);
  expect_bad_request(MessageType::reader_set, kDefaultSuite, other_suite, "reader suite 2");
}

TEST(SrupBodyLimits, SessionOfferLimits) {
  const Suite s = kDefaultSuite;
  const auto offer = [](std::uint32_t messages, std::uint32_t seconds) {
    return SessionOffer{Bytes(1184, 0x21), {}, messages, seconds};
  };
  const Bytes good =
      encode_body(MessageType::session_offer, s, offer(kMaxSessionMessages, kMaxSessionSeconds));
  expect_canonical(MessageType::session_offer, s, good);
  expect_canonical(MessageType::session_offer, s,
                   encode_body(MessageType::session_offer, s, offer(1, 1)));
  const std::size_t limits = good.size() - 8;
  const auto with = [&](std::uint32_t messages, std::uint32_t seconds) {
    Bytes w = good;
    for (int i = 0; i < 4; ++i) {
      w[limits + i] = static_cast<std::uint8_t>(messages >> (24 - 8 * i));
      w[limits + 4 + i] = static_cast<std::uint8_t>(seconds >> (24 - 8 * i));
    }
    return w;
  };
  expect_canonical(MessageType::session_offer, s, with(kMaxSessionMessages, 1));
  expect_bad_request(MessageType::session_offer, s, with(kMaxSessionMessages + 1, 60),
                     "messages + 1");
  expect_bad_request(MessageType::session_offer, s, with(0, 60), "no messages");
  expect_bad_request(MessageType::session_offer, s, with(100, kMaxSessionSeconds + 1),
                     "seconds + 1");
  expect_bad_request(MessageType::session_offer, s, with(100, 0), "no seconds");
  EXPECT_THROW(encode_body(MessageType::session_offer, s, offer(0, 60)), std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::session_offer, s, offer(100, kMaxSessionSeconds + 1)),
               std::invalid_argument);
}

TEST(SrupBodyLimits, TelemetryKeyIs32BytesAndABoundedInterval) {
  const auto key = [](std::uint16_t messages, std::uint16_t seconds, std::size_t size = 32) {
    return TelemetryKey{7, crypto::SecretBytes(size, 0x5a), messages, seconds};
  };
  const Bytes good = encode_body(MessageType::telemetry_key, kDefaultSuite, key(64, 60));
  EXPECT_EQ(crypto::to_hex(good), "00000007" + crypto::to_hex(Bytes(32, 0x5a)) + "0040003c");
  const auto decoded =
      std::get<TelemetryKey>(decode_body(MessageType::telemetry_key, kDefaultSuite, good));
  EXPECT_EQ(decoded.epoch, 7u);
  EXPECT_TRUE(crypto::ct_equal(decoded.key, crypto::SecretBytes(32, 0x5a)));
  EXPECT_EQ(decoded.checkpoint_messages, 64);
  EXPECT_EQ(decoded.checkpoint_seconds, 60);
  for (const auto& [m, s, ok] : {std::tuple{1, 1, true},
                                 {kMaxCheckpointMessages, kMaxCheckpointSeconds, true},
                                 {0, 60, false},
                                 {kMaxCheckpointMessages + 1, 60, false},
                                 {64, 0, false},
                                 {64, kMaxCheckpointSeconds + 1, false}}) {
    Bytes w = good;
    w[36] = static_cast<std::uint8_t>(m >> 8);
    w[37] = static_cast<std::uint8_t>(m);
    w[38] = static_cast<std::uint8_t>(s >> 8);
    w[39] = static_cast<std::uint8_t>(s);
    if (ok) {
      expect_canonical(MessageType::telemetry_key, kDefaultSuite, w);
    } else {
      expect_bad_request(MessageType::telemetry_key, kDefaultSuite, w,
                         "interval " + std::to_string(m) + "/" + std::to_string(s));
      EXPECT_THROW(encode_body(MessageType::telemetry_key, kDefaultSuite,
                               key(static_cast<std::uint16_t>(m), static_cast<std::uint16_t>(s))),
                   std::invalid_argument);
    }
  }
  EXPECT_THROW(encode_body(MessageType::telemetry_key, kDefaultSuite, key(64, 60, 31)),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::telemetry_key, kDefaultSuite, key(64, 60, 33)),
               std::invalid_argument);
}

TEST(SrupBodyLimits, CheckpointCoversANonEmptyRunThatDoesNotWrap) {
  const auto wire = [](std::uint64_t first, std::uint16_t count) {
    Checkpoint c{3, 0, 0, {}};
    c.digest.fill(0xcc);
    Bytes w = hex("00000003");
    for (int i = 7; i >= 0; --i) w.push_back(static_cast<std::uint8_t>(first >> (8 * i)));
    w.push_back(static_cast<std::uint8_t>(count >> 8));
    w.push_back(static_cast<std::uint8_t>(count));
    w.insert(w.end(), c.digest.begin(), c.digest.end());
    return w;
  };
  expect_canonical(MessageType::checkpoint, kDefaultSuite, wire(1, 1));
  expect_canonical(MessageType::checkpoint, kDefaultSuite, wire(1, kMaxCheckpointMessages));
  expect_canonical(MessageType::checkpoint, kDefaultSuite, wire(kAllOnes, 1));
  expect_canonical(MessageType::checkpoint, kDefaultSuite, wire(kAllOnes - 63, 64));
  expect_bad_request(MessageType::checkpoint, kDefaultSuite, wire(kAllOnes - 62, 64), "wraps");
  expect_bad_request(MessageType::checkpoint, kDefaultSuite, wire(kAllOnes, 2), "wraps");
  expect_bad_request(MessageType::checkpoint, kDefaultSuite, wire(0, 1), "sequence 0");
  expect_bad_request(MessageType::checkpoint, kDefaultSuite, wire(1, 0), "count 0");
  expect_bad_request(MessageType::checkpoint, kDefaultSuite, wire(1, kMaxCheckpointMessages + 1),
                     "count 1,025");
  EXPECT_THROW(encode_body(MessageType::checkpoint, kDefaultSuite, Checkpoint{1, 0, 1, {}}),
               std::invalid_argument);
  EXPECT_THROW(encode_body(MessageType::checkpoint, kDefaultSuite, Checkpoint{1, 1, 0, {}}),
               std::invalid_argument);
}

TEST(SrupBodyValues, BadValuesInsideBodiesAreBadRequest) {
  expect_bad_request(MessageType::action, kDefaultSuite, hex("070e"), "unknown tag 0x0E");
  expect_bad_request(MessageType::action, kDefaultSuite, hex("07ff"), "unknown tag 0xFF");
  expect_bad_request(MessageType::action, kDefaultSuite, hex("070102"), "bool 2");
  expect_bad_request(MessageType::action, kDefaultSuite, hex("070affc00000"), "negative NaN");
  expect_bad_request(MessageType::data, kDefaultSuite,
                     hex("0161"
                         "0c1001"),
                     "string over 4,096");
  expect_bad_request(MessageType::telemetry, kDefaultSuite, hex("000001a0c4506c000101010e"),
                     "unknown tag in a reading");
}

TEST(SrupBodyEmpty, TypesWithoutABodyTakeNoBytes) {
  for (MessageType type : {MessageType::update_activate, MessageType::id_request,
                           MessageType::resign_request, MessageType::terminate_command,
                           MessageType::deregister_request, MessageType::deregister_command}) {
    EXPECT_TRUE(encode_body(type, kDefaultSuite, Empty{}).empty());
    EXPECT_TRUE(std::holds_alternative<Empty>(decode_body(type, kDefaultSuite, {})));
    expect_bad_request(type, kDefaultSuite, hex("00"), std::string(to_string(type)) + " + 1 byte");
  }
}

TEST(SrupBodyStatus, UnknownStatusCodesPassThrough) {
  const Bytes wire = hex("550000");  // 0x55: not a code of section 2.5
  const auto r = std::get<Response>(decode_body(MessageType::response, kDefaultSuite, wire));
  EXPECT_EQ(r.status, 0x55);
  EXPECT_EQ(status_name(r.status), "UNKNOWN");
  EXPECT_FALSE(status_of(0x55));
  EXPECT_EQ(encode_body(MessageType::response, kDefaultSuite, r), wire);
  EXPECT_EQ(to_string(Status::bad_request), "BAD_REQUEST");
  EXPECT_EQ(status_of(0x92), Status::bad_request);
  EXPECT_EQ(status_of(0x90), Status::interrupted);
  EXPECT_EQ(status_name(0xff), "UPDATE_DIGEST_MISMATCH");
  int named = 0;
  for (int code = 0; code < 256; ++code) {
    if (const auto s = status_of(static_cast<std::uint8_t>(code))) {
      ++named;
      EXPECT_EQ(static_cast<int>(*s), code);
      EXPECT_NE(to_string(*s), "UNKNOWN");
    }
  }
  EXPECT_EQ(named, 24);  // every code of the table in section 2.5
}

// The examples of docs/srup-pq.md section 2.7, byte for byte.
TEST(SrupBodyExamples, ActionWithAFloat32Argument) {
  const Bytes wire = encode_body(MessageType::action, kDefaultSuite, Action{5, Value(21.5f)});
  EXPECT_EQ(crypto::to_hex(wire), "050a41ac0000");
  const auto a = std::get<Action>(decode_body(MessageType::action, kDefaultSuite, wire));
  EXPECT_EQ(a.action_id, 5);
  EXPECT_EQ(std::get<float>(a.argument), 21.5f);
}

TEST(SrupBodyExamples, ThreePhaseReading) {
  const Bytes wire = encode_body(MessageType::telemetry, kDefaultSuite, three_phase_reading());
  EXPECT_EQ(crypto::to_hex(wire),
            "000001a0c4506c00"
            "06"
            "01010a43668000"
            "01020a43674000"
            "01030a4365c000"
            "01300a4557a000"
            "01400b4132d68780000000"
            "01500a42480000");
  EXPECT_EQ(std::get<Reading>(decode_body(MessageType::telemetry, kDefaultSuite, wire)),
            three_phase_reading());
}

TEST(SrupBodyExamples, ResponseDataAndCheckpoint) {
  EXPECT_EQ(crypto::to_hex(encode_body(MessageType::response, kDefaultSuite, Response{0x20, "ok"})),
            "2000026f6b");
  EXPECT_EQ(crypto::to_hex(encode_body(MessageType::data, kDefaultSuite,
                                       Data{"temp", Value(std::int16_t{-40})})),
            "0474656d7003ffd8");
  Checkpoint c{1, 65, 64, {}};
  c.digest.fill(0xaa);
  EXPECT_EQ(crypto::to_hex(encode_body(MessageType::checkpoint, kDefaultSuite, c)),
            "00000001"
            "0000000000000041"
            "0040" +
                std::string(64, 'a'));
  UpdateInitiate u{"https://u.example/f", {}};
  u.digest.fill(0x01);
  EXPECT_EQ(crypto::to_hex(encode_body(MessageType::update_initiate, kDefaultSuite, u)),
            "0013"
            "68747470733a2f2f752e6578616d706c652f66" +
                crypto::to_hex(u.digest));
}

}  // namespace
}  // namespace pqot::srup
