// Loading the Wycheproof vector files of tests/data/wycheproof (see its README for their source).
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace pqot::test {

inline nlohmann::json load_wycheproof(const std::string& name) {
  const std::string path = std::string(PQOT_TEST_DATA_DIR) + "/wycheproof/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

}  // namespace pqot::test
