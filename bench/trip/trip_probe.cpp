// trip-probe: one-way latency of an R-GOOSE-like UDP stream, for `make bench-trip`
// (bench/README.md, "TRIP"; docs/benchmarks.md, "TRIP").
//
//   trip-probe stream --to HOST:PORT --listen HOST:PORT [--send-ns NS] [--recv-ns NS]
//                     [--count 1000] [--interval-us 10000] [--size 162] [--wait-ms 1000]
//   trip-probe flood  --to HOST:PORT [--send-ns NS] [--size 1200] [--pps 2000]
//
// stream: sends `count` datagrams of `size` bytes every `interval-us` (0: as fast as the socket
// takes them) from a socket opened in namespace `send-ns` to `to`, and receives them on a socket
// bound to `listen` in namespace `recv-ns` (sockets keep the namespace they were opened in; the
// threads that use them need not be in it). Each datagram carries a magic, its sequence number and
// its CLOCK_MONOTONIC send time, which is one clock for every namespace of a host, so the receiver
// computes the one-way delay. After the last send it waits `wait-ms` for stragglers and prints one
// JSON line: sent, received, lost, duplicated, foreign, seconds (first send to last receive),
// min/p50/p99/mean/max one-way µs (nearest rank).
//
// flood: sends `size`-byte datagrams at `pps` per second (in bursts every 10 ms) until SIGTERM;
// prints "flood ready" once it runs, and on exit one JSON line {"flooded": N}.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::uint32_t kMagic = 0x54524950;  // "TRIP"
constexpr std::size_t kHeader = 16;           // magic u32, sequence u32, send time u64 (ns)

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}
void put_u64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::uint8_t>(v >> (56 - 8 * i));
}
std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

sockaddr_in parse_address(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("expected HOST:PORT, got '" + text + "'");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  const int port = std::stoi(text.substr(colon + 1));
  if (port < 0 || port > 65535) throw std::invalid_argument("port out of range in '" + text + "'");
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, text.substr(0, colon).c_str(), &a.sin_addr) != 1) {
    throw std::invalid_argument("not an IPv4 address in '" + text + "'");
  }
  return a;
}

/// A UDP socket opened in namespace `ns` (empty: this process's), bound to `bind_to` if given.
int udp_socket_in(const std::string& ns, const std::optional<sockaddr_in>& bind_to) {
  int fd = -1;
  std::string failure;
  std::thread t([&] {
    if (!ns.empty()) {
      const std::string path = "/var/run/netns/" + ns;
      const int nsfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (nsfd < 0 || ::setns(nsfd, CLONE_NEWNET) != 0) {
        failure = "cannot enter namespace " + ns + ": " + std::strerror(errno);
        if (nsfd >= 0) ::close(nsfd);
        return;
      }
      ::close(nsfd);
    }
    fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      failure = std::string("socket: ") + std::strerror(errno);
      return;
    }
    const int big = 4 << 20;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    if (bind_to && ::bind(fd, reinterpret_cast<const sockaddr*>(&*bind_to), sizeof *bind_to) != 0) {
      failure = std::string("bind: ") + std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  });
  t.join();
  if (fd < 0) throw std::runtime_error(failure);
  return fd;
}

struct Options {
  std::string mode;
  std::string send_ns, recv_ns, to, listen;
  long count = 1000;
  double interval_us = 10000;
  std::size_t size = 162;
  long wait_ms = 1000;
  long pps = 2000;
};

Options parse(int argc, char** argv) {
  if (argc < 2)
    throw std::invalid_argument("usage: trip-probe stream|flood OPTIONS (see the source's header)");
  Options o;
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(k + " needs a value");
    const std::string v = argv[++i];
    if (k == "--send-ns")
      o.send_ns = v;
    else if (k == "--recv-ns")
      o.recv_ns = v;
    else if (k == "--to")
      o.to = v;
    else if (k == "--listen")
      o.listen = v;
    else if (k == "--count")
      o.count = std::stol(v);
    else if (k == "--interval-us")
      o.interval_us = std::stod(v);
    else if (k == "--size")
      o.size = std::stoul(v);
    else if (k == "--wait-ms")
      o.wait_ms = std::stol(v);
    else if (k == "--pps")
      o.pps = std::stol(v);
    else
      throw std::invalid_argument("unknown option " + k);
  }
  if (o.to.empty()) throw std::invalid_argument("--to is required");
  if (o.mode == "stream" && o.listen.empty()) throw std::invalid_argument("--listen is required");
  if (o.size < kHeader || o.size > 65000) throw std::invalid_argument("--size must be 16..65000");
  if (o.count < 1 || o.interval_us < 0 || o.pps < 1)
    throw std::invalid_argument("bad --count, --interval-us or --pps");
  return o;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(
      std::max(1.0, std::ceil(p / 100 * static_cast<double>(sorted.size()))));
  return sorted[std::min(rank, sorted.size()) - 1];
}

