// linkem-probe: the measuring end of linkem's self-test (no ping or netcat needed).
//   serve --port P                      UDP echo and TCP sink on port P, until SIGTERM/SIGINT
//   udp --host H --port P [--count N]   N timestamped UDP probes; prints counts and RTT percentiles
//   tcp --host H --port P --bytes N     sends N bytes over TCP; prints the elapsed time
// Results are one line of key=value pairs on stdout, for awk.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fd.hpp"

namespace pqot::bench::linkem {
namespace {

using Nanos = std::int64_t;

Nanos monotonic_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "linkem-probe: error: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

sockaddr_in make_address(const std::string& host, int port) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<std::uint16_t>(port));
  if (host.empty()) {
    sin.sin_addr.s_addr = htonl(INADDR_ANY);
  } else if (::inet_pton(AF_INET, host.c_str(), &sin.sin_addr) != 1) {
    errno = EINVAL;
    die("bad IPv4 address '" + host + "'");
  }
  return sin;
}

const sockaddr* as_sockaddr(const sockaddr_in& sin) {
  return reinterpret_cast<const sockaddr*>(&sin);
}

void put_u64(std::uint8_t* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}
std::uint64_t get_u64(const std::uint8_t* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | in[i];
  return v;
}

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_signal(int) {
  g_stop = 1;
}

// ---- serve ---------------------------------------------------------------------------------

struct Sink {
  Fd fd;
  std::uint64_t bytes = 0;
};

int serve(int port) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: poll returns EINTR
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  const sockaddr_in any = make_address("", port);
  const int one = 1;
  Fd udp(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!udp.valid() || ::bind(udp.get(), as_sockaddr(any), sizeof any) != 0) die("UDP bind");
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (!listener.valid() || ::bind(listener.get(), as_sockaddr(any), sizeof any) != 0 ||
      ::listen(listener.get(), 16) != 0) {
    die("TCP listen");
  }
  std::printf("probe ready\n");
  std::fflush(stdout);

  std::vector<Sink> sinks;
  std::vector<std::uint8_t> buffer(1 << 16);
  while (g_stop == 0) {
    std::vector<pollfd> fds{{udp.get(), POLLIN, 0}, {listener.get(), POLLIN, 0}};
    for (const Sink& s : sinks) fds.push_back({s.fd.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (fds[0].revents != 0) {
      for (;;) {  // echo every datagram back as it came
        sockaddr_in peer{};
        socklen_t peer_len = sizeof peer;
        const ssize_t n = ::recvfrom(udp.get(), buffer.data(), buffer.size(), 0,
                                     reinterpret_cast<sockaddr*>(&peer), &peer_len);
        if (n < 0) break;
        ::sendto(udp.get(), buffer.data(), static_cast<std::size_t>(n), 0,
                 reinterpret_cast<sockaddr*>(&peer), peer_len);
      }
    }
    if (fds[1].revents != 0) {
      Fd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (conn.valid() && sinks.size() < 64) sinks.push_back(Sink{std::move(conn), 0});
    }
    // Count what each connection sends; at its end of stream, answer with the count and close.
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Sink& sink = sinks[i - 2];
      const ssize_t n = ::read(sink.fd.get(), buffer.data(), buffer.size());
      if (n > 0) {
        sink.bytes += static_cast<std::uint64_t>(n);
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        std::uint8_t count[8];
        put_u64(count, sink.bytes);
        if (n == 0) (void)!::write(sink.fd.get(), count, sizeof count);
        sink.fd.reset();
      }
    }
    std::erase_if(sinks, [](const Sink& s) { return !s.fd.valid(); });
  }
  return 0;
}

// ---- udp -----------------------------------------------------------------------------------

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

