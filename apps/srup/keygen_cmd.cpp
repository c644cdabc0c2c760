// srup keygen: a new identity in DIR (docs/srup-tool.md).
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <iostream>
#include <optional>
#include <system_error>

#include "cli.hpp"
#include "pqot/srup/topics.hpp"
#include "pqot/srup/identity.hpp"

namespace pqot::srup_tool {

namespace {

struct KeygenOptions {
  std::string id;
  std::string out;
  std::string suite;
  std::string sig;
  std::string kem;
};

constexpr srup::Suite kSuites[] = {srup::Suite::mldsa65_mlkem768, srup::Suite::mldsa65_mlkem1024,
                                   srup::Suite::mldsa65_xwing,    srup::Suite::hybrid_xwing,
                                   srup::Suite::mldsa87_mlkem1024, srup::Suite::ed25519_xwing};

std::string suite_list() {
  std::string out;
  for (srup::Suite s : kSuites) out += (out.empty() ? "" : ", ") + std::string(srup::suite_info(s).name);
  return out;
}

// --suite, or the first suite (in section 3's order, so the default comes first) with the given
// signature and KEM algorithms.
srup::Suite choose_suite(const KeygenOptions& o) {
  if (!o.suite.empty()) {
    if (!o.sig.empty() || !o.kem.empty()) throw UsageError("--suite names both algorithms: drop --sig and --kem");
    const auto s = srup::suite_by_name(o.suite);
    if (!s || srup::suite_info(*s).legacy) {
      throw UsageError("--suite: unknown suite '" + o.suite + "' (suites: " + suite_list() + ")");
    }
    return *s;
  }
  for (srup::Suite s : kSuites) {
    const srup::SuiteInfo info = srup::suite_info(s);
    if ((o.sig.empty() || info.signature == o.sig) && (o.kem.empty() || info.kem == o.kem)) return s;
  }
  throw UsageError("no suite pairs --sig '" + o.sig + "' with --kem '" + o.kem + "' (suites: " +
                   suite_list() + ")");
}

void run_keygen(const KeygenOptions& o) {
  const std::uint64_t id = parse_id(o.id, "--id");
  const srup::Suite suite = choose_suite(o);
  const std::filesystem::path dir(o.out);
  std::error_code probe;
  if (!std::filesystem::is_directory(dir, probe)) {
    // The parents as the umask says; the identity's own directory private from the start.
    std::error_code ec;
    if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
    if (ec || (::mkdir(o.out.c_str(), 0700) != 0 && errno != EEXIST)) {
      throw UsageError("--out: cannot create directory '" + o.out + "'" + (ec ? ": " + ec.message() : ""));
    }
  }
  try {
    srup::write_identity(dir, id, suite, srup::random_seeds(suite));
  } catch (const std::system_error& e) {
    throw UsageError(std::string("--out: ") + e.what());
  }
  std::cout << "id=" << srup::id_text(id) << "\n"
            << "suite=" << srup::suite_info(suite).name << "\n"
            << "key=" << (dir / srup::kIdentityKeyFile).string() << "\n"
            << "pub=" << (dir / srup::kPublicIdentityFile).string() << "\n";
}

}  // namespace

void add_keygen_command(CLI::App& app) {
  auto opts = std::make_shared<KeygenOptions>();
  CLI::App* cmd = app.add_subcommand(
      "keygen", "Make a new identity: DIR/identity.key (mode 0600) and DIR/identity.pub (what peers enrol)");
  cmd->add_option("--id", opts->id, "This peer's ID: 16 hex digits")->required();
  cmd->add_option("--out", opts->out, "Directory for the identity (created if missing; existing files are never overwritten)")
      ->required();
  cmd->add_option("--suite", opts->suite, "Suite by name or number (default ML-DSA-65/ML-KEM-768)");
  cmd->add_option("--sig", opts->sig, "Signature algorithm (ML-DSA-65, ML-DSA-87, ML-DSA-65+Ed25519, Ed25519)");
  cmd->add_option("--kem", opts->kem, "KEM (ML-KEM-768, ML-KEM-1024, X-Wing)");
  cmd->callback([opts] { run_keygen(*opts); });
}

}  // namespace pqot::srup_tool
