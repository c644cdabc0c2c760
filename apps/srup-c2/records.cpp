// The C2 registry's records: names, states and the load-and-check path (records.hpp).
#include "records.hpp"

#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

#include <array>
#include <stdexcept>

#include "pqot/crypto/error.hpp"

namespace pqot::srup_c2 {

namespace {

template <class E, std::size_t N>
std::optional<E> records_parse(std::string_view s, const std::array<E, N>& values) noexcept {
  for (E v : values) {
    if (s == to_string(v)) return v;
  }
  return std::nullopt;
}

[[noreturn]] void bad_row(const std::string& where, const std::string& what) {
  throw RegistryError(where + ": " + what);
}

std::optional<std::uint64_t> records_time(const std::optional<std::int64_t>& v, const std::string& where,
                                          const char* column) {
  if (!v) return std::nullopt;
  if (*v < 0) bad_row(where, std::string(column) + " is negative");
  return static_cast<std::uint64_t>(*v);
}

// The identity column: decodes, and names the row's ID and suite.
srup::PublicIdentity records_identity(const crypto::Bytes& pem, std::int64_t id, std::int64_t suite,
                                      const std::string& where) {
  srup::PublicIdentity pub;
  try {
    pub = decode_identity(pem);
  } catch (const std::invalid_argument& e) {
    bad_row(where, std::string("stored identity: ") + e.what());
  }
  if (pub.id != static_cast<std::uint64_t>(id)) bad_row(where, "stored identity is of another ID");
  if (static_cast<std::int64_t>(pub.keys.suite) != suite) {
    bad_row(where, "stored identity's suite differs from the row's");
  }
  return pub;
}

}  // namespace

const char* to_string(DeviceState s) noexcept {
  switch (s) {
    case DeviceState::pending: return "pending";
    case DeviceState::joined: return "joined";
    case DeviceState::resigned: return "resigned";
    case DeviceState::deregistered: return "deregistered";
  }
  return "?";
}

const char* to_string(JoinMode m) noexcept {
  switch (m) {
    case JoinMode::simple: return "simple";
    case JoinMode::human: return "human";
    case JoinMode::observed: return "observed";
  }
  return "?";
}

const char* to_string(MonitorState s) noexcept {
  return s == MonitorState::active ? "active" : "revoked";
}

const char* to_string(OutboxState s) noexcept {
  switch (s) {
    case OutboxState::pending: return "pending";
    case OutboxState::answered: return "answered";
    case OutboxState::expired: return "expired";
    case OutboxState::cancelled: return "cancelled";
  }
  return "?";
}

const char* to_string(FollowUp f) noexcept {
  switch (f) {
    case FollowUp::activate: return "activate";
    case FollowUp::resign: return "resign";
    case FollowUp::rehome: return "rehome";
  }
  return "?";
}

const char* to_string(FollowUpState s) noexcept {
  switch (s) {
    case FollowUpState::waiting: return "waiting";
    case FollowUpState::due: return "due";
    case FollowUpState::done: return "done";
    case FollowUpState::skipped: return "skipped";
  }
  return "?";
}

std::optional<DeviceState> parse_device_state(std::string_view s) noexcept {
  return records_parse(s, std::array{DeviceState::pending, DeviceState::joined, DeviceState::resigned,
                                     DeviceState::deregistered});
}
std::optional<JoinMode> parse_join_mode(std::string_view s) noexcept {
  return records_parse(s, std::array{JoinMode::simple, JoinMode::human, JoinMode::observed});
}
std::optional<MonitorState> parse_monitor_state(std::string_view s) noexcept {
  return records_parse(s, std::array{MonitorState::active, MonitorState::revoked});
}
std::optional<OutboxState> parse_outbox_state(std::string_view s) noexcept {
  return records_parse(s, std::array{OutboxState::pending, OutboxState::answered, OutboxState::expired,
                                     OutboxState::cancelled});
}

std::optional<FollowUp> parse_follow_up(std::string_view s) noexcept {
  return records_parse(s, std::array{FollowUp::activate, FollowUp::resign, FollowUp::rehome});
}
std::optional<FollowUpState> parse_follow_up_state(std::string_view s) noexcept {
  return records_parse(s, std::array{FollowUpState::waiting, FollowUpState::due, FollowUpState::done,
                                     FollowUpState::skipped});
}

bool follow_up_triggered(FollowUp f, std::uint8_t status) noexcept {
  using S = srup::Status;
  switch (f) {
    case FollowUp::activate: return status == static_cast<std::uint8_t>(S::update_success);
    case FollowUp::resign: return status == static_cast<std::uint8_t>(S::resign_success);
    case FollowUp::rehome: return status == static_cast<std::uint8_t>(S::join_success);
  }
  return false;
}

bool transition_allowed(DeviceState from, DeviceState to) noexcept {
  using S = DeviceState;
  switch (from) {
    case S::pending: return to == S::joined || to == S::deregistered;
    case S::joined: return to == S::resigned || to == S::deregistered;
    case S::resigned: return to == S::deregistered;
    case S::deregistered: return false;
  }
  return false;
}

std::string device_username(std::uint64_t id) { return "dev-" + srup::id_text(id); }
std::string monitor_username(std::uint64_t id) { return "mon-" + srup::id_text(id); }

bool is_device_type(std::string_view type) noexcept {
  if (type.empty() || type.size() > kMaxTypeLength) return false;
  for (char c : type) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

srup::PublicIdentity decode_identity(crypto::ByteView pem) {
  if (pem.size() > kMaxIdentityBytes) {
    throw std::invalid_argument("public identity of " + std::to_string(pem.size()) +
                                " bytes (at most " + std::to_string(kMaxIdentityBytes) + ")");
  }
  try {
    return srup::decode_public_identity(pem);
  } catch (const std::exception& e) {
    // crypto::Error for the record and its keys; nothing from a stored file may escape otherwise.
    throw std::invalid_argument(std::string("not a valid public identity file: ") + e.what());
  }
}

Device check_device_record(const DeviceRecord& row, const std::string& where) {
  Device d;
  d.id = static_cast<std::uint64_t>(row.id);
  if (d.id == 0 || d.id == ~std::uint64_t{0}) bad_row(where, "reserved device ID");
  d.username = device_username(d.id);
  if (row.username != d.username) bad_row(where, "username is not the ID's");
  if (!is_device_type(row.type)) bad_row(where, "invalid device type");
  d.type = row.type;
  d.identity = records_identity(row.identity, row.id, row.suite, where);
  d.identity_pem.assign(row.identity.begin(), row.identity.end());
  const auto state = parse_device_state(row.state);
  if (!state) bad_row(where, "unknown state");
  d.state = *state;
  const auto mode = parse_join_mode(row.join_mode);
  if (!mode) bad_row(where, "unknown join mode");
  d.join_mode = *mode;
  if ((d.join_mode == JoinMode::observed) != row.observer.has_value()) {
    bad_row(where, "an observer is stored exactly for join mode observed");
  }
  if (row.observer) d.observer = static_cast<std::uint64_t>(*row.observer);
  if (row.enrolled_ms < 0) bad_row(where, "enrolled_ms is negative");
  d.enrolled_ms = static_cast<std::uint64_t>(row.enrolled_ms);
  d.joined_ms = records_time(row.joined_ms, where, "joined_ms");
  d.last_seen_ms = records_time(row.last_seen_ms, where, "last_seen_ms");
  if (row.cert_serial.has_value() != row.cert_not_after_ms.has_value()) {
    bad_row(where, "certificate serial and notAfter are stored together");
  }
  if (row.cert_serial) {
    const std::string& s = *row.cert_serial;
    if (s.empty() || s.size() > kMaxSerialLength ||
        s.find_first_not_of("0123456789abcdef") != std::string::npos) {
      bad_row(where, "invalid certificate serial");
    }
    d.cert_serial = s;
    d.cert_not_after_ms = row.cert_not_after_ms;
  }
  return d;
}

Monitor check_monitor_record(const MonitorRecord& row, const std::string& where) {
  Monitor m;
  m.id = static_cast<std::uint64_t>(row.id);
  if (m.id == 0 || m.id == ~std::uint64_t{0}) bad_row(where, "reserved monitor ID");
  m.username = monitor_username(m.id);
  if (row.username != m.username) bad_row(where, "username is not the ID's");
  m.identity = records_identity(row.identity, row.id, row.suite, where);
  m.identity_pem.assign(row.identity.begin(), row.identity.end());
  const auto state = parse_monitor_state(row.state);
  if (!state) bad_row(where, "unknown state");
  m.state = *state;
  if (row.enrolled_ms < 0) bad_row(where, "enrolled_ms is negative");
  m.enrolled_ms = static_cast<std::uint64_t>(row.enrolled_ms);
  return m;
}

}  // namespace pqot::srup_c2
