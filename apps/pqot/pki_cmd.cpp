// `pqot pki init`: writes a test PKI (CA, server, clients) for demos and tests (docs/pki.md).
#include <algorithm>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/pki/test_pki.hpp"

namespace pqot::app {

namespace {

struct InitArgs {
  std::string dir;
  std::vector<std::string> server_names{"localhost", "127.0.0.1"};
  int clients = 2;
  std::string key_type = "ecdsa";
  int days = 825;
  bool force = false;
  std::vector<std::string> client_roles;  // "N=ROLE"
};

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// "server.crt  CN=localhost  SAN=DNS:localhost,IP:127.0.0.1  expires 2027-03-04"
std::string describe(const pki::PkiFile& f, std::size_t width) {
  std::string line = f.name + std::string(width - f.name.size() + 2, ' ');
  if (f.is_private_key) return line + f.key_description + " private key, mode 0600, unencrypted";
  line += f.subject;
  if (f.is_ca) line += "  CA";
  if (!f.sans.empty()) line += "  SAN=" + join(f.sans, ",");
  return line + "  expires " + f.not_after;
}

void run_init(const InitArgs& args) {
  pki::PkiOptions options;
  options.dir = args.dir;
  options.server_names = args.server_names;
  options.clients = args.clients;
  options.days = args.days;
  options.overwrite = args.force;
  for (const auto& spec : args.client_roles) {
    const auto eq = spec.find('=');
    int client = 0;
    try {
      client = eq == std::string::npos ? 0 : std::stoi(spec.substr(0, eq));
    } catch (const std::exception&) {
    }
    if (client < 1 || eq + 1 >= spec.size()) {
      throw UsageError("--client-role expects N=ROLE (e.g. 2=operator), got '" + spec + "'");
    }
    options.client_roles[client].push_back(spec.substr(eq + 1));
  }
  try {
    options.key_type = pki::parse_pki_key_type(args.key_type);
    if (!args.force) {
      // The library refuses too; checking here lets the message name the flag that allows it.
      const auto existing = pki::existing_pki_files(options);
      if (!existing.empty()) {
        std::string message = "'" + existing.front().string() + "' already exists";
        if (existing.size() > 1)
          message += " (and " + std::to_string(existing.size() - 1) + " more)";
        throw UsageError(message + "; use --force to overwrite");
      }
    }
    const pki::PkiSummary summary = pki::create_test_pki(options);
    std::size_t width = 0;
    for (const auto& f : summary.files) width = std::max(width, f.name.size());
    std::ostringstream out;
    for (const auto& f : summary.files) out << describe(f, width) << '\n';
    std::cout << out.str() << std::flush;
  } catch (const crypto::Error& e) {
    // Bad options or a directory we may not write are the user's to fix (exit 2); an OpenSSL
    // failure stays internal (exit 1).
    if (e.code() == crypto::ErrorCode::internal) throw;
    throw UsageError(e.what());
  }
}

}  // namespace

void add_pki_commands(CLI::App& app) {
  auto* cmd = app.add_subcommand("pki", "Test PKI for demos and tests (docs/pki.md)");
  cmd->require_subcommand(1);

  auto args = std::make_shared<InitArgs>();
  auto* init = cmd->add_subcommand(
      "init",
      "Create a TEST PKI: a CA, a server certificate and N client certificates with their keys "
      "(PEM; keys unencrypted, mode 0600). Not for production.");
  init->add_option("--dir", args->dir, "Output directory (created with mode 0700 if missing)")
      ->required();
  init->add_option("--server-name", args->server_names,
                   "Server name for the server certificate, repeatable; an IPv4/IPv6 address "
                   "becomes an IP SAN, anything else a DNS SAN; the first is also the CN. Given "
                   "names replace the default")
      ->allow_extra_args(false)
      ->capture_default_str();
  init->add_option("--clients", args->clients,
                   "Number of client certificates (CN client1..clientN)")
      ->check(CLI::Range(0, pki::PkiOptions::kMaxClients))
      ->capture_default_str();
  init->add_option("--client-role", args->client_roles,
                   "Give client N a role (an OU in its subject), as N=ROLE; repeatable")
      ->allow_extra_args(false);
  init->add_option("--key-type", args->key_type, "Key type: ecdsa (P-256) or rsa (3072 bits)")
      ->check(CLI::IsMember({"ecdsa", "rsa"}))
      ->capture_default_str();
  init->add_option("--days", args->days,
                   "Validity of the server and client certificates in days (the CA: 3650, or "
                   "longer if --days is)")
      ->check(CLI::Range(1, pki::PkiOptions::kMaxDays))
      ->capture_default_str();
  init->add_flag("--force", args->force, "Overwrite existing files instead of refusing");
  init->callback([args] { run_init(*args); });
}

}  // namespace pqot::app
