// srup bench-payload: the energy-monitoring paper's payload-encryption table, pqot's version
// (docs/srup-tool.md, "bench-payload"; issue 16). Per scheme, a publisher process encrypts 1- and
// 3-phase meter readings to a subscriber process, which decrypts and checks each one.
//
// Processes: this program starts itself twice per scheme (hidden --role publisher|subscriber),
// so CPU time and peak RSS are each side's own and each scheme's own. They talk over a Unix
// socketpair in lock-step (the publisher waits for the subscriber's one-byte verdict before the
// next reading), so encryption and decryption never share the machine with each other. Not MQTT:
// the broker would add nothing to what is timed (the calls around encrypt and decrypt) but its
// own CPU and scheduling noise, and `srup bench-mqtt` already measures the broker path.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <map>
#include <sstream>
#include <utility>

#include "bench_payload.hpp"
#include "cli.hpp"
#include "pqot/crypto/key_file.hpp"
#include "pqot/crypto/rsa.hpp"
#include "pqot/crypto/signature.hpp"

extern char** environ;

namespace pqot::srup_tool::payload {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;
constexpr int kPeerFd = 3;                    // the socket, in both roles
constexpr std::uint32_t kMaxFrame = 1 << 20;  // any wire of any scheme, and then some
constexpr int kMaxMessages = 100'000;
constexpr int kSmokeMessages = 3;
constexpr Phases kKinds[] = {Phases::one, Phases::three};

struct PayloadOptions {
  int messages = 500;
  std::string schemes;
  bool json = false;
  bool smoke = false;
  std::string rsa_keys;  // a directory with rsa{2048,3072,7680}-a.p8.der instead of fresh keys
  std::string role;      // hidden: publisher | subscriber
  std::string scheme;    // hidden: the role's scheme
};

// ---- the socket: u32 big-endian length, then the bytes ----------------------------------------

void write_all(int fd, ByteView data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("bench-payload: write: ") + std::strerror(errno));
    data = data.subspan(static_cast<std::size_t>(n));
  }
}

void read_exact(int fd, crypto::MutableByteView out) {
  while (!out.empty()) {
    const ssize_t n = ::read(fd, out.data(), out.size());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) throw std::runtime_error("bench-payload: the peer process closed the connection");
    if (n < 0) throw std::runtime_error(std::string("bench-payload: read: ") + std::strerror(errno));
    out = out.subspan(static_cast<std::size_t>(n));
  }
}

