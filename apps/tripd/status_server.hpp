// tripd's status socket (docs/tripd.md, "trip status"): a Unix stream socket, owner-only, that
// answers each connection with one JSON document of the paths and flows and closes it. Bounded:
// 8 clients at once, each closed after 5 s if it does not take its answer.
#pragma once

#include <asio.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace pqot::tripd {

class StatusServer {
 public:
  static constexpr std::size_t kMaxClients = 8;

  /// `render` makes the document, on the io_context's thread.
  StatusServer(asio::io_context& io, std::filesystem::path socket, std::function<std::string()> render);
  ~StatusServer();
  /// Creates the socket (mode 0600; a stale socket left by a dead process is replaced, anything
  /// else at the path is refused). Throws std::runtime_error naming the path.
  void start();
  void stop();

 private:
  void accept_next();

  asio::io_context& io_;
  std::filesystem::path path_;
  std::function<std::string()> render_;
  asio::local::stream_protocol::acceptor acceptor_;
  std::shared_ptr<std::size_t> clients_ = std::make_shared<std::size_t>(0);
  bool started_ = false;
};

/// The status document (docs/tripd.md, "trip status").
class Daemon;
std::string status_json(const Daemon& d);

}  // namespace pqot::tripd
