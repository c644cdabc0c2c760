// The schemes of `srup bench-payload`: each one's publisher (encrypts a reading to the
// subscriber's public key) and subscriber (decrypts it). docs/srup-tool.md, "bench-payload", gives
// the constructions; in short:
//   RSA chunked  the paper's: the reading cut into chunks of at most max_plaintext_size(), each
//                RSAES-OAEP-encrypted (SHA-256), base64, joined with ','.
//   RSA hybrid   RSA-KEM style: a random 32-byte z OAEP-encrypted, then as KEM + AEAD with z.
//   KEM + AEAD   (ct, ss) = Encaps(pk); k = HKDF-SHA256(ikm = ss, salt = "", info = kKdfInfo, 32);
//                wire = ct || AES-256-GCM(k, nonce 0^96, aad = ct, reading). The zero nonce is
//                safe because every message has its own key (a fresh encapsulation).
//   SRUP-PQ      mode 1 (sealed Data, signed and encrypted to the subscriber) and mode 3 (the
//                telemetry group key), through pqot::srup itself.
#include <algorithm>
#include <array>
#include <stdexcept>

#include "bench_header.hpp"
#include "bench_payload.hpp"
#include "cli.hpp"
#include "pqot/common/clock.hpp"
#include "pqot/crypto/aead.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/hkdf.hpp"
#include "pqot/crypto/kem.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/crypto/rsa.hpp"
#include "pqot/crypto/signature.hpp"
#include "pqot/srup/identity.hpp"
#include "pqot/srup/protect.hpp"
#include "pqot/srup/telemetry.hpp"

namespace pqot::srup_tool::payload {

namespace {

constexpr std::string_view kKdfInfo = "pqot bench-payload v1 AES-256-GCM key";
constexpr std::uint64_t kMeterId = 0xa1;    // the publisher: the meter
constexpr std::uint64_t kMonitorId = 0xc2;  // the subscriber: the monitor (SRUP-PQ's C2)
constexpr std::string_view kReadingTopic = "srup/d/00000000000000a1/telemetry";
constexpr std::size_t kMaxEnvelopes = 8;  // per SRUP-PQ telemetry frame: reading, checkpoint, keys

constexpr SchemeInfo kSchemes[] = {
    {"RSA-2048-chunked", Family::rsa_chunked, "RSA-2048-OAEP", 0, false, true},
    {"RSA-2048-hybrid", Family::rsa_hybrid, "RSA-2048-OAEP", 0, false, true},
    {"RSA-3072-chunked", Family::rsa_chunked, "RSA-3072-OAEP", 1, false, true},
    {"RSA-3072-hybrid", Family::rsa_hybrid, "RSA-3072-OAEP", 1, false, true},
    {"LightSaber", Family::kem_aead, "LightSaber", 1, false, true},
    {"NTRU-HPS-2048-509", Family::kem_aead, "NTRU-HPS-2048-509", 1, false, true},
    {"ML-KEM-512", Family::kem_aead, "ML-KEM-512", 1, true, false},
    {"RSA-7680-chunked", Family::rsa_chunked, "RSA-7680-OAEP", 3, false, true},
    {"RSA-7680-hybrid", Family::rsa_hybrid, "RSA-7680-OAEP", 3, false, true},
    {"Saber", Family::kem_aead, "Saber", 3, false, true},
    {"NTRU-HPS-2048-677", Family::kem_aead, "NTRU-HPS-2048-677", 3, false, true},
    {"NTRU-HRSS-701", Family::kem_aead, "NTRU-HRSS-701", 3, false, true},
    {"ML-KEM-768", Family::kem_aead, "ML-KEM-768", 3, true, false},
    {"X-Wing", Family::kem_aead, "X-Wing", 3, false, false},
    {"SRUP-PQ-sealed", Family::srup_sealed, "ML-DSA-65/ML-KEM-768", 3, false, false},
    {"SRUP-PQ-telemetry", Family::srup_telemetry, "ML-DSA-65/ML-KEM-768", 3, false, false},
    {"FireSaber", Family::kem_aead, "FireSaber", 5, false, true},
    {"NTRU-HPS-4096-821", Family::kem_aead, "NTRU-HPS-4096-821", 5, false, true},
    {"ML-KEM-1024", Family::kem_aead, "ML-KEM-1024", 5, true, false},
};

const crypto::Kem& kem_of(const SchemeInfo& s) {
  return crypto::any_kem_by_name(s.primitive);
}

crypto::Nonce zero_nonce() {
  return crypto::make_nonce(crypto::NoncePrefix{0, 0, 0, 0}, 0);
}

SecretBytes aead_key(ByteView shared_secret) {
  return crypto::hkdf_sha256(shared_secret, {}, crypto::as_bytes(kKdfInfo), crypto::kAes256KeySize);
}

// wire = head || AES-256-GCM(HKDF(secret), 0, aad = head, plaintext)
Bytes seal_after(ByteView head, ByteView secret, ByteView plaintext) {
  crypto::Aes256Gcm aead(aead_key(secret));
  Bytes wire(head.size() + plaintext.size() + crypto::kAesGcmTagSize);
  std::copy(head.begin(), head.end(), wire.begin());
  aead.seal_into(zero_nonce(), head, plaintext, crypto::MutableByteView(wire).subspan(head.size()));
  return wire;
}

SecretBytes open_after(ByteView head, ByteView secret, ByteView sealed) {
  if (sealed.size() < crypto::kAesGcmTagSize)
    throw std::invalid_argument("bench-payload: short ciphertext");
  crypto::Aes256Gcm aead(aead_key(secret));
  SecretBytes out(sealed.size() - crypto::kAesGcmTagSize);
  aead.open_into(zero_nonce(), head, sealed, out);
  return out;
}

// ---- RSA -------------------------------------------------------------------------------------

class RsaSubscriber final : public Subscriber {
 public:
  RsaSubscriber(const SchemeInfo& s, const RsaKeys& keys)
      : oaep_(crypto::rsa_oaep_by_name(s.primitive)),
        chunked_(s.family == Family::rsa_chunked),
        public_(keys.public_key),
        secret_(oaep_.prepare_secret_key(keys.secret_key)) {}
  Bytes public_part() const override { return public_; }
  SecretBytes decrypt(ByteView wire) override {
    if (!chunked_) {
      const std::size_t n = oaep_.ciphertext_size();
      if (wire.size() < n) throw std::invalid_argument("bench-payload: short ciphertext");
      const auto z = oaep_.decrypt(secret_, wire.first(n));
      if (!z) throw std::runtime_error("bench-payload: OAEP decryption failed");
      return open_after(wire.first(n), *z, wire.subspan(n));
    }
    SecretBytes out;
    const std::string_view text(reinterpret_cast<const char*>(wire.data()), wire.size());
    std::size_t at = 0;
    while (at <= text.size()) {
      const std::size_t end = std::min(text.find(',', at), text.size());
      const auto part = oaep_.decrypt(secret_, base64_decode(text.substr(at, end - at)));
      if (!part) throw std::runtime_error("bench-payload: OAEP decryption failed");
      out.insert(out.end(), part->begin(), part->end());
      at = end + 1;
    }
    return out;
  }

