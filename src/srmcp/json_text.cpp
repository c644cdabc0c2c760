#include "pqot/srmcp/json_text.hpp"

#include <charconv>
#include <cmath>

namespace pqot::srmcp {

namespace {

using Json = nlohmann::json;

// Characters a JSON string must escape: '"', '\\' and the controls below 0x20.
constexpr bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }

void append_escaped(std::string& out, std::string_view s) {
  // Non-ASCII text is rare in bodies; nlohmann validates and escapes it exactly as dump() would.
  for (const unsigned char c : s) {
    if (c >= 0x80) {
      out += Json(std::string(s)).dump();
      return;
    }
  }
  out += '"';
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (!needs_escape(c)) continue;
    out.append(s.substr(run, i - run));
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        const char u[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out.append(u, sizeof u);
      }
    }
  }
  out.append(s.substr(run));
  out += '"';
}

template <class T>
void append_number(std::string& out, T v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
  // Keep it a floating-point number when read back ("20" would come back as an integer).
  const std::string_view text(buf, static_cast<std::size_t>(r.ptr - buf));
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

}  // namespace

void append_json(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded:
      out += "null";
      break;
    case Json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      break;
    case Json::value_t::number_integer:
      append_number(out, value.get<std::int64_t>());
      break;
    case Json::value_t::number_unsigned:
      append_number(out, value.get<std::uint64_t>());
      break;
    case Json::value_t::number_float:
      append_double(out, value.get<double>());
      break;
    case Json::value_t::string:
      append_escaped(out, value.get_ref<const std::string&>());
      break;
    case Json::value_t::binary:
      out += value.dump();
      break;
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& v : value) {
        if (!first) out += ',';
        first = false;
        append_json(out, v);
      }
      out += ']';
      break;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out += ',';
        first = false;
        append_escaped(out, it.key());
        out += ':';
        append_json(out, it.value());
      }
      out += '}';
      break;
    }
  }
}

void append_json_string(std::string& out, std::string_view text) { append_escaped(out, text); }

std::string to_json_text(const Json& value) {
  std::string out;
  out.reserve(256);
  append_json(out, value);
  return out;
}

}  // namespace pqot::srmcp
