// The two processes of `srup bench-payload` and how the command starts them: the publisher and
// the subscriber of one scheme (this program again, with the hidden --role), a Unix socketpair
// between them on fd 3 in both, each one's report as one JSON line on its stdout.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench_payload.hpp"
#include "pqot/crypto/secure.hpp"

extern char** environ;

namespace pqot::srup_tool::payload {

namespace {

using RoleClock = std::chrono::steady_clock;
using RoleJson = nlohmann::ordered_json;
constexpr int kPeerFd = 3;                    // the socket, in both roles
constexpr std::uint32_t kMaxFrame = 1 << 20;  // any wire of any scheme, and then some

// ---- the socket: u32 big-endian length, then the bytes ----------------------------------------

void write_all(int fd, ByteView data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(std::string("bench-payload: write: ") + std::strerror(errno));
    data = data.subspan(static_cast<std::size_t>(n));
  }
}

void read_exact(int fd, crypto::MutableByteView out) {
  while (!out.empty()) {
    const ssize_t n = ::read(fd, out.data(), out.size());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) throw std::runtime_error("bench-payload: the peer process closed the connection");
    if (n < 0)
      throw std::runtime_error(std::string("bench-payload: read: ") + std::strerror(errno));
    out = out.subspan(static_cast<std::size_t>(n));
  }
}

void send_frame(int fd, ByteView data) {
  if (data.size() > kMaxFrame) throw std::length_error("bench-payload: frame too long");
  const auto n = static_cast<std::uint32_t>(data.size());
  const std::uint8_t head[4] = {static_cast<std::uint8_t>(n >> 24),
                                static_cast<std::uint8_t>(n >> 16),
                                static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
  write_all(fd, head);
  write_all(fd, data);
}

template <class Container = Bytes>
Container recv_frame(int fd) {
  std::uint8_t head[4];
  read_exact(fd, head);
  const std::uint32_t n = (std::uint32_t{head[0]} << 24) | (std::uint32_t{head[1]} << 16) |
                          (std::uint32_t{head[2]} << 8) | head[3];
  if (n > kMaxFrame)
    throw std::length_error("bench-payload: frame of " + std::to_string(n) + " bytes");
  Container out(n);
  read_exact(fd, out);
  return out;
}

double cpu_us_now() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return 1e6 * static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

long max_rss_kb() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

double us_since(RoleClock::time_point t0) {
  return std::chrono::duration<double, std::micro>(RoleClock::now() - t0).count();
}

// ---- the two roles --------------------------------------------------------------------------

RsaKeys read_rsa_keys_from_stdin() {
  // What the orchestrator writes: the public key's frame, then the secret key's.
  RsaKeys k;
  k.public_key = recv_frame(STDIN_FILENO);
  k.secret_key = recv_frame<SecretBytes>(STDIN_FILENO);
  return k;
}

}  // namespace

void run_publisher(const SchemeInfo& s, int messages) {
  const long rss_start = max_rss_kb();
  auto pub = make_publisher(s, recv_frame(kPeerFd));
  send_frame(kPeerFd, pub->setup());
  RoleJson out = {{"role", "publisher"}, {"scheme", s.name}, {"rss_start_kb", rss_start}};
  for (Phases kind : kKinds) {
    const auto readings = make_readings(kind, static_cast<std::size_t>(messages));
    RoleJson us = RoleJson::array(), bytes = RoleJson::array(), plain_bytes = RoleJson::array();
    const double cpu0 = cpu_us_now();
    for (const MeterReading& r : readings) {
      const Bytes plain = plaintext_of(s, r);
      const auto t0 = RoleClock::now();
      const Bytes wire = pub->encrypt(plain);
      us.push_back(us_since(t0));
      bytes.push_back(wire.size() - pub->framing_bytes_last());
      plain_bytes.push_back(plain.size());
      send_frame(kPeerFd, wire);
      std::uint8_t verdict = 0;
      read_exact(kPeerFd, {&verdict, 1});
    }
    out["kinds"].push_back({{"phases", static_cast<int>(kind)},
                            {"cpu_us", cpu_us_now() - cpu0},
                            {"us", us},
                            {"bytes", bytes},
                            {"plain_bytes", plain_bytes}});
  }
  out["max_rss_kb"] = max_rss_kb();
  std::cout << out.dump() << "\n";
}

