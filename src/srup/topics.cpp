// SRUP-PQ's MQTT topics (docs/srup-mqtt.md, section 2).
#include "pqot/srup/topics.hpp"

namespace pqot::srup {

namespace {

constexpr std::string_view kRoot = "srup/";

std::optional<std::uint64_t> topic_id(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : text) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<std::uint64_t>(d);
  }
  if (v == 0 || v == ~std::uint64_t{0}) return std::nullopt;
  return v;
}

std::string under(std::uint64_t device, std::string_view leaf) {
  std::string t(kRoot);
  t += id_text(device);
  t += '/';
  t += leaf;
  return t;
}

}  // namespace

std::string id_text(std::uint64_t id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, id >>= 4) s[static_cast<std::size_t>(i)] = kHex[id & 0xF];
  return s;
}

std::string topic_to_device(std::uint64_t device) { return under(device, "c2"); }
std::string topic_from_device(std::uint64_t device) { return under(device, "dev"); }
std::string topic_telemetry(std::uint64_t device) { return under(device, "tm"); }
std::string topic_telemetry_key(std::uint64_t device, std::uint64_t reader) {
  std::string t = under(device, "tk/");
  t += id_text(reader);
  return t;
}

std::string filter_all_from_devices() { return "srup/+/dev"; }
std::string filter_all_telemetry() { return "srup/+/tm"; }
std::string filter_all_telemetry_keys(std::uint64_t reader) {
  std::string t = "srup/+/tk/";
  t += id_text(reader);
  return t;
}

std::optional<TopicParts> parse_topic(std::string_view topic) {
  if (topic.substr(0, kRoot.size()) != kRoot) return std::nullopt;
  topic.remove_prefix(kRoot.size());
  const auto device = topic_id(topic.substr(0, 16));
  if (!device || topic.size() < 17 || topic[16] != '/') return std::nullopt;
  const std::string_view rest = topic.substr(17);
  TopicParts p;
  p.device = *device;
  if (rest == "c2") {
    p.kind = TopicParts::Kind::to_device;
  } else if (rest == "dev") {
    p.kind = TopicParts::Kind::from_device;
  } else if (rest == "tm") {
    p.kind = TopicParts::Kind::telemetry;
  } else if (rest.substr(0, 3) == "tk/") {
    const auto reader = topic_id(rest.substr(3));
    if (!reader) return std::nullopt;
    p.kind = TopicParts::Kind::telemetry_key;
    p.reader = *reader;
  } else {
    return std::nullopt;
  }
  return p;
}

}  // namespace pqot::srup
