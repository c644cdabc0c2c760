// Shared helpers of the `pqot` command line: argument decoding and the error convention.
//
// Convention (docs/cli.md): bad input prints one line "pqot: error: ..." on stderr, nothing on
// stdout, and exits with code 2; an internal failure exits with code 3 (1 is `pqot sig verify`'s
// "invalid").
#pragma once

#include <CLI/CLI.hpp>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "pqot/crypto/bytes.hpp"
#include "pqot/crypto/secure.hpp"

namespace pqot::app {

/// A mistake in what the user gave us; reported with exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Decodes a hex argument, or the hex content of a file when `value` is "@path" (surrounding
/// whitespace is ignored; files over 16 MiB are refused). `what` names the argument in error
/// messages ("--ek").
crypto::Bytes read_hex_arg(std::string_view value, std::string_view what);
/// The same for secrets (keys, seeds): the text and the bytes live only in wiping storage.
crypto::SecretBytes read_secret_hex_arg(std::string_view value, std::string_view what);
/// The content of the file at `path` (at most 16 MiB), in wiping storage.
crypto::SecretBytes read_file_arg(std::string_view path, std::string_view what);
/// Creates the output file `path` (never replacing one; exactly `mode`; flushed: common::
/// write_new_file). A file that exists already, a missing directory or a full disk are for the
/// user to fix: UsageError (exit 2), the message led by `what` (the option, "--out-dir").
void write_new_output(std::string_view what, const std::string& path, std::string_view text, unsigned mode);
/// Prints `name=<lower-case hex>` and a newline on stdout without building a hex string (so a
/// secret is not left in a freed heap block).
void print_hex_field(std::string_view name, crypto::ByteView value);

void add_kem_commands(CLI::App& app);
void add_pki_commands(CLI::App& app);
void add_sig_commands(CLI::App& app);
void add_bench_commands(CLI::App& app);
/// `pqot bench sig`, under the `bench` command.
void add_bench_sig_command(CLI::App& bench);

}  // namespace pqot::app
