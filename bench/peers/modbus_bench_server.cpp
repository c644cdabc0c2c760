// modbus-bench-server: the Modbus TCP peer of the benchmark (bench/README.md, "The data every peer
// serves"), on libmodbus, as libmodbus users write one: a select() loop over the listening socket
// and every client socket, modbus_receive() + modbus_reply() for each request.
#include <arpa/inet.h>
#include <fcntl.h>
#include <modbus.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "pqot/common/resolve.hpp"
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace {

constexpr int kRegisters = 10;  // holding registers 0..9; any other address: ILLEGAL DATA ADDRESS

// SIGTERM/SIGINT write a byte here; every loop watches the read end (the self-pipe trick).
int g_stop_pipe[2] = {-1, -1};

extern "C" void on_stop_signal(int) {
  const char byte = 1;
  [[maybe_unused]] const auto n = write(g_stop_pipe[1], &byte, 1);
}

/// strerror() is not thread-safe and the loops may run on several threads.
std::string errno_text(int e) {
  return std::generic_category().message(e);
}

using pqot::common::resolve_ipv4;  // modbus_new_tcp takes a dotted IPv4 address and nothing else

/// The registers every loop serves; modbus_reply() reads and writes them under `mutex` (with one
/// loop, the default, the lock is never contended).
struct Registers {
  modbus_mapping_t* mapping = nullptr;
  std::mutex mutex;
};

/// One select() loop: accepts on `listen_fd` (shared by all loops, non-blocking so that the loops
/// losing an accept race get EAGAIN) and answers every request of its own clients in turn.
void serve(int listen_fd, Registers& regs) {
  // Only a protocol context: its socket is set to each client's in turn.
  modbus_t* ctx = modbus_new_tcp("127.0.0.1", 0);
  if (ctx == nullptr) {
    std::cerr << "modbus-bench-server: modbus_new_tcp: " << errno_text(errno) << "\n";
    return;
  }
  std::vector<int> clients;
  std::uint8_t query[MODBUS_TCP_MAX_ADU_LENGTH];
  for (;;) {
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(g_stop_pipe[0], &readable);
    FD_SET(listen_fd, &readable);
    int max_fd = std::max(g_stop_pipe[0], listen_fd);
    for (const int fd : clients) {
      FD_SET(fd, &readable);
      max_fd = std::max(max_fd, fd);
    }
    if (select(max_fd + 1, &readable, nullptr, nullptr, nullptr) < 0) {
      if (errno == EINTR) continue;
      std::cerr << "modbus-bench-server: select: " << errno_text(errno) << "\n";
      break;
    }
    if (FD_ISSET(g_stop_pipe[0], &readable)) break;  // not drained: every loop sees it

    if (FD_ISSET(listen_fd, &readable)) {
      int lfd = listen_fd;
      const int fd = modbus_tcp_accept(ctx, &lfd);
      if (fd >= FD_SETSIZE) {
        close(fd);  // select() cannot watch it
      } else if (fd >= 0) {
        // modbus_tcp_accept() leaves Nagle on (only modbus_connect() sets TCP_NODELAY); without
        // this every reply would wait for the client's delayed ACK.
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        clients.push_back(fd);
      }
    }

    for (auto it = clients.begin(); it != clients.end();) {
      const int fd = *it;
      if (!FD_ISSET(fd, &readable)) {
        ++it;
        continue;
      }
      modbus_set_socket(ctx, fd);
      // Reads exactly one request (header, then the length it announces); a request that stalls
      // halfway costs at most the byte timeout (0.5 s by default), then the client is dropped.
      const int len = modbus_receive(ctx, query);
      bool keep = len >= 0;
      if (len > 0) {
        std::lock_guard lock(regs.mutex);
        keep = modbus_reply(ctx, query, len, regs.mapping) >= 0;
      }
      if (keep) {
        ++it;
      } else {  // closed by the peer, malformed or timed out
        close(fd);
        it = clients.erase(it);
      }
    }
  }
  for (const int fd : clients) close(fd);
  modbus_set_socket(ctx, -1);
  modbus_free(ctx);
}

int run(int argc, char** argv) {
  CLI::App app{"modbus-bench-server: Modbus TCP server on libmodbus " LIBMODBUS_VERSION_STRING
               " for the benchmark: holding registers 0..9 (initial value 100+i), any unit id"};
  std::string host = "0.0.0.0";
  int port = 1502;
  int threads = 1;
  app.add_option("--host", host, "Address to listen on (IPv4 address or name)")
      ->capture_default_str();
  app.add_option("--port", port, "TCP port")->check(CLI::Range(1, 65535))->capture_default_str();
  app.add_option("--threads", threads,
                 "select() loops sharing the listening socket (1 = the usual libmodbus server)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "modbus-bench-server: error: " << e.what() << " (see --help)\n";
    return 1;
  }

  const auto ip = resolve_ipv4(host);
  if (!ip) {
    std::cerr << "modbus-bench-server: error: cannot resolve '" << host << "' to an IPv4 address\n";
    return 1;
  }
  modbus_t* listen_ctx = modbus_new_tcp(ip->c_str(), port);
  if (listen_ctx == nullptr) {
    std::cerr << "modbus-bench-server: error: modbus_new_tcp: " << errno_text(errno) << "\n";
    return 1;
  }
  const int listen_fd = modbus_tcp_listen(listen_ctx, 128);
  if (listen_fd < 0) {
    std::cerr << "modbus-bench-server: error: cannot listen on " << *ip << ":" << port << ": "
              << errno_text(errno) << "\n";
    modbus_free(listen_ctx);
    return 1;
  }
  fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);

  Registers regs;
  regs.mapping = modbus_mapping_new(0, 0, kRegisters, 0);
  if (regs.mapping == nullptr || pipe(g_stop_pipe) != 0) {
    std::cerr << "modbus-bench-server: error: " << errno_text(errno) << "\n";
    return 1;
  }
  for (int i = 0; i < kRegisters; ++i)
    regs.mapping->tab_registers[i] = static_cast<std::uint16_t>(100 + i);

  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::cout << "modbus server ready" << std::endl;

  std::vector<std::thread> extra;
  extra.reserve(static_cast<std::size_t>(threads));
  for (int t = 1; t < threads; ++t) extra.emplace_back(serve, listen_fd, std::ref(regs));
  serve(listen_fd, regs);
  for (auto& t : extra) t.join();

  modbus_mapping_free(regs.mapping);
  close(listen_fd);
  modbus_free(listen_ctx);
  close(g_stop_pipe[0]);
  close(g_stop_pipe[1]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "modbus-bench-server: error: " << e.what() << "\n";
    return 1;
  }
}
