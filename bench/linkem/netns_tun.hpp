// Creating a TUN device inside an existing network namespace and configuring it.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "fd.hpp"

namespace pqot::bench::linkem {

struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Ipv4Cidr {
  std::uint32_t address = 0;  // host byte order
  int prefix = 0;             // 1..32

  std::uint32_t netmask() const { return prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix); }
  std::uint32_t network() const { return address & netmask(); }
};

// "10.201.0.1/24"; nullopt when malformed.
std::optional<Ipv4Cidr> parse_ipv4_cidr(const std::string& text);

struct TunSpec {
  std::string netns;   // name under /var/run/netns
  std::string device;  // interface name inside the namespace
  Ipv4Cidr address;
  int mtu = 1500;
};

// Enters the namespace, creates the TUN device (IFF_TUN | IFF_NO_PI, non-persistent: it goes away
// with the returned descriptor), disables IPv6 on it (no router solicitations or MLD on the link),
// sets MTU and address, brings it and `lo` up, and returns to the caller's namespace. The
// descriptor is non-blocking. Throws SetupError with a one-line message.
Fd open_tun_in_netns(const TunSpec& spec);

}  // namespace pqot::bench::linkem