 private:
  const crypto::RsaOaep& oaep_;
  bool chunked_;
  Bytes public_;
  crypto::RsaOaepKey secret_;  // imported once, as the KEMs' keys are prepared once
};

class RsaPublisher final : public Publisher {
 public:
  RsaPublisher(const SchemeInfo& s, ByteView pk)
      : oaep_(crypto::rsa_oaep_by_name(s.primitive)),
        chunked_(s.family == Family::rsa_chunked),
        public_(oaep_.prepare_public_key(pk)) {}
  Bytes encrypt(ByteView plaintext) override {
    if (!chunked_) {
      SecretBytes z(32);
      crypto::random_bytes(z);
      return seal_after(oaep_.encrypt(public_, z), z, plaintext);
    }
    std::string text;
    for (std::size_t at = 0; at < plaintext.size(); at += oaep_.max_plaintext_size()) {
      const std::size_t n = std::min(oaep_.max_plaintext_size(), plaintext.size() - at);
      if (at > 0) text += ',';
      text += base64_encode(oaep_.encrypt(public_, plaintext.subspan(at, n)));
    }
    return Bytes(text.begin(), text.end());
  }

 private:
  const crypto::RsaOaep& oaep_;
  bool chunked_;
  crypto::RsaOaepKey public_;
};

// ---- KEM + AES-256-GCM -----------------------------------------------------------------------

class KemSubscriber final : public Subscriber {
 public:
  explicit KemSubscriber(const crypto::Kem& kem) : kem_(kem) {
    auto pair = kem_.generate_keypair();
    public_ = std::move(pair.public_key);
    secret_ = kem_.prepare_secret_key(pair.secret_key);
  }
  Bytes public_part() const override { return public_; }
  SecretBytes decrypt(ByteView wire) override {
    const std::size_t n = kem_.ciphertext_size();
    if (wire.size() < n) throw std::invalid_argument("bench-payload: short ciphertext");
    const SecretBytes ss = kem_.decapsulate_prepared(*secret_, wire.first(n));
    return open_after(wire.first(n), ss, wire.subspan(n));
  }