void send_frame(int fd, ByteView data) {
  if (data.size() > kMaxFrame) throw std::length_error("bench-payload: frame too long");
  const auto n = static_cast<std::uint32_t>(data.size());
  const std::uint8_t head[4] = {static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
                                static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
  write_all(fd, head);
  write_all(fd, data);
}

Bytes recv_frame(int fd) {
  std::uint8_t head[4];
  read_exact(fd, head);
  const std::uint32_t n = (std::uint32_t{head[0]} << 24) | (std::uint32_t{head[1]} << 16) |
                          (std::uint32_t{head[2]} << 8) | head[3];
  if (n > kMaxFrame) throw std::length_error("bench-payload: frame of " + std::to_string(n) + " bytes");
  Bytes out(n);
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

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// ---- the two roles --------------------------------------------------------------------------

RsaKeys read_rsa_keys_from_stdin() {
  // What the orchestrator writes: public key frame, secret key frame.
  RsaKeys k;
  k.public_key = recv_frame(STDIN_FILENO);
  Bytes sk = recv_frame(STDIN_FILENO);
  k.secret_key = SecretBytes(sk.begin(), sk.end());
  std::fill(sk.begin(), sk.end(), std::uint8_t{0});
  return k;
}

void run_publisher(const PayloadOptions& o, const SchemeInfo& s) {
  const long rss_start = max_rss_kb();
  auto pub = make_publisher(s, recv_frame(kPeerFd));
  send_frame(kPeerFd, pub->setup());
  Json out = {{"role", "publisher"}, {"scheme", s.name}, {"rss_start_kb", rss_start}};
  for (Phases kind : kKinds) {
    const auto readings = make_readings(kind, static_cast<std::size_t>(o.messages));
    Json us = Json::array(), bytes = Json::array(), plain_bytes = Json::array();
    const double cpu0 = cpu_us_now();
    for (const MeterReading& r : readings) {
      const Bytes plain = plaintext_of(s, r);
      const auto t0 = Clock::now();
      const Bytes wire = pub->encrypt(plain);
      us.push_back(us_since(t0));
      bytes.push_back(wire.size() - pub->framing_bytes_last());
      plain_bytes.push_back(plain.size());
      send_frame(kPeerFd, wire);
      std::uint8_t verdict = 0;
      read_exact(kPeerFd, {&verdict, 1});
    }
    out["kinds"].push_back({{"phases", static_cast<int>(kind)}, {"cpu_us", cpu_us_now() - cpu0}, {"us", us},
                            {"bytes", bytes}, {"plain_bytes", plain_bytes}});
  }
  out["max_rss_kb"] = max_rss_kb();
  std::cout << out.dump() << "\n";
}

void run_subscriber(const PayloadOptions& o, const SchemeInfo& s) {
  const long rss_start = max_rss_kb();
  const bool rsa = s.family == Family::rsa_chunked || s.family == Family::rsa_hybrid;
  const RsaKeys keys = rsa ? read_rsa_keys_from_stdin() : RsaKeys{};
  auto sub = make_subscriber(s, rsa ? &keys : nullptr);
  send_frame(kPeerFd, sub->public_part());
  sub->accept_setup(recv_frame(kPeerFd));
  Json out = {{"role", "subscriber"}, {"scheme", s.name}, {"rss_start_kb", rss_start}};
  for (Phases kind : kKinds) {
    const auto readings = make_readings(kind, static_cast<std::size_t>(o.messages));
    Json us = Json::array();
    int ok = 0;
    std::string first_error;
    const double cpu0 = cpu_us_now();
    for (const MeterReading& r : readings) {
      const Bytes expected = plaintext_of(s, r);
      const Bytes wire = recv_frame(kPeerFd);
      bool good = false;
      const auto t0 = Clock::now();
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
    out["kinds"].push_back({{"phases", static_cast<int>(kind)}, {"cpu_us", cpu_us_now() - cpu0}, {"us", us},
                            {"decrypted_ok", ok}, {"first_error", first_error}});
  }
  out["max_rss_kb"] = max_rss_kb();
  std::cout << out.dump() << "\n";
}

// ---- the orchestrator ------------------------------------------------------------------------

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
  if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error(std::string("bench-payload: pipe: ") + std::strerror(errno));
  return {Fd(p[0]), Fd(p[1])};
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("bench-payload: cannot find its own program (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(n));
}

// Starts this program in `role` with the socket on fd 3, stdout to `out`, stdin from `in`.
pid_t spawn_role(const std::string& exe, const std::string& role, const SchemeInfo& s, int messages, int sock,
                 int out, int in) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sock, kPeerFd);
  posix_spawn_file_actions_adddup2(&fa, out, STDOUT_FILENO);
  if (in >= 0) posix_spawn_file_actions_adddup2(&fa, in, STDIN_FILENO);
  std::vector<std::string> args = {exe, "bench-payload", "--role", role, "--scheme", std::string(s.name),
                                   "--messages", std::to_string(messages)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("bench-payload: cannot start " + role + ": " + std::strerror(rc));
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
    throw std::runtime_error("bench-payload: the " + what + " failed (status " + std::to_string(status) +
                             "; its error is above)");
  }
}

// Both sides' reports for scheme `s`.
std::pair<Json, Json> run_pair(const std::string& exe, const SchemeInfo& s, int messages, const RsaKeys* rsa) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw std::runtime_error(std::string("bench-payload: socketpair: ") + std::strerror(errno));
  }
  Fd pub_sock(sv[0]), sub_sock(sv[1]);
  auto [pub_out_r, pub_out_w] = make_pipe();
  auto [sub_out_r, sub_out_w] = make_pipe();
  auto [sub_in_r, sub_in_w] = make_pipe();
  const pid_t sub = spawn_role(exe, "subscriber", s, messages, sub_sock.fd, sub_out_w.fd, sub_in_r.fd);
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
  const std::string pub_text = read_to_end(pub_out_r.fd);
  const std::string sub_text = read_to_end(sub_out_r.fd);
  wait_ok(pub, "publisher of " + std::string(s.name));
  wait_ok(sub, "subscriber of " + std::string(s.name));
  return {Json::parse(pub_text), Json::parse(sub_text)};
}

struct Stats {
  double median = 0, p99 = 0, mean = 0, max = 0;
};

Stats stats_of(const Json& values) {
  std::vector<double> v;
  for (const auto& x : values) v.push_back(x.get<double>());
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  // Nearest rank: the smallest value with at least 99 % of the samples at or below it.
  s.p99 = v[(99 * n + 99) / 100 - 1];
  for (double x : v) s.mean += x / static_cast<double>(n);
  s.max = v.back();
  return s;
}

Json stats_json(const Stats& s) { return {{"median", s.median}, {"p99", s.p99}, {"mean", s.mean}, {"max", s.max}}; }