int run_stream(const Options& o) {
  const sockaddr_in to = parse_address(o.to);
  const int tx = udp_socket_in(o.send_ns, std::nullopt);
  const int rx = udp_socket_in(o.recv_ns, parse_address(o.listen));

  std::vector<std::int64_t> delay_ns(static_cast<std::size_t>(o.count), -1);
  long duplicated = 0, foreign = 0;
  std::int64_t first_send = 0, last_receive = 0;
  std::atomic<bool> sending_done{false};
  std::atomic<std::int64_t> done_at{0};

  std::thread receiver([&] {
    std::vector<std::uint8_t> buf(65536);
    for (;;) {
      pollfd p{rx, POLLIN, 0};
      const int r = ::poll(&p, 1, 20);
      if (r <= 0) {
        if (sending_done && now_ns() - done_at > o.wait_ms * 1'000'000) break;
        continue;
      }
      const ssize_t n = ::recv(rx, buf.data(), buf.size(), MSG_DONTWAIT);
      const std::int64_t t = now_ns();
      if (n < 0) continue;
      if (static_cast<std::size_t>(n) != o.size || get_u32(buf.data()) != kMagic) {
        ++foreign;
        continue;
      }
      const std::uint32_t seq = get_u32(buf.data() + 4);
      if (seq >= delay_ns.size()) {
        ++foreign;
        continue;
      }
      if (delay_ns[seq] >= 0) {
        ++duplicated;
        continue;
      }
      delay_ns[seq] = t - static_cast<std::int64_t>(get_u64(buf.data() + 8));
      last_receive = t;
    }
  });

  std::vector<std::uint8_t> d(o.size);
  for (std::size_t i = kHeader; i < o.size; ++i) d[i] = static_cast<std::uint8_t>(i * 37);
  put_u32(d.data(), kMagic);
  const auto interval = static_cast<std::int64_t>(o.interval_us * 1000);
  std::int64_t next = now_ns();
  long send_errors = 0;
  first_send = next;
  for (long seq = 0; seq < o.count; ++seq) {
    if (interval > 0) {
      timespec ts{static_cast<time_t>(next / 1'000'000'000),
                  static_cast<long>(next % 1'000'000'000)};
      while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
      next += interval;
    }
    put_u32(d.data() + 4, static_cast<std::uint32_t>(seq));
    put_u64(d.data() + 8, static_cast<std::uint64_t>(now_ns()));
    // Flat out, a full socket buffer blocks the sender: the rate is what the path takes.
    if (::sendto(tx, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) < 0)
      ++send_errors;
  }
  done_at = now_ns();
  sending_done = true;
  receiver.join();
  ::close(tx);
  ::close(rx);

  std::vector<double> us;
  us.reserve(delay_ns.size());
  for (std::int64_t ns : delay_ns) {
    if (ns >= 0) us.push_back(static_cast<double>(ns) / 1000.0);
  }
  double sum = 0;
  for (double x : us) sum += x;
  std::vector<double> sorted = us;
  std::sort(sorted.begin(), sorted.end());
  const long received = static_cast<long>(us.size());
  const double seconds = received ? static_cast<double>(last_receive - first_send) / 1e9 : 0;
  std::printf(
      "{\"sent\": %ld, \"received\": %ld, \"lost\": %ld, \"duplicated\": %ld, \"foreign\": %ld, "
      "\"send_errors\": %ld, "
      "\"size\": %zu, \"interval_us\": %.1f, \"seconds\": %.4f, \"min_us\": %.1f, \"p50_us\": "
      "%.1f, \"p99_us\": %.1f, "
      "\"mean_us\": %.1f, \"max_us\": %.1f}\n",
      o.count, received, o.count - received, duplicated, foreign, send_errors, o.size,
      o.interval_us, seconds, sorted.empty() ? 0 : sorted.front(), percentile(sorted, 50),
      percentile(sorted, 99), received ? sum / static_cast<double>(received) : 0,
      sorted.empty() ? 0 : sorted.back());
  return 0;
}

std::atomic<bool> g_stop{false};

int run_flood(const Options& o) {
  const sockaddr_in to = parse_address(o.to);
  const int tx = udp_socket_in(o.send_ns, std::nullopt);
  struct sigaction sa {};
  sa.sa_handler = [](int) { g_stop = true; };
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  std::vector<std::uint8_t> junk(o.size, 0);
  const long per_burst = std::max(1L, o.pps / 100);
  std::uint64_t flooded = 0;
  std::printf("flood ready\n");
  std::fflush(stdout);
  std::int64_t next = now_ns();
  while (!g_stop) {
    for (long i = 0; i < per_burst; ++i) {
      if (::sendto(tx, junk.data(), junk.size(), MSG_DONTWAIT,
                   reinterpret_cast<const sockaddr*>(&to), sizeof to) > 0) {
        ++flooded;
      }
    }
    next += 10'000'000;
    timespec ts{static_cast<time_t>(next / 1'000'000'000), static_cast<long>(next % 1'000'000'000)};
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
                      nullptr);  // EINTR: the loop checks g_stop
  }
  ::close(tx);
  std::printf("{\"flooded\": %llu}\n", static_cast<unsigned long long>(flooded));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (o.mode == "stream") return run_stream(o);
    if (o.mode == "flood") return run_flood(o);
    throw std::invalid_argument("unknown mode '" + o.mode + "' (stream or flood)");
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "trip-probe: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trip-probe: error: %s\n", e.what());
    return 1;
  }
}
