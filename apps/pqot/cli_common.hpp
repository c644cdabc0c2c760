// Shared helpers of the `pqot` command line: argument decoding and the error convention.
//
// Convention (docs/cli.md): bad input prints one line "pqot: error: ..." on stderr, nothing on
// stdout, and exits with code 2; an internal failure exits with code 3 (1 is `pqot sig verify`'s
// "invalid").
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "pqot/crypto/bytes.hpp"

namespace pqot::app {

/// A mistake in what the user gave us; reported with exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Decodes a hex argument, or the hex content of a file when `value` is "@path" (surrounding
/// whitespace in the file is ignored). `what` names the argument in error messages ("--ek").
crypto::Bytes read_hex_arg(std::string_view value, std::string_view what);

void add_kem_commands(CLI::App& app);
void add_pki_commands(CLI::App& app);
void add_sig_commands(CLI::App& app);
void add_bench_commands(CLI::App& app);
/// `pqot bench sig`, under the `bench` command.
void add_bench_sig_command(CLI::App& bench);

}  // namespace pqot::app