void run_subscriber(const SchemeInfo& s, int messages) {
  const long rss_start = max_rss_kb();
  const bool rsa = s.family == Family::rsa_chunked || s.family == Family::rsa_hybrid;
  const RsaKeys keys = rsa ? read_rsa_keys_from_stdin() : RsaKeys{};
  auto sub = make_subscriber(s, rsa ? &keys : nullptr);
  send_frame(kPeerFd, sub->public_part());
  sub->accept_setup(recv_frame(kPeerFd));
  RoleJson out = {{"role", "subscriber"}, {"scheme", s.name}, {"rss_start_kb", rss_start}};
  for (Phases kind : kKinds) {
    const auto readings = make_readings(kind, static_cast<std::size_t>(messages));
    RoleJson us = RoleJson::array();
    int ok = 0;
    std::string first_error;
    const double cpu0 = cpu_us_now();
    for (const MeterReading& r : readings) {
      const Bytes expected = plaintext_of(s, r);
      const Bytes wire = recv_frame(kPeerFd);
      bool good = false;
      const auto t0 = RoleClock::now();
      try {
        const SecretBytes plain = sub->decrypt(wire);
        us.push_back(us_since(t0));
        good = std::equal(plain.begin(), plain.end(), expected.begin(), expected.end());
        if (!good && first_error.empty()) first_error = "decrypted to other bytes than the reading";
      } catch (const std::exception& e) {
        us.push_back(us_since(t0));
        if (first_error.empty()) first_error = e.what();
      }
      ok += good ? 1 : 0;
      const std::uint8_t verdict = good ? 1 : 0;
      write_all(kPeerFd, {&verdict, 1});
    }
    out["kinds"].push_back({{"phases", static_cast<int>(kind)},
                            {"cpu_us", cpu_us_now() - cpu0},
                            {"us", us},
                            {"decrypted_ok", ok},
                            {"first_error", first_error}});
  }
  out["max_rss_kb"] = max_rss_kb();
  std::cout << out.dump() << "\n";
}

// ---- starting them ---------------------------------------------------------------------------

namespace {

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd = std::exchange(o.fd, -1);
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::pair<Fd, Fd> make_pipe() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("bench-payload: pipe: ") + std::strerror(errno));
  return {Fd(p[0]), Fd(p[1])};
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    throw std::runtime_error("bench-payload: cannot find its own program (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(n));
}

// Starts this program in `role` with the socket on fd 3, stdout to `out`, stdin from `in`.
pid_t spawn_role(const std::string& exe, const std::string& role, const SchemeInfo& s, int messages,
                 int sock, int out, int in) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sock, kPeerFd);
  posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
  if (in >= 0) posix_spawn_file_actions_adddup2(&fa, in, STDIN_FILENO);
  std::vector<std::string> args = {
      exe,        "bench-payload",     "--role",     role,
      "--scheme", std::string(s.name), "--messages", std::to_string(messages)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    throw std::runtime_error("bench-payload: cannot start " + role + ": " + std::strerror(rc));
  return pid;
}

std::string read_to_end(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

void wait_ok(pid_t pid, const std::string& what) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("bench-payload: the " + what + " failed (status " +
                             std::to_string(status) + "; its error is above)");
  }
}

}  // namespace

PairReports run_pair(const SchemeInfo& s, int messages, const RsaKeys* rsa) {
  // SIGPIPE ignored (and so in the children too): a side that dies makes the other's write fail
  // with EPIPE, an error with a message, instead of killing it silently.
  std::signal(SIGPIPE, SIG_IGN);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw std::runtime_error(std::string("bench-payload: socketpair: ") + std::strerror(errno));
  }
  Fd pub_sock(sv[0]), sub_sock(sv[1]);
  auto [pub_out_r, pub_out_w] = make_pipe();
  auto [sub_out_r, sub_out_w] = make_pipe();
  auto [sub_in_r, sub_in_w] = make_pipe();
  const std::string exe = self_exe();
  const pid_t sub =
      spawn_role(exe, "subscriber", s, messages, sub_sock.fd, sub_out_w.fd, sub_in_r.fd);
  const pid_t pub = spawn_role(exe, "publisher", s, messages, pub_sock.fd, pub_out_w.fd, -1);
  pub_sock.reset();
  sub_sock.reset();
  pub_out_w.reset();
  sub_out_w.reset();
  sub_in_r.reset();
  if (rsa != nullptr) {  // a few KiB: fits the pipe whatever the subscriber does
    send_frame(sub_in_w.fd, rsa->public_key);
    send_frame(sub_in_w.fd, rsa->secret_key);
  }
  sub_in_w.reset();
  // The publisher finishes without waiting for the subscriber's report, so reading its report
  // first cannot block the subscriber (whose report waits in its own pipe).
  PairReports out{read_to_end(pub_out_r.fd), read_to_end(sub_out_r.fd)};
  wait_ok(pub, "publisher of " + std::string(s.name));
  wait_ok(sub, "subscriber of " + std::string(s.name));
  return out;
}

}  // namespace pqot::srup_tool::payload
