// pqot: post-quantum tools for operators and interop checks (docs/cli.md).
#include <iostream>

#include "cli_common.hpp"
#include "key_args.hpp"
#include "pqot/crypto/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "pqot: ML-KEM / X-Wing key encapsulation, ML-DSA / Ed25519 / hybrid signatures, a test PKI "
      "and crypto benchmarks"};
  app.name("pqot");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(PQOT_VERSION_STRING));
  pqot::app::add_kem_commands(app);
  pqot::app::add_sig_commands(app);
  pqot::app::add_pki_commands(app);
  pqot::app::add_bench_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pqot: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const pqot::app::VerifyFailed&) {
    return 1;  // "invalid" is on stdout already
  } catch (const pqot::app::UsageError& e) {
    std::cerr << "pqot: error: " << e.what() << "\n";
    return 2;
  } catch (const pqot::crypto::Error& e) {
    // Every crypto::Error reaching here comes from an argument: wrong length, failed key check...
    const int code = e.code() == pqot::crypto::ErrorCode::internal ? 3 : 2;
    std::cerr << "pqot: error: " << e.what() << "\n";
    return code;
  } catch (const std::exception& e) {
    std::cerr << "pqot: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
