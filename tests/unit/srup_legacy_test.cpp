// The original SRUP version-5 envelope (docs/srup-legacy.md): the four envelopes the original
// library made (tests/data/srup-original, expected fields from its README table) decode and verify,
// a flipped byte anywhere in them is caught, every malformed form is refused, and pqot emits the
// same layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include "pqot/crypto/error.hpp"
#include "pqot/crypto/key_file.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/legacy.hpp"

namespace pqot::srup::legacy {
namespace {

Bytes read_vector(const std::string& name) {
  std::ifstream in(std::string(PQOT_TEST_DATA_DIR) + "/srup-original/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

const Bytes& c2_public_key() {
  static const Bytes spki = [] {
    const Bytes pem = read_vector("c2.pub");
    const auto key = crypto::decode_public_key(pem, &crypto::signature_by_name(kSuiteName));
    return key.public_key;
  }();
  return spki;
}

// Two fresh RSA-2048 keys, made once (RSA key generation takes a while).
const crypto::SignatureKeyPair& fresh_key(int which) {
  static const crypto::SignatureKeyPair keys[2] = {crypto::signature_by_name(kSuiteName).keygen(),
                                                   crypto::signature_by_name(kSuiteName).keygen()};
  return keys[which];
}

Bytes text(std::string_view s) {
  return Bytes(s.begin(), s.end());
}

// The README table's common fields.
constexpr std::uint64_t kSender = 0x1112131415161718;
const Bytes kToken = text("b7e3c1a0-5f2d-4c8e-9a1b-2d3c4e5f6a7b");

const std::vector<std::string> kVectors = {"action.bin", "data.bin", "response.bin",
                                           "initiate.bin"};

Reason reason_of(ByteView wire) {
  try {
    decode(wire);
  } catch (const LegacyError& e) {
    return e.reason();
  }
  ADD_FAILURE() << "decoded";
  return Reason::invalid_argument;
}

// ---- the original's envelopes (vector README table) --------------------------------------------

TEST(SrupLegacy, ActionVectorDecodesToReadmeFields) {
  const Bytes wire = read_vector("action.bin");
  ASSERT_EQ(wire.size(), 315u);
  const LegacyEnvelope e = decode(wire);
  EXPECT_EQ(e.type, 0x04);
  EXPECT_EQ(e.sequence, 0x0102030405060708u);
  EXPECT_EQ(e.sender, kSender);
  EXPECT_EQ(e.token, kToken);
  EXPECT_EQ(e.signature.size(), 256u);
  EXPECT_EQ(e.body, Body{Action{7}});
}

TEST(SrupLegacy, DataVectorDecodesToReadmeFields) {
  const Bytes wire = read_vector("data.bin");
  ASSERT_EQ(wire.size(), 336u);
  const LegacyEnvelope e = decode(wire);
  EXPECT_EQ(e.type, 0x05);
  EXPECT_EQ(e.sequence, 0x0102030405060709u);
  EXPECT_EQ(e.sender, kSender);
  EXPECT_EQ(e.token, kToken);
  EXPECT_EQ(e.body, Body{(Data{text("power_total"), text("6558.19")})});
}

TEST(SrupLegacy, ResponseVectorDecodesToReadmeFields) {
  const Bytes wire = read_vector("response.bin");
  ASSERT_EQ(wire.size(), 315u);
  const LegacyEnvelope e = decode(wire);
  EXPECT_EQ(e.type, 0x02);
  EXPECT_EQ(e.sequence, 0x010203040506070Au);
  EXPECT_EQ(e.sender, kSender);
  EXPECT_EQ(e.token, kToken);
  EXPECT_EQ(e.body, Body{Response{0x20}});
}

TEST(SrupLegacy, InitiateVectorDecodesToReadmeFields) {
  const Bytes wire = read_vector("initiate.bin");
  ASSERT_EQ(wire.size(), 415u);
  const LegacyEnvelope e = decode(wire);
  EXPECT_EQ(e.type, 0x01);
  EXPECT_EQ(e.sequence, 0x010203040506070Bu);
  EXPECT_EQ(e.sender, kSender);
  EXPECT_EQ(e.token, kToken);
  const auto* b = std::get_if<Initiate>(&e.body);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->url, "http://updates.example/fw-1.2.bin");
  // The README abbreviates the digest: "9f86d0…0a08" (64 hex chars).
  ASSERT_EQ(b->digest.size(), 64u);
  EXPECT_EQ(b->digest.substr(0, 6), "9f86d0");
  EXPECT_EQ(b->digest.substr(60), "0a08");
  EXPECT_EQ(b->digest.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(SrupLegacy, EveryVectorVerifiesWithC2Key) {
  for (const auto& name : kVectors) {
    const LegacyEnvelope e = decode(read_vector(name));
    EXPECT_TRUE(verify(e, c2_public_key())) << name;
    EXPECT_FALSE(verify(e, fresh_key(0).public_key)) << name << " under another key";
  }
}

TEST(SrupLegacy, EveryVectorReencodesToItsOwnBytes) {
  for (const auto& name : kVectors) {
    const Bytes wire = read_vector(name);
    EXPECT_EQ(encode(decode(wire)), wire) << name;
  }
}

// Reference section 2: the signed bytes are the serialization without the signature field; that
// field starts after version, type, sequence, sender (18 bytes) and the token field (2 + 36).
TEST(SrupLegacy, SignedBytesOmitTheWholeSignatureField) {
  for (const auto& name : kVectors) {
    const Bytes wire = read_vector(name);
    const std::size_t at = 18 + 2 + kToken.size();
    ASSERT_EQ(wire[at], 0x01) << name;  // u16 big-endian 256
    ASSERT_EQ(wire[at + 1], 0x00) << name;
    Bytes expected(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(at));
    expected.insert(expected.end(), wire.begin() + static_cast<std::ptrdiff_t>(at + 2 + 256),
                    wire.end());
    EXPECT_EQ(signed_bytes(ByteView(wire)), expected) << name;
    EXPECT_EQ(signed_bytes(decode(wire)), expected) << name;
  }
}

// Issue 12: a flipped byte anywhere in any of them must not verify. Every byte position; the bit
// flipped moves with the position (i mod 8), so all eight bit positions of every field kind are
// covered while a run costs one RSA verification per byte.
TEST(SrupLegacy, AFlippedByteAnywhereInAnyVectorIsCaught) {
  for (const auto& name : kVectors) {
    const Bytes wire = read_vector(name);
    for (std::size_t i = 0; i < wire.size(); ++i) {
      Bytes bad = wire;
      bad[i] ^= static_cast<std::uint8_t>(1u << (i % 8));
      bool accepted = false;
      try {
        accepted = verify(decode(bad), c2_public_key());
      } catch (const LegacyError&) {
      }
      EXPECT_FALSE(accepted) << name << " byte " << i;
    }
  }
}

// ---- refusals (docs/srup-legacy.md, "Refusals")
// --------------------------------------------------

TEST(SrupLegacy, EveryTruncationIsMalformed) {
  for (const auto& name : kVectors) {
    const Bytes wire = read_vector(name);
    for (std::size_t n = 0; n < wire.size(); ++n) {
      // A copy of exactly n bytes, so ASan sees any read past it.
      const Bytes cut(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_EQ(reason_of(cut), Reason::malformed) << name << " cut to " << n;
    }
  }
}

TEST(SrupLegacy, TrailingBytesAreMalformed) {
  for (const auto& name : kVectors) {
    Bytes wire = read_vector(name);
    wire.push_back(0x00);
    EXPECT_EQ(reason_of(wire), Reason::malformed) << name;
    EXPECT_THROW(signed_bytes(ByteView(wire)), LegacyError) << name;
  }
}

TEST(SrupLegacy, EveryOtherVersionIsRefused) {
  Bytes wire = read_vector("action.bin");
  for (int v = 0; v < 256; ++v) {
    if (v == 5) continue;
    wire[0] = static_cast<std::uint8_t>(v);
    EXPECT_EQ(reason_of(wire), Reason::unsupported_version) << v;
  }
}

// Reference section 1, "Parser quirks": the original read 65,535 bytes past a 20-byte input whose
// token length is 0xFFFF. Here the length is checked against the 2 bytes that remain (0).
TEST(SrupLegacy, TwentyByteInputWithHugeTokenLengthIsRefusedInBounds) {
  Bytes wire = read_vector("action.bin");
  wire.resize(20);
  wire[18] = 0xFF;
  wire[19] = 0xFF;
  EXPECT_EQ(reason_of(wire), Reason::malformed);
}

TEST(SrupLegacy, LengthFieldsPastTheEndAreMalformed) {
  const Bytes data = read_vector("data.bin");
  const std::size_t token_at = 18, sig_at = 18 + 2 + 36, body_at = sig_at + 2 + 256;
  auto with_u16 = [](Bytes b, std::size_t at, std::size_t v) {
    b[at] = static_cast<std::uint8_t>(v >> 8);
    b[at + 1] = static_cast<std::uint8_t>(v);
    return b;
  };
  // Token: one byte longer than everything after its length.
  EXPECT_EQ(reason_of(with_u16(data, token_at, data.size() - token_at - 2 + 1)), Reason::malformed);
  // data_id: past the end; data (after "power_total"): one byte past the end.
  EXPECT_EQ(reason_of(with_u16(data, body_at, 0xFFFF)), Reason::malformed);
  const std::size_t data_at = body_at + 2 + 11;
  EXPECT_EQ(reason_of(with_u16(data, data_at, data.size() - data_at - 2 + 1)), Reason::malformed);
  // Initiate's digest: one byte past the end.
  const Bytes init = read_vector("initiate.bin");
  const std::size_t digest_at = body_at + 2 + 33;
  EXPECT_EQ(reason_of(with_u16(init, digest_at, 65)), Reason::malformed);
}

// The signature must be exactly 256 bytes (RSA-2048); a shorter or longer field is refused even
// when the envelope is otherwise well formed.
TEST(SrupLegacy, SignatureOtherThan256BytesIsUnsupported) {
  const Bytes wire = read_vector("action.bin");
  const std::size_t sig_at = 18 + 2 + 36;
  Bytes shorter = wire;  // 255-byte signature, the action byte follows it
  shorter.erase(shorter.begin() + static_cast<std::ptrdiff_t>(sig_at + 2));
  shorter[sig_at + 1] = 0xFF;
  shorter[sig_at] = 0x00;
  EXPECT_EQ(reason_of(shorter), Reason::unsupported_signature);
  Bytes longer = wire;  // 257 bytes
  longer.insert(longer.begin() + static_cast<std::ptrdiff_t>(sig_at + 2), 0x00);
  longer[sig_at + 1] = 0x01;
  EXPECT_EQ(reason_of(longer), Reason::unsupported_signature);
}

// Reference section 1, the type table: 17 built types in scope; Generic, the group types and the
// syndication range by name; everything else unknown.
TEST(SrupLegacy, TypeCodesAreClassifiedAsTheReferenceLists) {
  const std::vector<int> in_scope = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x09, 0x0A, 0x0B,
                                     0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13};
  const std::vector<int> refused = {0x00, 0x07, 0x08, 0x14};  // + 0x21..0x2F below
  Bytes wire = read_vector("action.bin");
  for (int t = 0; t < 256; ++t) {
    wire[1] = static_cast<std::uint8_t>(t);
    const bool scope = std::find(in_scope.begin(), in_scope.end(), t) != in_scope.end();
    const bool named =
        std::find(refused.begin(), refused.end(), t) != refused.end() || (t >= 0x21 && t <= 0x2F);
    if (scope) {
      // Decodes or fails on the body (action.bin's one body byte), never on the type.
      try {
        decode(wire);
      } catch (const LegacyError& e) {
        EXPECT_EQ(e.reason(), Reason::malformed) << t;
      }
    } else if (named) {
      EXPECT_EQ(reason_of(wire), Reason::unsupported_type) << t;
      EXPECT_FALSE(type_name(static_cast<std::uint8_t>(t)).empty()) << t;
    } else {
      EXPECT_EQ(reason_of(wire), Reason::unknown_type) << t;
    }
  }
}

// ---- emitting (docs/srup-legacy.md, "Emitting") ------------------------------------------------

// The verified Action dump of the reference, section 1: seq 0x0102…08, sender 0x1112…18, token
// "TOK", action 7: 05 04 | 08 07 … 01 | 18 17 … 11 | 00 03 54 4F 4B | 01 00 <sig> | 07.
TEST(SrupLegacy, EncodeWritesTheReferenceByteOrders) {
  LegacyEnvelope e = make_envelope(0x0102030405060708, 0x1112131415161718, text("TOK"), Action{7});
  e.signature.assign(256, 0xAA);
  // Built as hex text: GCC 12 warns wrongly (-Warray-bounds) on inserting into a braced vector.
  const Bytes expected = crypto::from_hex(
      "0504"
      "0807060504030201"
      "1817161514131211"
      "0003544F4B"
      "0100" +
      std::string(512, 'a') + "07");
  EXPECT_EQ(encode(e), expected);
}

// IDs in bodies are u64 little-endian too (reference section 1).
TEST(SrupLegacy, BodyIdsAreLittleEndian) {
  LegacyEnvelope e = make_envelope(1, 2, {}, JoinCommand{0x0102030405060708});
  e.signature.assign(256, 0);
  const Bytes wire = encode(e);
  const Bytes tail(wire.end() - 8, wire.end());
  EXPECT_EQ(tail, (Bytes{0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
}

// The benchmark baseline must be the original's layout: the README's action.bin fields signed with
// a fresh key give 315 bytes whose signed part equals action.bin's.
TEST(SrupLegacy, FreshlySignedActionMatchesTheOriginalLayout) {
  const LegacyEnvelope e =
      sign(make_envelope(0x0102030405060708, kSender, kToken, Action{7}), fresh_key(0).secret_key);
  const Bytes wire = encode(e);
  const Bytes original = read_vector("action.bin");
  EXPECT_EQ(wire.size(), 315u);
  EXPECT_EQ(signed_bytes(ByteView(wire)), signed_bytes(ByteView(original)));
  EXPECT_NE(wire, original);  // another key, another signature
  EXPECT_TRUE(verify(decode(wire), fresh_key(0).public_key));
  EXPECT_FALSE(verify(decode(wire), c2_public_key()));
}

std::vector<Body> one_of_each_type() {
  return {Initiate{"http://u.example/fw.bin", std::string(64, 'a')},
          Response{0x50},
          Activate{},
          Action{0x2E},
          Data{text("temp"), Bytes{0x00, 0xFF, 0x10}},
          IdRequest{},
          JoinRequest{},
          JoinCommand{0xFEDCBA9876543210},
          HumanJoinRequest{},
          HumanJoinResponse{Bytes(332, 0x5A)},
          ObservedJoinRequest{0x0123456789ABCDEF},
          ObservedJoinResponse{Bytes(1, 0x01)},
          ObservationRequest{42, Bytes(300, 0x33)},
          ResignRequest{},
          TerminateCommand{},
          DeregisterRequest{},
          DeregisterCommand{}};
}

TEST(SrupLegacy, SignEncodeDecodeVerifyRoundTripsEveryType) {
  const auto bodies = one_of_each_type();
  ASSERT_EQ(bodies.size(), std::variant_size_v<Body>);
  std::uint64_t seq = 1;
  for (const auto& body : bodies) {
    const LegacyEnvelope e =
        sign(make_envelope(seq++, kSender, kToken, body), fresh_key(0).secret_key);
    const Bytes wire = encode(e);
    const LegacyEnvelope back = decode(wire);
    EXPECT_EQ(back, e) << int{e.type};
    EXPECT_EQ(back.type, type_of(body));
    EXPECT_TRUE(verify(back, fresh_key(0).public_key)) << int{e.type};
    EXPECT_FALSE(verify(back, fresh_key(1).public_key)) << int{e.type};
    // The original's sizes with a 36-byte token (reference section 1, "Sizes"): 314 bytes plus
    // the body.
    if (std::holds_alternative<Activate>(body)) {
      EXPECT_EQ(wire.size(), 314u);
    }
    if (std::holds_alternative<Response>(body)) {
      EXPECT_EQ(wire.size(), 315u);
    }
  }
}

TEST(SrupLegacy, ChangedFieldsNoLongerVerify) {
  const LegacyEnvelope e =
      sign(make_envelope(7, kSender, kToken, Data{text("v"), text("1")}), fresh_key(0).secret_key);
  ASSERT_TRUE(verify(e, fresh_key(0).public_key));
  auto changed = e;
  changed.sequence += 1;
  EXPECT_FALSE(verify(changed, fresh_key(0).public_key));
  changed = e;
  changed.sender ^= 1;
  EXPECT_FALSE(verify(changed, fresh_key(0).public_key));
  changed = e;
  changed.token.push_back('x');
  EXPECT_FALSE(verify(changed, fresh_key(0).public_key));
  changed = e;
  std::get<Data>(changed.body).data = text("2");
  EXPECT_FALSE(verify(changed, fresh_key(0).public_key));
  changed = e;
  changed.signature.pop_back();
  EXPECT_FALSE(verify(changed, fresh_key(0).public_key));
}

TEST(SrupLegacy, EncodeRefusesWhatTheWireCannotCarry) {
  LegacyEnvelope e = make_envelope(1, 2, Bytes(65536, 'x'), Activate{});
  e.signature.assign(256, 0);
  try {
    encode(e);
    ADD_FAILURE() << "a 65,536-byte token was encoded";
  } catch (const LegacyError& err) {
    EXPECT_EQ(err.reason(), Reason::invalid_argument);
  }
  e.token.resize(65535);  // the largest a u16 length allows
  EXPECT_EQ(decode(encode(e)), e);

  LegacyEnvelope mismatch = make_envelope(1, 2, {}, Activate{});
  mismatch.signature.assign(256, 0);
  mismatch.type = 0x04;
  EXPECT_THROW(encode(mismatch), LegacyError);
  EXPECT_THROW(signed_bytes(mismatch), LegacyError);

  LegacyEnvelope unsigned_env = make_envelope(1, 2, {}, Activate{});
  try {
    encode(unsigned_env);
    ADD_FAILURE() << "an unsigned envelope was encoded";
  } catch (const LegacyError& err) {
    EXPECT_EQ(err.reason(), Reason::unsupported_signature);
  }
}

TEST(SrupLegacy, VerifyThrowsForKeysThatAreNotRsa2048) {
  const LegacyEnvelope e = decode(read_vector("action.bin"));
  const auto ed = crypto::signature_by_name("Ed25519").keygen();
  EXPECT_THROW(verify(e, ed.public_key), crypto::Error);
  const auto rsa3072 = crypto::signature_by_name("RSA-3072-PKCS1").keygen();
  EXPECT_THROW(verify(e, rsa3072.public_key), crypto::Error);
}

TEST(SrupLegacy, ReasonsHaveTheirRefusalNames) {
  EXPECT_STREQ(to_string(Reason::malformed), "MALFORMED");
  EXPECT_STREQ(to_string(Reason::unsupported_type), "UNSUPPORTED_TYPE");
  try {
    decode(Bytes{0x05, 0x25});
    ADD_FAILURE();
  } catch (const LegacyError& e) {
    EXPECT_NE(std::string(e.what()).find("Syndicated Data"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(kLegacyWarning.empty());
}

}  // namespace
}  // namespace pqot::srup::legacy
