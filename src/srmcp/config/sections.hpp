// srmcpd configuration: the parsers of its sections, one file each; config.cpp calls them in a
// fixed order, so errors come out in a predictable order.
#pragma once

#include <toml++/toml.h>

#include <string>
#include <vector>

#include "pqot/srmcp/config.hpp"
#include "reader.hpp"

namespace pqot::srmcp::config {

// server.cpp: [server] (listening, TLS files, KEMs, bounds) and [limits].
void parse_server(const Reader& r, const toml::table& t, ServerConfig& s);
void parse_limits(const Reader& r, const toml::table& t, Limits& l);

// device.cpp: [[device]], the `modbus` key of a [[node]], overlapping points.
void parse_devices(const Reader& r, const toml::node& n, std::vector<ModbusDeviceConfig>& devices);
/// The binding of `spec` (whose type it sets) to a point of one of `devices`.
ModbusBinding parse_modbus(const Reader& r, NodeSpec& spec, const toml::node& v, const toml::node* type,
                           const std::string& who, const std::vector<ModbusDeviceConfig>& devices);
void check_overlaps(const Reader& r, const std::vector<ModbusBinding>& modbus);

// node.cpp: [[node]] (ids, parents, access, values); needs out.devices, adds out.nodes, out.modbus.
void parse_nodes(const Reader& r, const toml::node& n, LoadedConfig& out);

// signal.cpp: the `signal` key of a [[node]] (its Read callable).
void parse_signal(const Reader& r, NodeSpec& spec, const toml::node& v, const toml::node* value,
                  const std::string& who);

}  // namespace pqot::srmcp::config
