#include "cli.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "pqot/crypto/error.hpp"

namespace pqot::srup_tool {

std::uint64_t parse_id(std::string_view text, std::string_view what) {
  if (text.size() != 16) {
    throw UsageError(std::string(what) + ": a peer ID is exactly 16 hex digits (64 bits)");
  }
  const crypto::Bytes raw = parse_hex(text, what);
  std::uint64_t id = 0;
  for (std::uint8_t b : raw) id = (id << 8) | b;
  if (id == 0 || id == ~std::uint64_t{0}) {
    throw UsageError(std::string(what) + ": the IDs 0000000000000000 and ffffffffffffffff are reserved");
  }
  return id;
}

std::string to_hex(crypto::ByteView bytes) { return crypto::to_hex(bytes); }

crypto::Bytes parse_hex(std::string_view text, std::string_view what) {
  try {
    return crypto::from_hex(text);
  } catch (const crypto::Error& e) {
    throw UsageError(std::string(what) + ": " + e.what());
  }
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
