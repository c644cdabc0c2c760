#include "pqot/crypto/pem.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "pqot/common/printable.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::crypto::pem {

namespace {

constexpr std::string_view kBegin = "-----BEGIN ";
constexpr std::string_view kEnd = "-----END ";
constexpr std::string_view kDashes = "-----";
constexpr std::size_t kLineLength = 64;  // RFC 7468 section 2
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

[[noreturn]] void fail(const std::string& why) {
  throw Error(ErrorCode::invalid_encoding, "malformed PEM: " + why);
}

int sextet(char c) noexcept {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Splits off the next line (without its LF or CRLF); false at the end of the text.
bool next_line(std::string_view& rest, std::string_view& line) {
  if (rest.empty()) return false;
  const std::size_t lf = rest.find('\n');
  line = rest.substr(0, lf);  // the last line may lack its line end
  rest.remove_prefix(lf == std::string_view::npos ? rest.size() : lf + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

// RFC 4648 section 4, canonical only: '=' only as the final padding, zero pad bits (section
// 3.5), so one DER has exactly one base64 text.
void decode_base64(std::string_view b64, SecretBytes& out) {
  if (b64.size() % 4 != 0) fail("base64 length is not a multiple of 4");
  std::size_t pad = 0;
  if (!b64.empty() && b64.back() == '=') pad = b64[b64.size() - 2] == '=' ? 2 : 1;
  out.reserve(b64.size() / 4 * 3);
  for (std::size_t i = 0; i < b64.size(); i += 4) {
    const bool last = i + 4 == b64.size();
    std::uint32_t group = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = b64[i + j];
      int v = sextet(c);
      if (v < 0) {
        if (!(c == '=' && last && j >= 4 - pad)) fail("invalid base64 character");
        v = 0;
      }
      group = (group << 6) | static_cast<std::uint32_t>(v);
    }
    if (last && pad > 0 && (group & ((1u << (8 * pad)) - 1)) != 0) {
      fail("base64 padding bits are not zero");
    }
    const std::size_t n = last ? 3 - pad : 3;
    for (std::size_t j = 0; j < n; ++j)
      out.push_back(static_cast<std::uint8_t>(group >> (16 - 8 * j)));
  }
}

}  // namespace

bool looks_like_pem(ByteView data) noexcept {
  constexpr std::string_view kPrefix = "-----BEGIN";
  if (data.size() < kPrefix.size()) return false;
  for (std::size_t i = 0; i < kPrefix.size(); ++i) {
    if (data[i] != static_cast<std::uint8_t>(kPrefix[i])) return false;
  }
  return true;
}

template <class String>
String encode(std::string_view label, ByteView der) {
  String out;
  out.reserve(64 + 2 * label.size() + (der.size() + 2) / 3 * 4 * 65 / 64 + 2);
  out.append(kBegin).append(label).append(kDashes).push_back('\n');
  std::size_t column = 0;
  for (std::size_t i = 0; i < der.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, der.size() - i);
    std::uint32_t group = std::uint32_t{der[i]} << 16;
    if (n > 1) group |= std::uint32_t{der[i + 1]} << 8;
    if (n > 2) group |= der[i + 2];
    for (std::size_t j = 0; j < 4; ++j) {
      out.push_back(j <= n ? kAlphabet[(group >> (18 - 6 * j)) & 0x3f] : '=');
      if (++column == kLineLength) {
        out.push_back('\n');
        column = 0;
      }
    }
  }
  if (column != 0) out.push_back('\n');
  out.append(kEnd).append(label).append(kDashes).push_back('\n');
  return out;
}

SecretBytes decode(ByteView text, std::string_view label) {
  std::string_view rest(reinterpret_cast<const char*>(text.data()), text.size());
  std::string_view line;
  if (!next_line(rest, line) || !line.starts_with(kBegin) || !line.ends_with(kDashes) ||
      line.size() < kBegin.size() + kDashes.size()) {
    fail("the first line is not \"-----BEGIN <label>-----\"");
  }
  const std::string_view found =
      line.substr(kBegin.size(), line.size() - kBegin.size() - kDashes.size());
  if (found != label) {
    // Labels are public; what is echoed is capped and made printable (no terminal escapes).
    fail("label \"" + common::printable(found, 40) + "\", expected \"" + std::string(label) + "\"");
  }
  SecretString b64;  // the letters of a possibly secret key
  bool ended = false;
  bool short_line_seen = false;
  while (next_line(rest, line)) {
    if (line.starts_with(kEnd)) {
      if (line.substr(kEnd.size()) != std::string(label) + std::string(kDashes)) {
        fail("the END line does not match \"-----END " + std::string(label) + "-----\"");
      }
      ended = true;
      break;
    }
    // Every line but the last carries exactly 64 characters (RFC 7468 section 3, stricttextualmsg).
    if (line.empty() || line.size() > kLineLength || short_line_seen) {
      fail("base64 lines must hold 64 characters (the last one 1 to 64)");
    }
    short_line_seen = line.size() < kLineLength;
    b64.append(line);
  }
  if (!ended) {
    fail("no \"-----END " + std::string(label) + "-----\" line");
  }
  // Only empty lines (blank line ends) may follow.
  while (next_line(rest, line)) {
    if (!line.empty()) {
      fail("text after the END line");
    }
  }
  SecretBytes der;
  decode_base64(b64, der);
  if (der.empty()) fail("no data between BEGIN and END");
  return der;
}

template std::string encode<std::string>(std::string_view, ByteView);
template SecretString encode<SecretString>(std::string_view, ByteView);

}  // namespace pqot::crypto::pem
