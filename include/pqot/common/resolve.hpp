// Name resolution for the programs that hand libmodbus an address (modbus_new_tcp takes a dotted
// IPv4 address and nothing else): the Modbus simulator and the benchmark's Modbus peer.
#pragma once

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>
#include <optional>
#include <string>

namespace pqot::common {

/// The dotted IPv4 address of `host` (a name or an address), or nullopt.
inline std::optional<std::string> resolve_ipv4(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return std::nullopt;
  sockaddr_in sin{};
  std::memcpy(&sin, res->ai_addr, sizeof sin);
  freeaddrinfo(res);
  char text[INET_ADDRSTRLEN] = {};
  if (inet_ntop(AF_INET, &sin.sin_addr, text, sizeof text) == nullptr) return std::nullopt;
  return std::string(text);
}

}  // namespace pqot::common
