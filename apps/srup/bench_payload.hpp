// srup bench-payload (docs/srup-tool.md, "bench-payload"; issue 16): meter readings encrypted by a
// publisher process and decrypted by a subscriber process, per scheme, as the energy-monitoring
// paper measured RSA, NTRU and Saber. Shared by the three files of the command:
//   bench_payload_readings.cpp  the readings (fixed seed) and their encodings;
//   bench_payload_schemes.cpp   each scheme's publisher and subscriber sides;
//   bench_payload_roles.cpp     the publisher and subscriber processes, and starting them;
//   bench_payload_cmd.cpp       the command, the run over every scheme, the report.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"
#include "pqot/srup/body.hpp"

namespace pqot::srup_tool::payload {

using crypto::Bytes;
using crypto::ByteView;
using crypto::SecretBytes;

// ---- readings --------------------------------------------------------------------------------

enum class Phases : std::uint8_t { one = 1, three = 3 };
/// Each run does the 1-phase readings, then the 3-phase ones.
inline constexpr Phases kKinds[] = {Phases::one, Phases::three};

/// One meter reading, the fields a Modbus energy meter reports (1-phase: an SDM120-class meter;
/// 3-phase: an SDM630-class one). Per-phase arrays use [0] only for a 1-phase meter.
struct MeterReading {
  Phases phases = Phases::one;
  std::uint64_t timestamp_s = 0;
  double voltage[3]{};       // V
  double current[3]{};       // A
  double active_power[3]{};  // W
  double power_factor[3]{};
  double total_active_power = 0;    // W
  double total_reactive_power = 0;  // var
  double total_apparent_power = 0;  // VA
  double frequency = 0;             // Hz
  double energy_import_kwh = 0;
  double energy_export_kwh = 0;
};

/// The seed of every run: both processes regenerate the same readings from it, so the subscriber
/// checks each decrypted reading against the one the publisher encrypted.
inline constexpr std::uint64_t kReadingSeed = 0x5eed'2026'0016;

/// Readings 0 .. count-1 of a meter with `phases`, a reading every 10 s: a daily load curve with
/// noise, voltage and frequency wandering around 230 V / 50 Hz, energy accumulating.
std::vector<MeterReading> make_readings(Phases phases, std::size_t count,
                                        std::uint64_t seed = kReadingSeed);

/// The reading as the paper's Python publisher sends it: json.dumps() of a flat dict (", " and
/// ": " separators, floats rounded as the meter reports them, shortest repr).
std::string reading_json(const MeterReading& r);

/// The reading as SRUP-PQ's telemetry body carries it (docs/srup-pq.md 5.3's channel numbers).
srup::Reading reading_channels(const MeterReading& r);

// ---- schemes ---------------------------------------------------------------------------------

enum class Family : std::uint8_t { rsa_chunked, rsa_hybrid, kem_aead, srup_sealed, srup_telemetry };

struct SchemeInfo {
  std::string_view name;  ///< what --schemes takes, e.g. "RSA-2048-chunked", "ML-KEM-768"
  Family family;
  std::string_view primitive;  ///< "RSA-2048-OAEP", the KEM's name, or the SRUP-PQ suite's
  int level;                   ///< NIST category; 0 for RSA-2048 (112-bit, below category 1)
  bool mlkem;                  ///< ML-KEM + AES-256-GCM: the scheme the issue's target is about
  bool contender;              ///< RSA, NTRU, Saber: what ML-KEM is measured against
};

/// Every scheme, grouped by level in the order the report prints them.
std::span<const SchemeInfo> all_schemes() noexcept;
/// Throws UsageError for an unknown name.
const SchemeInfo& scheme_by_name(std::string_view name);

/// RSA key pair for the RSA schemes, made once per run by the orchestrator (outside every
/// timing) and handed to the subscriber on its standard input.
struct RsaKeys {
  Bytes public_key;        ///< SPKI DER
  SecretBytes secret_key;  ///< PKCS#8 DER
};

/// The subscriber's side: owns the secret key, publishes the public part first.
class Subscriber {
 public:
  virtual ~Subscriber() = default;
  /// What the publisher needs (the public key), sent before any reading.
  virtual Bytes public_part() const = 0;
  /// The publisher's set-up message (SRUP-PQ telemetry: the sealed Telemetry Key), untimed.
  virtual void accept_setup(ByteView) {}
  /// Wire -> the reading's bytes as the publisher gave them to encrypt(). Throws on anything
  /// that does not decrypt.
  virtual SecretBytes decrypt(ByteView wire) = 0;
};

/// The publisher's side: made from the subscriber's public part.
class Publisher {
 public:
  virtual ~Publisher() = default;
  /// Sent once after the public part, before any reading (empty for most schemes).
  virtual Bytes setup() { return {}; }
  virtual Bytes encrypt(ByteView plaintext) = 0;
  /// Bytes of this bench's own framing in the last encrypt()'s wire, not counted as message
  /// bytes (SRUP-PQ telemetry: the length and type of each envelope, since a Checkpoint rides
  /// with every 64th reading; MQTT would carry each as its own message).
  virtual std::size_t framing_bytes_last() const { return 0; }
};

/// What scheme `s` encrypts for reading `r`, made outside the timing (both sides make it: the
/// subscriber compares): the JSON text, or for SRUP-PQ telemetry the encoded Reading body (its
/// native encoding, docs/srup-pq.md 5.3).
Bytes plaintext_of(const SchemeInfo& s, const MeterReading& r);

/// `rsa` is used by the RSA schemes only (and must then be set).
std::unique_ptr<Subscriber> make_subscriber(const SchemeInfo& s, const RsaKeys* rsa);
std::unique_ptr<Publisher> make_publisher(const SchemeInfo& s, ByteView subscriber_public);

// ---- the processes (bench_payload_roles.cpp) ---------------------------------------------------

/// The hidden roles: `messages` readings of each kind over the socket on fd 3 (the publisher gets
/// the public key first; the subscriber with an RSA scheme reads its key pair from stdin first),
/// then one JSON line on stdout: per kind the encrypt or decrypt times (µs), the bytes (publisher)
/// or the readings decrypted correctly (subscriber), CPU µs, and the process's peak RSS.
void run_publisher(const SchemeInfo& s, int messages);
void run_subscriber(const SchemeInfo& s, int messages);

struct PairReports {
  std::string publisher;
  std::string subscriber;
};
/// Starts this program as the subscriber and the publisher of `s` and returns their reports.
/// Throws std::runtime_error when either side fails (its own error is on stderr, inherited).
PairReports run_pair(const SchemeInfo& s, int messages, const RsaKeys* rsa);

/// RFC 4648 section 4 base64 with padding (the paper's chunks are joined as base64 text).
std::string base64_encode(ByteView data);
/// Strict: canonical padding, no whitespace; throws std::invalid_argument otherwise.
Bytes base64_decode(std::string_view text);

}  // namespace pqot::srup_tool::payload
