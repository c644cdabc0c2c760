// The Modbus TCP server of the simulator: one poll() loop over the signal pipe, the listener and
// every client. Requests are framed here (mbap.hpp, non-blocking, so a client sending half a
// request never holds the loop) and answered by libmodbus's modbus_reply() from the process
// model's mapping, or by the active fault (fault.hpp).
#pragma once

#include <modbus.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fault.hpp"
#include "mbap.hpp"
#include "net.hpp"
#include "process_model.hpp"
#include "signals.hpp"

namespace pqot::modbus_sim {

struct ServerOptions {
  std::string ip = "127.0.0.1";  ///< dotted IPv4
  std::uint16_t port = 1502;     ///< 0: any free port
  std::string port_file;         ///< empty: none
  int max_clients = 32;
  Fault fault;
  std::uint64_t seed = 0;
};

/// The server cannot listen (exit code 1).
class ListenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Server {
 public:
  using Clock = std::chrono::steady_clock;
  /// A request must arrive whole within this time of its first byte, or the client is closed.
  static constexpr std::chrono::milliseconds kRequestTimeout{1000};

  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Opens the listener, prints the "listening on" line, then writes --port-file. Throws
  /// ListenError.
  void start();
  /// Serves until SIGTERM or SIGINT.
  void run();

 private:
  struct Client {
    Fd fd;  ///< invalid once closed; removed from the list at the end of the loop round
    std::string peer;
    AduReader reader;
    Clock::time_point request_started{};
  };

  void handle_signals();
  void toggle_fault();
  void reopen_listener();
  void accept_clients();
  /// Reads what the client sent; answers when a request is complete. False: close the client.
  bool serve_readable(Client& c);
  bool answer(Client& c);
  /// Waits (slow fault) while still handling signals. False: shutting down.
  bool wait_for(std::chrono::milliseconds delay);
  void close_client(Client& c, const std::string& reason);
  void expire_incomplete_requests(Clock::time_point now);
  int poll_timeout_ms(Clock::time_point now) const;
  std::size_t live_clients() const;

  ServerOptions opt_;
  Fault& fault_;  ///< = opt_.fault
  SignalPipe signals_;
  ProcessModel model_;
  modbus_t* ctx_ = nullptr;  ///< protocol context only; its socket is set per client
  Fd listener_;
  std::uint16_t port_ = 0;  ///< the bound port (reopened on it after a refuse fault)
  std::optional<Clock::time_point> listener_retry_at_;
  std::optional<Clock::time_point> accept_resume_at_;
  std::vector<Client> clients_;
  bool stopping_ = false;
};

}  // namespace pqot::modbus_sim
