// The `name=value` lines `pqot kem` and `pqot sig` print, as a map.
#pragma once

#include <map>
#include <string>

namespace pqot::test {

inline std::map<std::string, std::string> cli_fields(const std::string& out) {
  std::map<std::string, std::string> f;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    const std::string line = out.substr(start, end - start);
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) f[line.substr(0, eq)] = line.substr(eq + 1);
    start = end == std::string::npos ? out.size() : end + 1;
  }
  return f;
}

}  // namespace pqot::test