RsaKeys rsa_keys_for(const SchemeInfo& s, const PayloadOptions& o, Json& keygen_log) {
  const auto& oaep = crypto::rsa_oaep_by_name(s.primitive);
  const int bits = static_cast<int>(oaep.modulus());
  RsaKeys k;
  const auto t0 = Clock::now();
  if (!o.rsa_keys.empty()) {
    const std::string file = o.rsa_keys + "/rsa" + std::to_string(bits) + "-a.p8.der";
    std::ifstream in(file, std::ios::binary);
    if (!in) throw UsageError("--rsa-keys: cannot read " + file);
    const std::string der((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto& sig = crypto::signature_by_name("RSA-" + std::to_string(bits) + "-PKCS1");
    auto decoded = crypto::decode_private_key(crypto::as_bytes(der), &sig);
    k.public_key = std::move(decoded.keys.public_key);
    k.secret_key = std::move(decoded.keys.secret_key);
  } else {
    auto pair = oaep.keygen();
    k.public_key = std::move(pair.public_key);
    k.secret_key = std::move(pair.secret_key);
  }
  keygen_log[std::to_string(bits)] = {{"source", o.rsa_keys.empty() ? "generated" : "file"},
                                      {"seconds", us_since(t0) / 1e6}};
  return k;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::vector<const SchemeInfo*> chosen_schemes(const PayloadOptions& o) {
  std::vector<const SchemeInfo*> out;
  if (o.schemes.empty()) {
    for (const SchemeInfo& s : all_schemes()) out.push_back(&s);
    return out;
  }
  std::stringstream list(o.schemes);
  for (std::string name; std::getline(list, name, ',');) {
    const SchemeInfo* s = &scheme_by_name(name);
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

std::string_view family_name(Family f) {
  switch (f) {
    case Family::rsa_chunked: return "RSA-OAEP chunks, base64 (the paper's)";
    case Family::rsa_hybrid: return "RSA-OAEP key + AES-256-GCM";
    case Family::kem_aead: return "KEM + AES-256-GCM";
    case Family::srup_sealed: return "SRUP-PQ mode 1 (sealed Data, signed)";
    case Family::srup_telemetry: return "SRUP-PQ mode 3 (telemetry group key)";
  }
  return "?";
}

void print_table(const Json& report) {
  std::cout << std::left << std::setw(19) << "scheme" << std::setw(4) << "lvl" << std::setw(4) << "ph" << std::right
            << std::setw(6) << "plain" << std::setw(7) << "wire" << std::setw(11) << "enc med" << std::setw(10)
            << "enc p99" << std::setw(11) << "dec med" << std::setw(10) << "dec p99" << std::setw(9) << "cpu pub"
            << std::setw(9) << "cpu sub" << std::setw(8) << "rss pub" << std::setw(8) << "rss sub" << std::setw(9)
            << "ok" << "\n";
  for (const auto& r : report["rows"]) {
    std::cout << std::left << std::setw(19) << r["scheme"].get<std::string>() << std::setw(4) << r["level"].get<int>()
              << std::setw(4) << r["phases"].get<int>() << std::right << std::fixed << std::setprecision(0)
              << std::setw(6) << r["plaintext_bytes"]["median"].get<double>() << std::setw(7)
              << r["wire_bytes"]["median"].get<double>() << std::setprecision(1) << std::setw(11)
              << r["encrypt_us"]["median"].get<double>() << std::setw(10) << r["encrypt_us"]["p99"].get<double>()
              << std::setw(11) << r["decrypt_us"]["median"].get<double>() << std::setw(10)
              << r["decrypt_us"]["p99"].get<double>() << std::setw(9)
              << r["publisher"]["cpu_us_per_message"].get<double>() << std::setw(9)
              << r["subscriber"]["cpu_us_per_message"].get<double>() << std::setprecision(1) << std::setw(8)
              << r["publisher"]["max_rss_kb"].get<double>() / 1024 << std::setw(8)
              << r["subscriber"]["max_rss_kb"].get<double>() / 1024 << std::setw(5)
              << r["decrypted_ok"].get<int>() << "/" << std::left << std::setw(3) << r["messages"].get<int>()
              << "\n";
  }
  std::cout << "times in us (median, p99 nearest rank) of the encrypt/decrypt calls alone; cpu: user+sys us per "
               "message of each process's loop; rss: peak MiB of each process; lvl 0 = RSA-2048 (112-bit)\n";
}

void orchestrate(const PayloadOptions& o) {
  const int messages = o.smoke ? kSmokeMessages : o.messages;
  const auto schemes = chosen_schemes(o);
  const std::string exe = self_exe();
  const auto t_run = Clock::now();
  Json report;
  report["messages"] = messages;
  report["seed"] = kReadingSeed;
  report["transport"] = "Unix socketpair, lock-step (one reading in flight)";
  report["machine"] = {{"cpu", cpu_model()},
                       {"cores", ::sysconf(_SC_NPROCESSORS_ONLN)},
                       {"kernel", first_line("/proc/sys/kernel/osrelease")},
                       {"loadavg_start", first_line("/proc/loadavg")}};
  Json keygen_log = Json::object();
  std::map<std::string, RsaKeys> rsa_cache;  // one key per modulus per run
  bool all_ok = true;
  for (const SchemeInfo* s : schemes) {
    const bool rsa = s->family == Family::rsa_chunked || s->family == Family::rsa_hybrid;
    if (rsa && !rsa_cache.count(std::string(s->primitive))) {
      rsa_cache.emplace(std::string(s->primitive), rsa_keys_for(*s, o, keygen_log));
    }
    if (!o.json) std::cerr << "bench-payload: " << s->name << "\n";
    const auto [pub, sub] = run_pair(exe, *s, messages, rsa ? &rsa_cache.at(std::string(s->primitive)) : nullptr);
    for (std::size_t k = 0; k < std::size(kKinds); ++k) {
      const Json& pk = pub["kinds"].at(k);
      const Json& sk = sub["kinds"].at(k);
      const int ok = sk["decrypted_ok"].get<int>();
      all_ok = all_ok && ok == messages;
      report["rows"].push_back(
          {{"scheme", s->name},
           {"level", s->level},
           {"construction", family_name(s->family)},
           {"primitive", s->primitive},
           {"mlkem_aead", s->mlkem},
           {"contender", s->contender},
           {"phases", pk["phases"]},
           {"messages", messages},
           {"decrypted_ok", ok},
           {"first_error", sk["first_error"]},
           {"plaintext_bytes", stats_json(stats_of(pk["plain_bytes"]))},
           {"wire_bytes", stats_json(stats_of(pk["bytes"]))},
           {"encrypt_us", stats_json(stats_of(pk["us"]))},
           {"decrypt_us", stats_json(stats_of(sk["us"]))},
           {"publisher",
            {{"cpu_us_per_message", pk["cpu_us"].get<double>() / messages},
             {"max_rss_kb", pub["max_rss_kb"]},
             {"rss_start_kb", pub["rss_start_kb"]}}},
           {"subscriber",
            {{"cpu_us_per_message", sk["cpu_us"].get<double>() / messages},
             {"max_rss_kb", sub["max_rss_kb"]},
             {"rss_start_kb", sub["rss_start_kb"]}}}});
    }
  }
  report["rsa_keys"] = keygen_log;
  report["machine"]["loadavg_end"] = first_line("/proc/loadavg");
  report["seconds"] = us_since(t_run) / 1e6;
  report["all_decrypted"] = all_ok;
  if (o.json) {
    std::cout << report.dump() << "\n";
  } else {
    print_table(report);
  }
  if (!all_ok) throw ExitError(kExitInternal, "bench-payload: some readings did not decrypt (see decrypted_ok)");
}

}  // namespace

}  // namespace pqot::srup_tool::payload

namespace pqot::srup_tool {

void add_bench_payload_command(CLI::App& app) {
  auto o = std::make_shared<payload::PayloadOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench-payload",
      "Meter readings (1- and 3-phase JSON) encrypted by a publisher process and decrypted by a subscriber "
      "process: RSA-OAEP (chunked, as the energy-monitoring paper, and hybrid), NTRU, Saber, ML-KEM and X-Wing "
      "with AES-256-GCM, SRUP-PQ modes 1 and 3; times, bytes, CPU and peak RSS per side");
  cmd->add_option("--messages", o->messages, "Readings of each kind (1-phase, 3-phase) per scheme (default 500)")
      ->check(CLI::Range(1, payload::kMaxMessages));
  cmd->add_option("--schemes", o->schemes, "Comma-separated schemes (default: all; see docs/srup-tool.md)");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("--smoke", o->smoke, "3 readings of each kind per scheme: checks that everything decrypts");
  cmd->add_option("--rsa-keys", o->rsa_keys,
                  "Directory with rsa2048-a.p8.der, rsa3072-a.p8.der, rsa7680-a.p8.der (PKCS#8 DER) to use "
                  "instead of generating RSA keys (a 7680-bit key takes 10-55 s)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--role", o->role)->check(CLI::IsMember({"publisher", "subscriber"}))->group("");
  cmd->add_option("--scheme", o->scheme)->group("");
  cmd->callback([o] {
    if (o->role.empty()) {
      payload::orchestrate(*o);
      return;
    }
    const payload::SchemeInfo& s = payload::scheme_by_name(o->scheme);
    if (o->role == "publisher") {
      payload::run_publisher(*o, s);
    } else {
      payload::run_subscriber(*o, s);
    }
  });
}

}  // namespace pqot::srup_tool