int udp_probe(const std::string& host, int port, int count, double interval_ms, int size,
              int wait_ms, bool print_samples) {
  const sockaddr_in to = make_address(host, port);
  Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!sock.valid() || ::connect(sock.get(), as_sockaddr(to), sizeof to) != 0) die("UDP connect");

  std::vector<double> rtt_us(static_cast<std::size_t>(count), -1.0);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(size)), in(2048);
  const auto interval_ns = static_cast<Nanos>(interval_ms * 1e6);
  const Nanos start = monotonic_now();
  int sent = 0, received = 0;
  Nanos deadline = 0;
  while (received < count) {
    const Nanos now = monotonic_now();
    if (sent < count && now >= start + sent * interval_ns) {
      put_u64(out.data(), static_cast<std::uint64_t>(sent));
      put_u64(out.data() + 8, static_cast<std::uint64_t>(now));
      (void)!::send(sock.get(), out.data(), out.size(), 0);  // ECONNREFUSED etc.: counts as lost
      if (++sent == count) deadline = now + Nanos{wait_ms} * 1'000'000;
      continue;
    }
    if (sent == count && now >= deadline) break;
    const Nanos until = sent < count ? start + sent * interval_ns : deadline;
    const timespec timeout{static_cast<time_t>((until - now) / 1'000'000'000),
                           static_cast<long>((until - now) % 1'000'000'000)};
    pollfd pfd{sock.get(), POLLIN, 0};
    if (::ppoll(&pfd, 1, &timeout, nullptr) <= 0) continue;
    for (;;) {
      const ssize_t n = ::recv(sock.get(), in.data(), in.size(), 0);
      if (n < 0) break;
      const Nanos arrived = monotonic_now();
      if (n < 16) continue;
      const std::uint64_t seq = get_u64(in.data());
      if (seq >= rtt_us.size() || rtt_us[seq] >= 0) continue;  // not ours, or a duplicate
      rtt_us[seq] = static_cast<double>(arrived - static_cast<Nanos>(get_u64(in.data() + 8))) / 1e3;
      ++received;
    }
  }
  if (print_samples) {
    for (std::size_t i = 0; i < rtt_us.size(); ++i)
      std::fprintf(stderr, "%zu %.1f\n", i, rtt_us[i]);
  }
  std::vector<double> sorted;
  for (double r : rtt_us)
    if (r >= 0) sorted.push_back(r);
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double r : sorted) sum += r;
  std::printf(
      "sent=%d received=%d fraction=%.4f min_us=%.1f median_us=%.1f p99_us=%.1f max_us=%.1f "
      "mean_us=%.1f\n",
      sent, received, sent > 0 ? static_cast<double>(received) / sent : 0.0, percentile(sorted, 0),
      percentile(sorted, 0.5), percentile(sorted, 0.99), sorted.empty() ? 0.0 : sorted.back(),
      sorted.empty() ? 0.0 : sum / static_cast<double>(sorted.size()));
  return 0;
}

// ---- tcp -----------------------------------------------------------------------------------

int tcp_probe(const std::string& host, int port, std::uint64_t bytes, int timeout_s) {
  const sockaddr_in to = make_address(host, port);
  Fd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) die("socket");
  const timeval timeout{timeout_s, 0};
  ::setsockopt(sock.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::setsockopt(sock.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  const Nanos start = monotonic_now();
  if (::connect(sock.get(), as_sockaddr(to), sizeof to) != 0) die("TCP connect");
  std::vector<std::uint8_t> chunk(1 << 16, 0x5a);
  for (std::uint64_t left = bytes; left > 0;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
    const ssize_t put = ::write(sock.get(), chunk.data(), n);
    if (put <= 0) die("TCP write");
    left -= static_cast<std::uint64_t>(put);
  }
  ::shutdown(sock.get(), SHUT_WR);
  std::uint8_t count[8];
  std::size_t got = 0;
  while (got < sizeof count) {
    const ssize_t n = ::read(sock.get(), count + got, sizeof count - got);
    if (n <= 0) die("TCP read of the byte count");
    got += static_cast<std::size_t>(n);
  }
  const double seconds = static_cast<double>(monotonic_now() - start) / 1e9;
  const std::uint64_t counted = get_u64(count);
  std::printf("bytes=%llu counted=%llu seconds=%.4f mbit_per_s=%.3f\n",
              static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(counted),
              seconds, static_cast<double>(bytes) * 8 / seconds / 1e6);
  return counted == bytes ? 0 : 1;
}

int run(int argc, char** argv) {
  CLI::App app{"linkem-probe: UDP echo / RTT and TCP transfer probes for linkem's self-test"};
  app.require_subcommand(1);
  std::string host;
  int port = 7777;
  auto* serve_cmd = app.add_subcommand("serve", "UDP echo and TCP sink until SIGTERM/SIGINT");
  serve_cmd->add_option("--port", port, "port (default 7777)");

  int count = 1000, size = 64, wait_ms = 1000;
  double interval_ms = 1;
  auto* udp_cmd = app.add_subcommand("udp", "send timestamped UDP probes to an echo server");
  udp_cmd->add_option("--host", host, "echo server address")->required();
  udp_cmd->add_option("--port", port, "port (default 7777)");
  udp_cmd->add_option("--count", count, "probes (default 1000)")->check(CLI::Range(1, 1'000'000));
  udp_cmd->add_option("--interval-ms", interval_ms, "between probes (default 1)")
      ->check(CLI::Range(0.0, 10'000.0));
  udp_cmd->add_option("--size", size, "datagram bytes (default 64)")->check(CLI::Range(16, 1400));
  udp_cmd->add_option("--wait-ms", wait_ms, "wait for replies after the last probe (default 1000)")
      ->check(CLI::Range(0, 600'000));
  bool print_samples = false;
  udp_cmd->add_flag("--print-samples", print_samples,
                    "each probe's RTT in us on stderr (-1: lost)");

  std::uint64_t bytes = 1'000'000;
  int timeout_s = 30;
  auto* tcp_cmd = app.add_subcommand("tcp", "send bytes to a TCP sink, time until it confirms");
  tcp_cmd->add_option("--host", host, "sink address")->required();
  tcp_cmd->add_option("--port", port, "port (default 7777)");
  tcp_cmd->add_option("--bytes", bytes, "bytes to send (default 1000000)");
  tcp_cmd->add_option("--timeout-s", timeout_s, "socket timeout (default 30)")
      ->check(CLI::Range(1, 3600));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "linkem-probe: error: %s (see --help)\n", e.what());
    return 2;
  }
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  if (*serve_cmd) return serve(port);
  if (*udp_cmd) return udp_probe(host, port, count, interval_ms, size, wait_ms, print_samples);
  return tcp_probe(host, port, bytes, timeout_s);
}

}  // namespace
}  // namespace pqot::bench::linkem

int main(int argc, char** argv) {
  return pqot::bench::linkem::run(argc, argv);
}
