// The MQTT topics of SRUP-PQ (docs/srup-mqtt.md, section 2): one place that spells them, for the
// C2, the device agent and the monitor. The envelope's topic tag is computed over these strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pqot::srup {

/// 16 lower-case hex digits, as IDs are written in topics and certificate names.
std::string id_text(std::uint64_t id);

std::string topic_to_device(std::uint64_t device);    ///< srup/<dev>/c2
std::string topic_from_device(std::uint64_t device);  ///< srup/<dev>/dev
std::string topic_telemetry(std::uint64_t device);    ///< srup/<dev>/tm
std::string topic_telemetry_key(std::uint64_t device, std::uint64_t reader);  ///< srup/<dev>/tk/<reader>

/// Subscription filters of the C2: every device's messages, telemetry and its own keys.
std::string filter_all_from_devices();                      ///< srup/+/dev
std::string filter_all_telemetry();                         ///< srup/+/tm
std::string filter_all_telemetry_keys(std::uint64_t reader);  ///< srup/+/tk/<reader>

/// A topic of section 2, parsed. IDs must be exactly 16 lower-case hex digits (not 0, not all
/// ones); anything else is nullopt.
struct TopicParts {
  enum class Kind { to_device, from_device, telemetry, telemetry_key };
  Kind kind = Kind::to_device;
  std::uint64_t device = 0;
  std::uint64_t reader = 0;  ///< telemetry_key only
};
std::optional<TopicParts> parse_topic(std::string_view topic);

}  // namespace pqot::srup
