// `pqot pki init`: writes a test PKI (CA, server, clients) for demos and tests; `pqot pki csr` and
// `pqot pki issue`: enrolment certificates (docs/pki.md).
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "pqot/crypto/error.hpp"
#include "pqot/pki/enrol.hpp"
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
  std::vector<std::string> server_roles;
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
  options.server_roles = args.server_roles;
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

struct CsrArgs {
  std::string key;
  std::string out;
  std::string cn;
};

struct IssueArgs {
  std::string ca_dir;
  std::string csr;
  std::string cn;
  int days = 365;
  std::string out;
};

void refuse_existing(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    throw UsageError("'" + path + "' already exists; refusing to overwrite it");
  }
}

void check_name(const std::string& cn) {
  if (!pki::is_enrol_name(cn)) {
    throw UsageError("--cn: expected 1.." + std::to_string(pki::kMaxEnrolNameLength) +
                     " characters of A-Z a-z 0-9 . _ -, got '" + cn + "'");
  }
}

// Bad arguments and refused requests are the user's to fix (exit 2); OpenSSL failures stay
// internal.
template <class F>
void pki_user_errors(F&& f) {
  try {
    f();
  } catch (const crypto::Error& e) {
    if (e.code() == crypto::ErrorCode::internal) throw;
    throw UsageError(e.what());
  }
}

void run_csr(const CsrArgs& args) {
  check_name(args.cn);
  if (args.key == args.out) throw UsageError("--key and --out name the same file");
  // Both checked first: a refusal writes nothing.
  refuse_existing(args.key);
  refuse_existing(args.out);
  pki_user_errors([&] {
    const pki::KeyAndRequest made = pki::make_key_and_request(args.cn);
    write_new_output("--key", args.key, made.key_pem, 0600);
    try {
      write_new_output("--out", args.out, made.csr_pem, 0644);
    } catch (...) {
      std::filesystem::remove(args.key);  // no key without its request
      throw;
    }
  });
  std::cout << "key=" << args.key << "\ncsr=" << args.out << "\ncn=" << args.cn << '\n' << std::flush;
}

std::string read_request(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot open --csr '" + path + "'");
  std::string text(pki::kMaxCsrBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw UsageError("cannot read --csr '" + path + "'");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > pki::kMaxCsrBytes) {
    throw UsageError("--csr '" + path + "' is longer than " + std::to_string(pki::kMaxCsrBytes) +
                     " bytes");
  }
  return text;
}

void run_issue(const IssueArgs& args) {
  check_name(args.cn);
  refuse_existing(args.out);
  const std::string csr = read_request(args.csr);
  pki_user_errors([&] {
    const pki::IssuedCertificate cert =
        pki::issue_client_certificate(pki::CaFiles::in_dir(args.ca_dir), csr, args.cn, args.days);
    write_new_output("--out", args.out, cert.pem, 0644);
    std::cout << "certificate=" << args.out << "\nserial=" << cert.serial_hex
              << "\nnot_after=" << cert.not_after << '\n' << std::flush;
  });
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
  init->add_option("--server-role", args->server_roles,
                   "Give the server certificate a role (an OU in its subject); repeatable (TRIP: trip)")
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

  auto csr_args = std::make_shared<CsrArgs>();
  auto* csr = cmd->add_subcommand(
      "csr", "Make a device's TLS key (ECDSA P-256) and a certificate request (PKCS#10, PEM) for NAME");
  csr->add_option("--key", csr_args->key, "Private key file to create (PKCS#8 PEM, mode 0600; never overwritten)")
      ->required();
  csr->add_option("--out", csr_args->out, "Certificate request file to create (PEM; never overwritten)")
      ->required();
  csr->add_option("--cn", csr_args->cn, "Common name the C2 assigned (e.g. dev-0123456789abcdef)")
      ->required();
  csr->callback([csr_args] { run_csr(*csr_args); });

  auto issue_args = std::make_shared<IssueArgs>();
  auto* issue = cmd->add_subcommand(
      "issue", "Issue a client certificate from a certificate request with the CA of DIR (ca.crt, ca.key)");
  issue->add_option("--ca-dir", issue_args->ca_dir, "Directory holding ca.crt and ca.key (as pqot pki init writes them)")
      ->required();
  issue->add_option("--csr", issue_args->csr, "Certificate request (PEM, at most 16 KiB)")->required();
  issue->add_option("--cn", issue_args->cn, "The name the certificate is for; the request's CN must equal it")
      ->required();
  issue->add_option("--days", issue_args->days, "Validity in days")
      ->check(CLI::Range(1, pki::kMaxEnrolDays))
      ->capture_default_str();
  issue->add_option("--out", issue_args->out, "Certificate file to create (PEM; never overwritten)")
      ->required();
  issue->callback([issue_args] { run_issue(*issue_args); });
}

}  // namespace pqot::app
