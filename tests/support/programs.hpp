// Paths of the programs the integration tests start (PQOT_BIN_DIR: set by tests/CMakeLists.txt).
#pragma once

#include <string>

namespace pqot::test {

inline std::string bin(const std::string& name) { return std::string(PQOT_BIN_DIR) + "/" + name; }
inline const std::string kSrmcpd = bin("srmcpd");
inline const std::string kSim = bin("pqot-modbus-sim");

}  // namespace pqot::test
