// A test PKI for the integration tests: pki::create_test_pki (CA, a server certificate for
// localhost and 127.0.0.1, client1..clientN) in a private directory removed at the end of the
// scope.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pqot/pki/test_pki.hpp"
#include "temp_dir.hpp"

namespace pqot::test {

class TestPki {
 public:
  /// `roles`: client number -> roles (each an OU of its subject, "role:NAME" in node ACLs).
  explicit TestPki(int clients = 2, std::map<int, std::vector<std::string>> roles = {}) {
    pki::PkiOptions o;
    o.dir = dir();
    o.clients = clients;
    o.client_roles = std::move(roles);
    pki::create_test_pki(o);
  }

  std::filesystem::path dir() const { return tmp_.path() / "pki"; }
  /// A file of the PKI by name: "ca.crt", "server.key", "client1.crt", ...
  std::string file(const std::string& name) const { return (dir() / name).string(); }
  std::string ca() const { return file("ca.crt"); }
  /// CA, certificate and key of `who` ("server", "client1", ...) as an aggregate of three strings
  /// (srmcp::TlsFiles), without this header depending on the SRMCP library.
  template <class Files>
  Files files(const std::string& who) const {
    return Files{ca(), file(who + ".crt"), file(who + ".key")};
  }

 private:
  TempDir tmp_{"pqot-pki"};
};

}  // namespace pqot::test
