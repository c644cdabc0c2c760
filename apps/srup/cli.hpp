// Shared parts of the `srup` tool (docs/srup-tool.md): the exit-code convention, arguments that
// name IDs and files, and reading the message from standard input.
//
// Exit codes: 0 done (`open`: accepted); 2 bad usage, one line "srup: error: ..." on stderr; 3 an
// internal failure; 4 a message refused, one line "srup: refused: REASON: detail" on stderr.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "pqot/crypto/bytes.hpp"

namespace pqot::srup_tool {

using crypto::Bytes;

inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;
inline constexpr int kExitRefused = 4;
/// The most a command reads from standard input: any envelope and then some. A longer SRUP-PQ
/// envelope is still read whole and refused as MALFORMED by the parser, rather than cut.
inline constexpr std::size_t kMaxStdin = 1 << 20;

/// A mistake in what the user gave us (exit 2).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Ends the program with exit code `code()` and one line "srup: error: what()" on stderr: the
/// codes `srup c2` adds (1 the daemon cannot be reached, 4 it refused, 5 not answered in time).
class ExitError : public std::runtime_error {
 public:
  ExitError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// A 64-bit peer ID written as exactly 16 hex digits ("--id").
std::uint64_t parse_id(std::string_view text, std::string_view what);
/// Lower-case hex of `bytes`.
std::string to_hex(crypto::ByteView bytes);
/// Hex text to bytes (even length, hex digits only).
crypto::Bytes parse_hex(std::string_view text, std::string_view what);

/// All of standard input, refused (UsageError) past `max` bytes.
crypto::Bytes read_stdin(std::size_t max);
/// Writes `bytes` to standard output in binary.
void write_stdout(crypto::ByteView bytes);

void add_keygen_command(CLI::App& app);
void add_seal_command(CLI::App& app);
void add_open_command(CLI::App& app);
void add_inspect_command(CLI::App& app);
void add_legacy_verify_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_bench_mqtt_command(CLI::App& app);
void add_bench_telemetry_command(CLI::App& app);
void add_bench_payload_command(CLI::App& app);
void add_c2_command(CLI::App& app);
void add_monitor_command(CLI::App& app);
void add_broker_config_command(CLI::App& app);

}  // namespace pqot::srup_tool
