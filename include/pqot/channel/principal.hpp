// Who the peer is: the identity and roles its verified certificate names. Every protocol that
// authenticates peers with the project's PKI (SRMCP over TLS, SRUP-PQ devices, TRIP endpoints)
// decides access from this.
#pragma once

#include <string>
#include <vector>

namespace pqot::channel {

struct Principal {
  std::string identity;            ///< the certificate's commonName
  std::vector<std::string> roles;  ///< its organizationalUnit values, in certificate order
};

}  // namespace pqot::channel
