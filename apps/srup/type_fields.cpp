#include "type_fields.hpp"

#include <algorithm>
#include <charconv>

#include "cli.hpp"
#include "pqot/common/files.hpp"
#include "pqot/crypto/hash.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/value.hpp"

namespace pqot::srup_tool {

namespace {

using Field = std::optional<std::string> TypeFields::*;

struct FieldName {
  Field field;
  std::string_view flag;
};

constexpr FieldName kFields[] = {
    {&TypeFields::action, "--action"},     {&TypeFields::arg, "--arg"},
    {&TypeFields::arg_type, "--arg-type"}, {&TypeFields::data_id, "--data-id"},
    {&TypeFields::value, "--value"},       {&TypeFields::value_type, "--value-type"},
    {&TypeFields::url, "--url"},           {&TypeFields::digest, "--digest"},
    {&TypeFields::file, "--file"},         {&TypeFields::status, "--status"},
    {&TypeFields::detail, "--detail"},     {&TypeFields::code, "--code"},
    {&TypeFields::device, "--device"},     {&TypeFields::observer, "--observer"},
    {&TypeFields::c2_pub, "--c2-pub"},
};

// Refuses any field flag given that `type` does not use.
void only(const TypeFields& f, srup::MessageType type, std::initializer_list<Field> allowed) {
  for (const FieldName& n : kFields) {
    if (!(f.*n.field)) continue;
    bool ok = false;
    for (Field a : allowed) ok = ok || a == n.field;
    if (!ok) {
      throw UsageError(std::string(n.flag) + " is not a field of " + std::string(srup::to_string(type)));
    }
  }
}

const std::string& need(const std::optional<std::string>& v, std::string_view flag, srup::MessageType type) {
  if (!v) throw UsageError(std::string(srup::to_string(type)) + " needs " + std::string(flag));
  return *v;
}

std::uint8_t parse_u8(const std::string& text, std::string_view flag) {
  const std::string digits = text.rfind("0x", 0) == 0 ? text.substr(2) : text;
  unsigned v = 0;
  const int base = text.rfind("0x", 0) == 0 ? 16 : 10;
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (ec != std::errc() || p != digits.data() + digits.size() || digits.empty() || v > 255) {
    throw UsageError(std::string(flag) + ": a number from 0 to 255 (or 0x00-0xff), not '" + text + "'");
  }
  return static_cast<std::uint8_t>(v);
}

template <std::size_t N>
std::array<std::uint8_t, N> fixed_hex(const std::string& text, std::string_view flag) {
  const Bytes b = parse_hex(text, flag);
  if (b.size() != N) throw UsageError(std::string(flag) + ": exactly " + std::to_string(2 * N) + " hex digits");
  std::array<std::uint8_t, N> out{};
  std::copy(b.begin(), b.end(), out.begin());
  return out;
}

srup::Value typed(const std::optional<std::string>& type_name, const std::string& text, std::string_view flag) {
  try {
    if (type_name) return srup::parse_value(*type_name, text);
    // No type given: the narrowest reading of the text a person would mean.
    if (text == "true" || text == "false") return srup::parse_value("bool", text);
    for (const char* t : {"int64", "float64"}) {
      try {
        return srup::parse_value(t, text);
      } catch (const std::invalid_argument&) {
      }
    }
    return srup::parse_value("string", text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string(flag) + ": " + e.what());
  }
}

std::uint8_t parse_status(const std::string& text) {
  for (unsigned c = 0; c < 256; ++c) {
    if (srup::status_of(static_cast<std::uint8_t>(c)) && srup::status_name(static_cast<std::uint8_t>(c)) == text) {
      return static_cast<std::uint8_t>(c);
    }
  }
  return parse_u8(text, "--status");
}

}  // namespace

void add_type_field_options(CLI::App& cmd, TypeFields& f) {
  cmd.add_option("--action", f.action, "action: the action ID (0-255)");
  cmd.add_option("--arg", f.arg, "action: the argument (default: none)");
  cmd.add_option("--arg-type", f.arg_type, "action: the argument's type (bool, int8..uint64, float32, float64, string, bytes)");
  cmd.add_option("--data-id", f.data_id, "data: the data ID");
  cmd.add_option("--value", f.value, "data: the value");
  cmd.add_option("--value-type", f.value_type, "data: the value's type (default: bool, int64, float64 or string, read from the text)");
  cmd.add_option("--url", f.url, "update-initiate: where the device fetches the update");
  cmd.add_option("--digest", f.digest, "update-initiate: the file's SHA-256 (64 hex digits)");
  cmd.add_option("--file", f.file, "update-initiate: the file, to compute --digest from");
  cmd.add_option("--status", f.status, "response: status name (ACTION_SUCCESS, ...) or code");
  cmd.add_option("--detail", f.detail, "response: detail text (up to 256 bytes)");
  cmd.add_option("--code", f.code, "human-join-response, observed-join-response, observation-request: one-time code (32 hex digits)");
  cmd.add_option("--device", f.device, "observation-request: the joining device's ID (16 hex digits)");
  cmd.add_option("--observer", f.observer, "observed-join-request: the observer's ID (16 hex digits)");
  cmd.add_option("--c2-pub", f.c2_pub, "join-command: the new C2's identity.pub");
}

srup::Body build_body(srup::MessageType type, const TypeFields& f, const srup::LoadedIdentity& me) {
  using T = srup::MessageType;
  const srup::PublicKeys own{me.pub.keys.signature_public, me.pub.keys.kem_public};
  switch (type) {
    case T::action: {
      only(f, type, {&TypeFields::action, &TypeFields::arg, &TypeFields::arg_type});
      srup::Action b;
      b.action_id = parse_u8(need(f.action, "--action", type), "--action");
      if (f.arg) b.argument = typed(f.arg_type, *f.arg, "--arg");
      else if (f.arg_type) throw UsageError("--arg-type without --arg");
      return b;
    }
    case T::data: {
      only(f, type, {&TypeFields::data_id, &TypeFields::value, &TypeFields::value_type});
      srup::Data b;
      b.data_id = need(f.data_id, "--data-id", type);
      b.value = typed(f.value_type, need(f.value, "--value", type), "--value");
      return b;
    }
    case T::update_initiate: {
      only(f, type, {&TypeFields::url, &TypeFields::digest, &TypeFields::file});
      srup::UpdateInitiate b;
      b.url = need(f.url, "--url", type);
      if (f.digest && f.file) throw UsageError("--digest or --file, not both");
      if (f.file) {
        Bytes content;
        try {
          content = common::read_bounded_file<Bytes>(*f.file, std::size_t{1} << 30);
        } catch (const std::exception& e) {
          throw UsageError(std::string("--file: ") + e.what());
        }
        const auto d = crypto::sha256(content);
        std::copy(d.begin(), d.end(), b.digest.begin());
      } else {
        b.digest = fixed_hex<32>(need(f.digest, "--digest", type), "--digest");
      }
      return b;
    }
    case T::response: {
      only(f, type, {&TypeFields::status, &TypeFields::detail});
      srup::Response b;
      b.status = parse_status(need(f.status, "--status", type));
      if (f.detail) b.detail = *f.detail;
      return b;
    }
    case T::join_request:
    case T::human_join_request:
      only(f, type, {});
      return srup::JoinRequest{own};
    case T::observed_join_request:
      only(f, type, {&TypeFields::observer});
      return srup::ObservedJoinRequest{own, parse_id(need(f.observer, "--observer", type), "--observer")};
    case T::join_command: {
      only(f, type, {&TypeFields::c2_pub});
      srup::PublicIdentity c2;
      try {
        c2 = srup::load_public_identity(need(f.c2_pub, "--c2-pub", type));
      } catch (const UsageError&) {
        throw;
      } catch (const std::exception& e) {
        throw UsageError(std::string("--c2-pub: ") + e.what());
      }
      return srup::JoinCommand{c2.id, c2.keys.suite, {c2.keys.signature_public, c2.keys.kem_public}};
    }
    case T::human_join_response:
    case T::observed_join_response:
      only(f, type, {&TypeFields::code});
      return srup::OneTimeCode{fixed_hex<16>(need(f.code, "--code", type), "--code")};
    case T::observation_request:
      only(f, type, {&TypeFields::device, &TypeFields::code});
      return srup::ObservationRequest{parse_id(need(f.device, "--device", type), "--device"),
                                      fixed_hex<16>(need(f.code, "--code", type), "--code")};
    case T::update_activate:
    case T::id_request:
    case T::resign_request:
    case T::terminate_command:
    case T::deregister_request:
    case T::deregister_command:
      only(f, type, {});
      return srup::Empty{};
    default:
      throw UsageError("--type " + std::string(srup::to_string(type)) +
                       ": made by the library's session and telemetry code (and the MQTT "
                       "applications), not by this offline tool");
  }
}

}  // namespace pqot::srup_tool
