// The C2 registry's records (docs/srup-c2.md, "Registry"): states, join modes, the bounds of
// every stored string and blob, and the check that turns a stored row back into a typed record.
// Rows are checked on every load: a registry file edited by hand, or damaged, gives a
// RegistryError naming the row, never a record with an identity that does not decode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/srup/identity.hpp"
#include "registry_error.hpp"

namespace pqot::srup_c2 {

// ---- bounds of what is stored (checked before every insert) -------------------------------------
inline constexpr std::size_t kMaxTypeLength = 64;          ///< device type, printable ASCII
inline constexpr std::size_t kMaxIdentityBytes = 16384;    ///< a public identity file (PEM)
inline constexpr std::size_t kMaxActorLength = 64;         ///< who made a change (events)
inline constexpr std::size_t kMaxDetailLength = 1024;      ///< event and answer details
inline constexpr std::size_t kMaxSerialLength = 64;        ///< certificate serial, hex
inline constexpr std::size_t kJoinCodeBytes = 16;
inline constexpr std::size_t kMaxTokenLength = 64;         ///< as the envelope (srup-pq.md 2.1)
inline constexpr std::size_t kMaxEnvelopeBytes = 65535;    ///< as the envelope (srup-pq.md 2.3)
inline constexpr std::size_t kMaxDataIdLength = 255;       ///< as the Data body (srup-pq.md 2.3)
inline constexpr std::size_t kMaxValueLength = 16384;      ///< a typed value as JSON text
inline constexpr std::size_t kMaxReadingLength = 65536;    ///< one telemetry reading as JSON text

enum class DeviceState { pending, joined, resigned, deregistered };
enum class JoinMode { simple, human, observed };
enum class MonitorState { active, revoked };
enum class OutboxState { pending, answered, expired, cancelled };
/// The step a command's answer triggers, kept in its outbox row (docs/srup-c2.md, "Follow-up
/// steps"): activate: Update Activate with the same token after Update Initiate's 0x00; resign:
/// the device is resigned after its Terminate Command's 0x70; rehome: the same, after a Join
/// Command's 0x50 (the device now belongs to the C2 in follow_up_arg).
enum class FollowUp { activate, resign, rehome };
/// waiting: the command is not answered yet; due: answered with the status that triggers the step,
/// which is not taken yet; done: taken; skipped: answered otherwise, expired or cancelled.
enum class FollowUpState { waiting, due, done, skipped };

const char* to_string(DeviceState s) noexcept;
const char* to_string(JoinMode m) noexcept;
const char* to_string(MonitorState s) noexcept;
const char* to_string(OutboxState s) noexcept;
const char* to_string(FollowUp f) noexcept;
const char* to_string(FollowUpState s) noexcept;
std::optional<DeviceState> parse_device_state(std::string_view s) noexcept;
std::optional<JoinMode> parse_join_mode(std::string_view s) noexcept;
std::optional<MonitorState> parse_monitor_state(std::string_view s) noexcept;
std::optional<OutboxState> parse_outbox_state(std::string_view s) noexcept;
std::optional<FollowUp> parse_follow_up(std::string_view s) noexcept;
std::optional<FollowUpState> parse_follow_up_state(std::string_view s) noexcept;

/// The answer status that makes `f` due (docs/srup-mqtt.md 4.2-4.4): activate 0x00 (downloaded,
/// digest checked), resign 0x70 (terminated), rehome 0x50 (the new C2 stored).
bool follow_up_triggered(FollowUp f, std::uint8_t status) noexcept;

/// The allowed device state changes (docs/srup-c2.md, "States"): pending -> joined | deregistered,
/// joined -> resigned | deregistered, resigned -> deregistered. deregistered is final.
bool transition_allowed(DeviceState from, DeviceState to) noexcept;

/// "dev-" / "mon-" and the ID as 16 lower-case hex digits (the broker username, the certificate CN).
std::string device_username(std::uint64_t id);
std::string monitor_username(std::uint64_t id);
/// Device types: 1..kMaxTypeLength characters, printable ASCII without spaces.
bool is_device_type(std::string_view type) noexcept;

/// A device as the C2 knows it.
struct Device {
  std::uint64_t id = 0;
  std::string username;      ///< device_username(id)
  std::string type;
  srup::PublicIdentity identity;  ///< decoded from identity_pem, checked (suite, ID, keys)
  std::string identity_pem;  ///< the public identity file's bytes, as stored
  DeviceState state = DeviceState::pending;
  JoinMode join_mode = JoinMode::simple;
  std::optional<std::uint64_t> observer;  ///< the observing device, join mode observed only
  std::uint64_t enrolled_ms = 0;
  std::optional<std::uint64_t> joined_ms;
  std::optional<std::uint64_t> last_seen_ms;
  std::optional<std::string> cert_serial;  ///< hex, as pki::IssuedCertificate::serial_hex
  std::optional<std::int64_t> cert_not_after_ms;
};

/// A reader of telemetry other than the C2.
struct Monitor {
  std::uint64_t id = 0;
  std::string username;  ///< monitor_username(id)
  srup::PublicIdentity identity;
  std::string identity_pem;
  MonitorState state = MonitorState::active;
  std::uint64_t enrolled_ms = 0;
};

/// A devices row as SQLite returns it (every column, unchecked).
struct DeviceRecord {
  std::int64_t id = 0;
  std::string username;
  std::string type;
  std::int64_t suite = 0;
  crypto::Bytes identity;
  std::string state;
  std::string join_mode;
  std::optional<std::int64_t> observer;
  std::int64_t enrolled_ms = 0;
  std::optional<std::int64_t> joined_ms;
  std::optional<std::int64_t> last_seen_ms;
  std::optional<std::string> cert_serial;
  std::optional<std::int64_t> cert_not_after_ms;
};

/// A monitors row as SQLite returns it.
struct MonitorRecord {
  std::int64_t id = 0;
  std::string username;
  std::int64_t suite = 0;
  crypto::Bytes identity;
  std::string state;
  std::int64_t enrolled_ms = 0;
};

/// The public identity in `pem` (at most kMaxIdentityBytes), decoded and its keys checked.
/// Throws std::invalid_argument naming what is wrong.
srup::PublicIdentity decode_identity(crypto::ByteView pem);

/// The load-and-check path: a stored row back into a record. Throws RegistryError ("`where`:
/// ...") for any value the registry would never have written: an identity that does not decode or
/// whose ID or suite differ from the row's, a username other than the ID's, an unknown state or
/// join mode, an observer without join mode observed (or the reverse), a negative time, a value
/// over its bound.
Device check_device_record(const DeviceRecord& row, const std::string& where);
Monitor check_monitor_record(const MonitorRecord& row, const std::string& where);

}  // namespace pqot::srup_c2