 private:
  const crypto::Kem& kem_;
  Bytes public_;
  crypto::PreparedKemKeyPtr secret_;
};

class KemPublisher final : public Publisher {
 public:
  KemPublisher(const crypto::Kem& kem, ByteView pk)
      : kem_(kem), public_(kem.prepare_public_key(pk)) {}
  Bytes encrypt(ByteView plaintext) override {
    SecretBytes seed(kem_.encaps_seed_size());
    crypto::random_bytes(seed);
    const auto enc = kem_.encapsulate_prepared(*public_, seed);
    return seal_after(enc.ciphertext, enc.shared_secret, plaintext);
  }

 private:
  const crypto::Kem& kem_;
  crypto::PreparedKemKeyPtr public_;
};

// ---- SRUP-PQ ---------------------------------------------------------------------------------

// The meter and the monitor, enrolled with each other: identities from fixed seeds, derived in
// both processes (as each peer holds the other's enrolled public keys).
struct SrupPeers {
  srup::Identity meter;
  srup::PeerKeys meter_keys;
  srup::Identity monitor;
  srup::PeerKeys monitor_keys;
};

SrupPeers make_srup_peers() {
  const srup::Suite suite = srup::kDefaultSuite;  // ML-DSA-65 / ML-KEM-768
  const srup::SuiteInfo info = srup::suite_info(suite);
  auto make = [&](std::uint64_t id, std::uint8_t fill) {
    const srup::IdentitySeeds seeds{
        SecretBytes(crypto::signature_by_name(info.signature).seed_size(), fill),
        SecretBytes(crypto::kem_by_name(info.kem).keygen_seed_size(), fill)};
    return srup::make_identity(id, suite, seeds);
  };
  auto meter = make(kMeterId, 0x0a);
  auto monitor = make(kMonitorId, 0x0c);
  SrupPeers p{std::move(meter.self), meter.pub.keys, std::move(monitor.self), monitor.pub.keys};
  srup::prepare_keys(p.meter_keys);
  srup::prepare_keys(p.monitor_keys);
  return p;
}

// A frame of envelopes: per envelope, its type (1 byte), length (u32 big-endian), bytes.
constexpr std::size_t kEnvelopeFraming = 5;

Bytes frame_envelopes(const std::vector<srup::Outgoing>& out) {
  Bytes wire;
  for (const auto& o : out) {
    const auto n = static_cast<std::uint32_t>(o.wire.size());
    wire.push_back(static_cast<std::uint8_t>(o.type));
    for (int s = 24; s >= 0; s -= 8) wire.push_back(static_cast<std::uint8_t>(n >> s));
    wire.insert(wire.end(), o.wire.begin(), o.wire.end());
  }
  return wire;
}

std::vector<std::pair<srup::MessageType, ByteView>> unframe_envelopes(ByteView wire) {
  std::vector<std::pair<srup::MessageType, ByteView>> out;
  while (!wire.empty()) {
    if (wire.size() < kEnvelopeFraming || out.size() == kMaxEnvelopes) {
      throw std::invalid_argument("bench-payload: bad envelope frame");
    }
    const std::uint32_t n = (std::uint32_t{wire[1]} << 24) | (std::uint32_t{wire[2]} << 16) |
                            (std::uint32_t{wire[3]} << 8) | wire[4];
    if (n > wire.size() - kEnvelopeFraming)
      throw std::invalid_argument("bench-payload: bad envelope frame");
    out.emplace_back(static_cast<srup::MessageType>(wire[0]), wire.subspan(kEnvelopeFraming, n));
    wire = wire.subspan(kEnvelopeFraming + n);
  }
  return out;
}

class SrupSubscriber final : public Subscriber {
 public:
  explicit SrupSubscriber(bool telemetry)
      : peers_(make_srup_peers()),
        telemetry_(telemetry),
        reader_(kMonitorId, [this](std::uint64_t id) {
          return id == kMeterId ? &peers_.meter_keys : nullptr;
        }) {}
  Bytes public_part() const override { return {}; }  // enrolled beforehand (fixed seeds)
  void accept_setup(ByteView setup) override {
    for (const auto& [type, wire] : unframe_envelopes(setup)) {
      if (type != srup::MessageType::telemetry_key)
        throw std::invalid_argument("bench-payload: expected a key");
      reader_.add_key(open_envelope(wire), common::unix_time_ms());
    }
  }
  SecretBytes decrypt(ByteView wire) override {
    if (!telemetry_) {  // mode 1: steps 1-9, then the Data body
      const srup::Opened opened = open_envelope(wire);
      const srup::Body body =
          srup::decode_body(srup::MessageType::data, opened.header.suite, opened.body);
      const auto& text = std::get<std::string>(std::get<srup::Data>(body).value);
      return SecretBytes(text.begin(), text.end());
    }
    SecretBytes reading;
    for (const auto& [type, envelope] : unframe_envelopes(wire)) {
      const std::uint64_t now = common::unix_time_ms();
      if (type == srup::MessageType::telemetry) {
        reading = reader_.open(envelope, kReadingTopic, now).opened.body;
      } else if (type == srup::MessageType::checkpoint) {
        if (reader_.checkpoint(envelope, kReadingTopic, now).verdict !=
            srup::CheckpointReport::Verdict::confirmed) {
          throw std::runtime_error("bench-payload: a Checkpoint did not confirm its readings");
        }
      } else {
        throw std::invalid_argument("bench-payload: unexpected envelope type");
      }
    }
    return reading;
  }

