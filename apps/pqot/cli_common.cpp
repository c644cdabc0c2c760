#include "cli_common.hpp"

#include <fstream>
#include <sstream>

#include "pqot/crypto/error.hpp"

namespace pqot::app {

crypto::Bytes read_hex_arg(std::string_view value, std::string_view what) {
  std::string text(value);
  if (!text.empty() && text.front() == '@') {
    const std::string path = text.substr(1);
    std::ifstream in(path);
    if (!in) throw UsageError(std::string(what) + ": cannot read file '" + path + "'");
    std::ostringstream content;
    content << in.rdbuf();
    text = content.str();
    const auto first = text.find_first_not_of(" \t\r\n");
    const auto last = text.find_last_not_of(" \t\r\n");
    text = first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
  }
  try {
    return crypto::from_hex(text);
  } catch (const crypto::Error& e) {
    throw UsageError(std::string(what) + ": " + e.what());
  }
}

}  // namespace pqot::app
