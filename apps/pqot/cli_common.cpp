#include "cli_common.hpp"

#include <cctype>
#include <fstream>
#include <system_error>

#include "pqot/common/files.hpp"
#include "pqot/crypto/error.hpp"

namespace pqot::app {

namespace {

// Larger @FILE arguments are refused: a message to sign, a signature or a key is far smaller, and
// `@/dev/zero` must fail rather than exhaust memory.
constexpr std::size_t kMaxArgumentFile = 16 * 1024 * 1024;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Hex text (the argument, or the content of @FILE) into `out`, which may be wiping storage: no
// copy of the text or of the bytes is left outside `text_storage` and `out`.
template <class Out>
void decode_hex(std::string_view text, std::string_view what, Out& out) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.size() % 2 != 0) {
    throw UsageError(std::string(what) + ": hex has an odd number of digits (" +
                     std::to_string(text.size()) + ")");
  }
  out.clear();
  out.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
    if (hi < 0 || lo < 0) {
      throw UsageError(std::string(what) + ": invalid hex digit at position " +
                       std::to_string(hi < 0 ? i : i + 1));
    }
    out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
  }
}

template <class Out>
void read_hex(std::string_view value, std::string_view what, Out& out) {
  if (value.empty() || value.front() != '@') {
    decode_hex(value, what, out);
    return;
  }
  crypto::SecretBytes content = read_file_arg(value.substr(1), what);
  decode_hex(std::string_view(reinterpret_cast<const char*>(content.data()), content.size()), what,
             out);
}

}  // namespace

crypto::SecretBytes read_file_arg(std::string_view path, std::string_view what) {
  const std::string name(path);
  std::ifstream in;
  in.rdbuf()->pubsetbuf(nullptr, 0);  // unbuffered (set before opening): no copy of a key left in
                                      // the stream's own buffer
  in.open(name, std::ios::binary);
  if (!in) throw UsageError(std::string(what) + ": cannot read file '" + name + "'");
  crypto::SecretBytes content;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const auto n = static_cast<std::size_t>(in.gcount());
    if (content.size() + n > kMaxArgumentFile) {
      crypto::secure_wipe(buf, sizeof buf);
      throw UsageError(std::string(what) + ": file '" + name + "' is larger than 16 MiB");
    }
    content.insert(content.end(), buf, buf + n);
  }
  crypto::secure_wipe(buf, sizeof buf);
  return content;
}

crypto::Bytes read_hex_arg(std::string_view value, std::string_view what) {
  crypto::Bytes out;
  read_hex(value, what, out);
  return out;
}

crypto::SecretBytes read_secret_hex_arg(std::string_view value, std::string_view what) {
  crypto::SecretBytes out;
  read_hex(value, what, out);
  return out;
}

void print_hex_field(std::string_view name, crypto::ByteView value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::cout << name << '=';
  for (std::uint8_t b : value) std::cout.put(kDigits[b >> 4]).put(kDigits[b & 0x0f]);
  std::cout << '\n';
}

void write_new_output(std::string_view what, const std::string& path, std::string_view text, unsigned mode) {
  try {
    common::write_new_file(path, text, static_cast<mode_t>(mode));
  } catch (const std::system_error& e) {
    throw UsageError(std::string(what) + ": " + e.what());
  }
}

}  // namespace pqot::app
