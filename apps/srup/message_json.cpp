#include "message_json.hpp"

#include <cstdio>
#include <iostream>
#include <type_traits>

#include "cli.hpp"
#include "pqot/srup/topics.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/srup/status.hpp"

namespace pqot::srup_tool {

namespace {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

nlohmann::ordered_json value_json(const srup::Value& v) {
  return {{"type", std::string(srup::to_string(srup::type_of(v)))}, {"value", srup::to_text(v)}};
}

// A key is shown by size and fingerprint: enough to compare with a peer's file, short on a screen.
nlohmann::ordered_json key_json(crypto::ByteView key) {
  const auto digest = crypto::sha256(key);
  return {{"bytes", key.size()}, {"sha256_prefix", to_hex(crypto::ByteView(digest.data(), 8))}};
}

nlohmann::ordered_json keys_json(const srup::PublicKeys& k) {
  return {{"signature_public", key_json(k.signature_public)}, {"kem_public", key_json(k.kem_public)}};
}

// A peer's text on one line and harmless to a terminal: control characters (C0, DEL, C1 in
// UTF-8), the line and paragraph separators and the backslash itself become \xNN / \uNNNN.
std::string escaped(const std::string& text) {
  std::string out;
  char buf[8];
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    const auto third = i + 2 < text.size() ? static_cast<unsigned char>(text[i + 2]) : 0;
    if (c < 0x20 || c == 0x7f || c == '\\') {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {  // C1 controls U+0080-009F
      std::snprintf(buf, sizeof buf, "\\u%04x", next);
      out += buf;
      ++i;
    } else if (c == 0xe2 && next == 0x80 && (third == 0xa8 || third == 0xa9)) {  // U+2028, U+2029
      std::snprintf(buf, sizeof buf, "\\u%04x", 0x2000 + (third - 0x80));
      out += buf;
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void flatten(const std::string& prefix, const nlohmann::ordered_json& j) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(prefix.empty() ? k : prefix + "." + k, v);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) flatten(prefix + "." + std::to_string(i), j[i]);
  } else if (j.is_string()) {
    std::cout << prefix << "=" << escaped(j.get<std::string>()) << "\n";
  } else {
    std::cout << prefix << "=" << j.dump() << "\n";
  }
}

}  // namespace

nlohmann::ordered_json header_json(const srup::Header& h) {
  const srup::SuiteInfo suite = srup::suite_info(h.suite);
  static constexpr const char* kModes[] = {"signed", "sealed", "session", "telemetry-group"};
  return {{"type", std::string(srup::to_string(h.type))},
          {"suite", std::string(suite.name)},
          {"mode", kModes[static_cast<int>(h.mode) & 3]},
          {"sender", srup::id_text(h.sender)},
          {"recipient", srup::id_text(h.recipient)},
          {"sequence", h.sequence},
          {"timestamp_ms", h.timestamp_ms},
          {"lifetime_ms", h.lifetime_ms},
          {"topic_tag", to_hex(h.topic)},
          {"token_hex", to_hex(h.token)}};
}

nlohmann::ordered_json body_json(const srup::Body& body) {
  return std::visit(
      Overloaded{
          [](const srup::Empty&) { return nlohmann::ordered_json::object(); },
          [](const srup::UpdateInitiate& b) {
            return nlohmann::ordered_json{{"url", b.url}, {"digest", to_hex(b.digest)}};
          },
          [](const srup::Response& b) {
            return nlohmann::ordered_json{{"status", std::string(srup::status_name(b.status))},
                                  {"status_code", b.status},
                                  {"detail", b.detail}};
          },
          [](const srup::Action& b) {
            return nlohmann::ordered_json{{"action", b.action_id}, {"argument", value_json(b.argument)}};
          },
          [](const srup::Data& b) {
            return nlohmann::ordered_json{{"data_id", b.data_id}, {"value", value_json(b.value)}};
          },
          [](const srup::JoinRequest& b) { return nlohmann::ordered_json{{"keys", keys_json(b.keys)}}; },
          [](const srup::ObservedJoinRequest& b) {
            return nlohmann::ordered_json{{"keys", keys_json(b.keys)}, {"observer", srup::id_text(b.observer)}};
          },
          [](const srup::JoinCommand& b) {
            return nlohmann::ordered_json{{"c2", srup::id_text(b.c2_id)},
                                  {"suite", std::string(srup::suite_info(b.suite).name)},
                                  {"keys", keys_json(b.keys)}};
          },
          [](const srup::OneTimeCode& b) { return nlohmann::ordered_json{{"code", to_hex(b.code)}}; },
          [](const srup::ObservationRequest& b) {
            return nlohmann::ordered_json{{"device", srup::id_text(b.device)}, {"code", to_hex(b.code)}};
          },
          [](const srup::Reading& b) {
            nlohmann::ordered_json channels = nlohmann::ordered_json::array();
            for (const auto& c : b.channels) {
              nlohmann::ordered_json one = value_json(c.value);
              one["channel"] = c.channel;
              channels.push_back(std::move(one));
            }
            return nlohmann::ordered_json{{"timestamp_ms", b.timestamp_ms}, {"channels", std::move(channels)}};
          },
          [](const srup::SessionOffer& b) {
            return nlohmann::ordered_json{{"session_id", to_hex(b.session_id)},
                                  {"ephemeral_public", key_json(b.ephemeral_public)},
                                  {"max_messages", b.max_messages},
                                  {"max_epoch_seconds", b.max_epoch_seconds}};
          },
          [](const srup::SessionAccept& b) {
            return nlohmann::ordered_json{{"session_id", to_hex(b.session_id)},
                                  {"kem_ciphertext", key_json(b.kem_ciphertext)},
                                  {"offer_hash", to_hex(b.offer_hash)}};
          },
          [](const srup::TelemetryKey& b) {
            return nlohmann::ordered_json{{"epoch", b.epoch},
                                  {"checkpoint_messages", b.checkpoint_messages},
                                  {"checkpoint_seconds", b.checkpoint_seconds}};
          },
          [](const srup::ReaderSet& b) {
            nlohmann::ordered_json readers = nlohmann::ordered_json::array();
            for (const auto& r : b.readers) {
              readers.push_back({{"id", srup::id_text(r.id)},
                                 {"suite", std::string(srup::suite_info(r.suite).name)},
                                 {"kem_public", key_json(r.kem_public)}});
            }
            return nlohmann::ordered_json{{"readers", std::move(readers)}};
          },
          [](const srup::Checkpoint& b) {
            return nlohmann::ordered_json{{"epoch", b.epoch},
                                  {"first_sequence", b.first_sequence},
                                  {"count", b.count},
                                  {"digest", to_hex(b.digest)}};
          },
          [](const srup::KeyRotation& b) {
            return nlohmann::ordered_json{{"keys", keys_json(b.keys)},
                                  {"new_key_signature", key_json(b.new_key_signature)}};
          },
      },
      body);
}

void print_message(const nlohmann::ordered_json& j, bool as_json) {
  if (as_json) {
    std::cout << j.dump() << "\n";
  } else {
    flatten("", j);
  }
}

}  // namespace pqot::srup_tool