 private:
  srup::Opened open_envelope(ByteView wire) const {
    return srup::open_protected(
        wire, kReadingTopic, common::unix_time_ms(), peers_.monitor,
        [this](std::uint64_t id) { return id == kMeterId ? &peers_.meter_keys : nullptr; });
  }

  SrupPeers peers_;
  bool telemetry_;
  srup::TelemetryReader reader_;
};

class SrupPublisher final : public Publisher {
 public:
  explicit SrupPublisher(bool telemetry)
      : peers_(make_srup_peers()),
        telemetry_(telemetry),
        sender_(peers_.meter, 1, [this](srup::MessageType type, std::uint64_t to) {
          return bench_header(type, srup::Mode::sealed, peers_.meter, to, ++sequence_, kReadingTopic);
        }) {}
  Bytes setup() override {
    if (!telemetry_) return {};
    srup::ReaderSet readers;
    readers.readers.push_back({kMonitorId, peers_.monitor.suite, peers_.monitor.kem_public});
    return frame_envelopes(sender_.set_readers(readers, common::unix_time_ms()));
  }
  Bytes encrypt(ByteView plaintext) override {
    if (!telemetry_) {  // mode 1: the JSON text as a Data value, signed and sealed to the monitor
      const std::string_view text(reinterpret_cast<const char*>(plaintext.data()),
                                  plaintext.size());
      const Bytes body = srup::encode_body(srup::MessageType::data, peers_.meter.suite,
                                           srup::Data{"reading", srup::string_value(text)});
      return srup::protect(bench_header(srup::MessageType::data, srup::Mode::sealed, peers_.meter,
                                        kMonitorId, ++sequence_, kReadingTopic),
                           body, peers_.meter, &peers_.monitor_keys);
    }
    const auto out = sender_.seal(plaintext, common::unix_time_ms());
    framing_ = kEnvelopeFraming * out.size();
    return frame_envelopes(out);
  }
  std::size_t framing_bytes_last() const override { return framing_; }

 private:
  SrupPeers peers_;
  bool telemetry_;
  std::uint64_t sequence_ = 0;
  srup::TelemetrySender sender_;
  std::size_t framing_ = 0;
};

}  // namespace

std::span<const SchemeInfo> all_schemes() noexcept {
  return kSchemes;
}

const SchemeInfo& scheme_by_name(std::string_view name) {
  for (const SchemeInfo& s : kSchemes) {
    if (s.name == name) return s;
  }
  std::string known;
  for (const SchemeInfo& s : kSchemes) known += (known.empty() ? "" : ", ") + std::string(s.name);
  throw UsageError("--schemes: unknown scheme '" + std::string(name) + "' (known: " + known + ")");
}

Bytes plaintext_of(const SchemeInfo& s, const MeterReading& r) {
  if (s.family == Family::srup_telemetry) {
    return srup::encode_body(srup::MessageType::telemetry, srup::kDefaultSuite,
                             reading_channels(r));
  }
  const std::string text = reading_json(r);
  return Bytes(text.begin(), text.end());
}

std::unique_ptr<Subscriber> make_subscriber(const SchemeInfo& s, const RsaKeys* rsa) {
  switch (s.family) {
    case Family::rsa_chunked:
    case Family::rsa_hybrid:
      if (rsa == nullptr) throw std::logic_error("bench-payload: RSA scheme without keys");
      return std::make_unique<RsaSubscriber>(s, *rsa);
    case Family::kem_aead:
      return std::make_unique<KemSubscriber>(kem_of(s));
    case Family::srup_sealed:
    case Family::srup_telemetry:
      return std::make_unique<SrupSubscriber>(s.family == Family::srup_telemetry);
  }
  throw std::logic_error("bench-payload: scheme family");
}

std::unique_ptr<Publisher> make_publisher(const SchemeInfo& s, ByteView subscriber_public) {
  switch (s.family) {
    case Family::rsa_chunked:
    case Family::rsa_hybrid:
      return std::make_unique<RsaPublisher>(s, subscriber_public);
    case Family::kem_aead:
      return std::make_unique<KemPublisher>(kem_of(s), subscriber_public);
    case Family::srup_sealed:
    case Family::srup_telemetry:
      return std::make_unique<SrupPublisher>(s.family == Family::srup_telemetry);
  }
  throw std::logic_error("bench-payload: scheme family");
}

}  // namespace pqot::srup_tool::payload
