// The srmcp client's configuration file (docs/srmcp-cli.md, "Configuration file"): TOML with the
// keys server, ca, cert and key. It fills in what neither the command line nor the environment
// gave.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace pqot::srmcp_cli {

struct ClientFile {
  std::optional<std::string> server;         ///< HOST:PORT
  std::optional<std::string> ca, cert, key;  ///< already resolved against the file's directory
};

/// A file that cannot be read or is wrong: "FILE: what" or "FILE:LINE: what".
class ClientFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses `text` (named `name` in errors); relative ca/cert/key paths resolve against `base_dir`.
ClientFile parse_client_file(const std::string& text, const std::string& name,
                             const std::filesystem::path& base_dir);

/// Reads and parses `path`; relative paths in it resolve against its directory.
ClientFile read_client_file(const std::filesystem::path& path);

/// $XDG_CONFIG_HOME/srmcp/client.toml (an absolute XDG_CONFIG_HOME), else
/// $HOME/.config/srmcp/client.toml; empty when neither variable gives a directory. The file need
/// not exist.
std::filesystem::path default_client_file();

}  // namespace pqot::srmcp_cli
