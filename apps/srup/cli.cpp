#include "cli.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace pqot::srup_tool {

namespace {

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::uint64_t parse_id(std::string_view text, std::string_view what) {
  if (text.size() != 16) {
    throw UsageError(std::string(what) + ": a peer ID is exactly 16 hex digits (64 bits)");
  }
  std::uint64_t id = 0;
  for (char c : text) {
    const int v = hex_value(c);
    if (v < 0) throw UsageError(std::string(what) + ": not a hex digit in the ID");
    id = (id << 4) | static_cast<std::uint64_t>(v);
  }
  if (id == 0 || id == ~std::uint64_t{0}) {
    throw UsageError(std::string(what) + ": the IDs 0000000000000000 and ffffffffffffffff are reserved");
  }
  return id;
}

std::string id_hex(std::uint64_t id) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::string to_hex(crypto::ByteView bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0x0f];
  }
  return out;
}

crypto::Bytes parse_hex(std::string_view text, std::string_view what) {
  if (text.size() % 2 != 0) throw UsageError(std::string(what) + ": odd number of hex digits");
  crypto::Bytes out(text.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_value(text[2 * i]);
    const int lo = hex_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) throw UsageError(std::string(what) + ": not hex");
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

crypto::Bytes read_stdin(std::size_t max) {
  crypto::Bytes out;
  std::uint8_t buf[4096];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("reading standard input: ") + std::strerror(errno));
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max) {
      throw UsageError("standard input: more than " + std::to_string(max) + " bytes");
    }
    out.insert(out.end(), buf, buf + n);
  }
  return out;
}

void write_stdout(crypto::ByteView bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(STDOUT_FILENO, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("writing standard output: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace pqot::srup_tool
