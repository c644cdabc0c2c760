// linkem: a userspace link emulator. Joins two network namespaces through one TUN device in each
// and forwards the IP packets between them with per-direction delay, jitter, loss and rate, for
// kernels without netem. One thread: epoll on both TUN descriptors, a timerfd armed for the next
// due packet, and a signalfd. See README.md.
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "direction.hpp"
#include "fd.hpp"
#include "netns_tun.hpp"

namespace pqot::bench::linkem {
namespace {

// Room above the MTU in every packet buffer, so that an oversize read shows up as such.
constexpr std::size_t kSlack = 64;
// Packets read from one descriptor per wake-up before the other side gets its turn.
constexpr int kReadBatch = 64;
// Memory bound on the packets held per direction (rate queue plus delay line).
constexpr std::size_t kMaxHeldBytes = std::size_t{64} << 20;
// Spare buffers kept for reuse after a burst.
constexpr std::size_t kMaxFreeBuffers = 1024;
// Bounds of the learnt timer lead (see Emulator::on_timer) and its step per timer wake-up.
constexpr Nanos kMaxLead = 100'000;
constexpr Nanos kLeadStep = 500;

Nanos monotonic_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "linkem: error: %s\n", what.c_str());
  std::exit(1);
}

[[noreturn]] void die_errno(const std::string& what) {
  die(what + ": " + std::strerror(errno));
}

struct Options {
  std::string ns_a, ns_b, addr_a, addr_b;
  std::string device = "lk0";
  DirectionConfig a2b, b2a;
  std::uint64_t seed = 1;
  int mtu = 1500;
  std::string stats_json;
  int realtime = 0;  // SCHED_FIFO priority, 0: normal scheduling
};

// The event loop: packets from `a` go to `b` through the a2b direction and back through b2a.
class Emulator {
 public:
  Emulator(Fd tun_a, Fd tun_b, const Options& options)
      : tun_a_(std::move(tun_a)),
        tun_b_(std::move(tun_b)),
        a2b_(options.a2b, options.seed * 2 + 0),
        b2a_(options.b2a, options.seed * 2 + 1),
        buffer_size_(static_cast<std::size_t>(options.mtu) + kSlack),
        mtu_(static_cast<std::size_t>(options.mtu)) {
    timer_ = Fd(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
    if (!timer_.valid()) die_errno("timerfd_create");
    epoll_ = Fd(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_.valid()) die_errno("epoll_create1");
  }

  // Runs until a signal arrives on `signal_fd`.
  void run(int signal_fd) {
    watch(tun_a_.get(), kTagA);
    watch(tun_b_.get(), kTagB);
    watch(timer_.get(), kTagTimer);
    watch(signal_fd, kTagSignal);
    std::array<epoll_event, 8> events{};
    for (bool stop = false; !stop;) {
      const Nanos wait_start = monotonic_now();
      const int n = ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        die_errno("epoll_wait");
      }
      for (int i = 0; i < n; ++i) {
        switch (events[static_cast<std::size_t>(i)].data.u32) {
          case kTagA:
            read_from(tun_a_.get(), a2b_, tun_b_.get());
            break;
          case kTagB:
            read_from(tun_b_.get(), b2a_, tun_a_.get());
            break;
          // Only a timer that expired while the loop slept measures the wake-up latency.
          case kTagTimer:
            on_timer(n == 1 && armed_ >= wait_start);
            break;
          case kTagSignal:
            stop = true;  // the loop ends; the signal itself needs no reading
            break;
          default:
            break;
        }
      }
      Nanos now = monotonic_now();
      flush(a2b_, tun_b_.get(), now);
      flush(b2a_, tun_a_.get(), now);
      arm_timer();
    }
  }

  const DirectionStats& a2b_stats() const { return a2b_.stats(); }
  const DirectionStats& b2a_stats() const { return b2a_.stats(); }
  double timer_lead_us() const { return static_cast<double>(lead_) / 1e3; }

 private:
  static constexpr std::uint32_t kTagA = 0, kTagB = 1, kTagTimer = 2, kTagSignal = 3;

  // Timer wake-ups come late by tens of microseconds (interrupt, wake-up from idle; more in a VM).
  // The loop learns the median lateness and sends packets that much before their due time, so
  // that the median packet leaves at its due time rather than every packet late.
  void on_timer(bool learn) {
    std::uint64_t expirations = 0;
    if (::read(timer_.get(), &expirations, sizeof expirations) < 0) {
      if (errno == EAGAIN) return;
      die_errno("read timerfd");
    }
    if (learn) {
      // A median tracker (one step up or down per sample): the odd wake-up that came late
      // because the CPU was busy elsewhere does not drag the lead up.
      const Nanos late = monotonic_now() - armed_;
      lead_ = std::clamp<Nanos>(lead_ + (late > lead_ ? kLeadStep : -kLeadStep), 0, kMaxLead);
    }
    armed_ = 0;
  }

  void watch(int fd, std::uint32_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = tag;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) die_errno("epoll_ctl");
  }

  std::vector<std::uint8_t> take_buffer() {
    if (free_.empty()) return std::vector<std::uint8_t>(buffer_size_);
    auto buffer = std::move(free_.back());
    free_.pop_back();
    return buffer;
  }
  void give_back(std::vector<std::uint8_t> buffer) {
    if (free_.size() < kMaxFreeBuffers) free_.push_back(std::move(buffer));
  }

  // Reads up to a batch of packets; each is dropped, written at once when it is due now and
  // nothing is waiting before it, or held until its time.
  void read_from(int in, Direction& dir, int out) {
    for (int i = 0; i < kReadBatch; ++i) {
      auto buffer = take_buffer();
      const ssize_t got = ::read(in, buffer.data(), buffer.size());
      if (got < 0) {
        give_back(std::move(buffer));
        if (errno == EAGAIN || errno == EINTR) return;
        if (errno == EFAULT || errno == EINVAL || errno == EMSGSIZE) {  // a packet that did not fit
          dir.count_error();
          continue;
        }
        die_errno("read from TUN device");
      }
      const auto len = static_cast<std::size_t>(got);
      const Nanos now = monotonic_now();
      if (len == 0 || len > mtu_) {
        dir.count_error();
        give_back(std::move(buffer));
        continue;
      }
      const auto due = dir.schedule(len, now);
      if (!due) {
        give_back(std::move(buffer));
      } else if (*due <= now + lead_ && dir.empty()) {
        deliver(dir, out, buffer.data(), len);
        give_back(std::move(buffer));
      } else {
        dir.hold(Packet{*due, 0, len, std::move(buffer)});
      }
    }
  }

  void deliver(Direction& dir, int out, const std::uint8_t* data, std::size_t len) {
    const ssize_t put = ::write(out, data, len);
    if (put == static_cast<ssize_t>(len)) {
      dir.count_delivered(len);
    } else {
      dir.count_error();  // e.g. the receiving device went down; the packet is lost, as on a wire
    }
  }

  // Writes every held packet that is due; looks at the clock again before giving up, so that a
  // packet due within the time spent here goes out without a timer round trip.
  void flush(Direction& dir, int out, Nanos& now) {
    while (!dir.empty()) {
      if (dir.next_due() > now + lead_) {
        now = monotonic_now();
        if (dir.next_due() > now + lead_) return;
      }
      Packet packet = dir.pop();
      deliver(dir, out, packet.data.data(), packet.len);
      give_back(std::move(packet.data));
    }
  }

  void arm_timer() {
    Nanos next = 0;
    for (const Direction* dir : {&a2b_, &b2a_}) {
      if (!dir->empty() && (next == 0 || dir->next_due() < next)) next = dir->next_due();
    }
    // Nothing held: a timer still armed only causes one spurious wake-up.
    if (next == 0) return;
    next -= lead_;
    if (next == armed_) return;
    itimerspec spec{};
    spec.it_value.tv_sec = static_cast<time_t>(next / 1'000'000'000);
    spec.it_value.tv_nsec = static_cast<long>(next % 1'000'000'000);
    if (::timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &spec, nullptr) != 0) {
      die_errno("timerfd_settime");
    }
    armed_ = next;
  }

  Fd tun_a_, tun_b_, timer_, epoll_;
  Direction a2b_, b2a_;
  std::size_t buffer_size_;
  std::size_t mtu_;
  Nanos armed_ = 0;  // absolute expiry the timer is armed for, 0: none
  Nanos lead_ = 0;   // learnt timer lateness: packets go out this much before their due time
  std::vector<std::vector<std::uint8_t>> free_;
};

std::string describe(const DirectionConfig& c) {
  char rate[64] = "unlimited";
  if (c.rate_mbit > 0) std::snprintf(rate, sizeof rate, "%g Mbit/s", c.rate_mbit);
  char line[256];
  std::snprintf(line, sizeof line, "delay %g ms, jitter %g ms, loss %g, rate %s%s", c.delay_ms,
                c.jitter_ms, c.loss, rate, c.reorder ? ", reordering" : "");
  return line;
}

std::string stats_object(const DirectionStats& s) {
  char text[320];
  std::snprintf(text, sizeof text,
                "{\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"dropped_loss\": %" PRIu64
                ", \"dropped_queue\": %" PRIu64 ", \"dropped_error\": %" PRIu64 "}",
                s.packets, s.bytes, s.dropped_loss, s.dropped_queue, s.dropped_error);
  return text;
}

void write_stats(const std::string& path, const Emulator& emulator) {
  const std::string json = "{\"a2b\": " + stats_object(emulator.a2b_stats()) +
                           ", \"b2a\": " + stats_object(emulator.b2a_stats()) + "}\n";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) die_errno("cannot write " + path);
  const bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
  if (std::fclose(f) != 0 || !ok) die_errno("cannot write " + path);
}

// One knob (e.g. delay) set for both directions by --NAME and overridden by --a2b-NAME/--b2a-NAME.
struct Knob {
  double DirectionConfig::*field;
  double both = 0, a2b = 0, b2a = 0;
  CLI::Option* a2b_option = nullptr;
  CLI::Option* b2a_option = nullptr;
};

void add_knob(CLI::App& app, Knob& knob, const std::string& name, const std::string& help,
              double max) {
  const auto range = CLI::Range(0.0, max);
  app.add_option("--" + name, knob.both, help + ", both directions (default 0)")->check(range);
  knob.a2b_option = app.add_option("--a2b-" + name, knob.a2b, help + ", A to B only")->check(range);
  knob.b2a_option = app.add_option("--b2a-" + name, knob.b2a, help + ", B to A only")->check(range);
}

void apply_knob(const Knob& knob, Options& o) {
  o.a2b.*knob.field = knob.a2b_option->count() > 0 ? knob.a2b : knob.both;
  o.b2a.*knob.field = knob.b2a_option->count() > 0 ? knob.b2a : knob.both;
}

// Returns the exit code when the program should stop here (help, or a bad argument).
std::optional<int> parse_options(int argc, char** argv, Options& o) {
  CLI::App app{
      "linkem: userspace link emulator. Joins two existing network namespaces through a TUN "
      "device in each and applies delay, jitter, loss and rate per direction. Prints "
      "'linkem ready' when the link is up; runs until SIGTERM or SIGINT."};
  app.add_option("--ns-a", o.ns_a, "network namespace of side A (/var/run/netns/NAME)")->required();
  app.add_option("--addr-a", o.addr_a, "IPv4 address/prefix of A's device, e.g. 10.201.0.1/24")
      ->required();
  app.add_option("--ns-b", o.ns_b, "network namespace of side B")->required();
  app.add_option("--addr-b", o.addr_b, "IPv4 address/prefix of B's device, e.g. 10.201.0.2/24")
      ->required();
  std::array<Knob, 4> knobs{Knob{&DirectionConfig::delay_ms}, Knob{&DirectionConfig::jitter_ms},
                            Knob{&DirectionConfig::loss}, Knob{&DirectionConfig::rate_mbit}};
  add_knob(app, knobs[0], "delay-ms", "one-way delay in ms (fractional allowed)", 60'000);
  add_knob(app, knobs[1], "jitter-ms", "uniform jitter +-J ms per packet", 60'000);
  add_knob(app, knobs[2], "loss", "loss probability per packet, 0..1 (0.001 = 0.1 %)", 1);
  add_knob(app, knobs[3], "rate-mbit", "rate limit in Mbit/s (0: unlimited)", 1'000'000);
  std::size_t queue_packets = 1000;
  app.add_option("--queue-packets", queue_packets,
                 "drop-tail limit of each direction's rate queue, in packets (default 1000)")
      ->check(CLI::Range(1, 1'000'000));
  bool reorder = false;
  app.add_flag("--reorder", reorder,
               "let jitter reorder packets (default: a packet never overtakes the one before it)");
  app.add_option("--seed", o.seed, "seed of the loss and jitter generator (default 1)");
  app.add_option("--mtu", o.mtu, "MTU of both devices (default 1500)")
      ->check(CLI::Range(576, 9000));
  app.add_option("--dev", o.device, "device name in both namespaces (default lk0)");
  app.add_option("--stats-json", o.stats_json, "write per-direction counters here on exit");
  app.add_option("--realtime", o.realtime,
                 "run under SCHED_FIFO with this priority (1..99; default 0: normal scheduling)")
      ->check(CLI::Range(0, 99));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "linkem: error: %s (see --help)\n", e.what());
    return 2;
  }
  for (const Knob& knob : knobs) {
    // CLI::Range lets NaN through (every comparison with it is false).
    if (!std::isfinite(knob.both) || !std::isfinite(knob.a2b) || !std::isfinite(knob.b2a)) {
      std::fprintf(stderr, "linkem: error: delay, jitter, loss and rate must be finite numbers\n");
      return 2;
    }
    apply_knob(knob, o);
  }
  for (DirectionConfig* dir : {&o.a2b, &o.b2a}) {
    dir->queue_packets = queue_packets;
    dir->max_held_packets = kMaxHeldBytes / (static_cast<std::size_t>(o.mtu) + kSlack);
    dir->reorder = reorder;
  }
  return std::nullopt;
}

// The checks CLI11 cannot express; returns an error message, empty when all is well.
std::string check_addresses(const Options& o, Ipv4Cidr& addr_a, Ipv4Cidr& addr_b) {
  const auto a = parse_ipv4_cidr(o.addr_a);
  const auto b = parse_ipv4_cidr(o.addr_b);
  if (!a || !b) {
    return std::string(a ? "--addr-b '" + o.addr_b : "--addr-a '" + o.addr_a) +
           "': expected an IPv4 address with prefix, e.g. 10.201.0.1/24";
  }
  if (a->prefix != b->prefix || a->network() != b->network() || a->address == b->address ||
      a->prefix > 30) {
    return "--addr-a and --addr-b must be two addresses in one subnet of prefix /30 or shorter";
  }
  if (o.ns_a == o.ns_b) return "--ns-a and --ns-b must name two different namespaces";
  addr_a = *a;
  addr_b = *b;
  return {};
}

int run(int argc, char** argv) {
  Options o;
  if (const auto code = parse_options(argc, argv, o)) return *code;
  Ipv4Cidr addr_a, addr_b;
  if (const std::string error = check_addresses(o, addr_a, addr_b); !error.empty()) {
    std::fprintf(stderr, "linkem: error: %s\n", error.c_str());
    return 2;
  }
  if (::geteuid() != 0)
    die("must run as root (it enters network namespaces and creates TUN devices)");

  // Signals arrive through the event loop, also while setting up: the devices go away cleanly.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, sig);
  if (::sigprocmask(SIG_BLOCK, &signals, nullptr) != 0) die_errno("sigprocmask");
  Fd signal_fd(::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signal_fd.valid()) die_errno("signalfd");

  // Timer expiries as exact as the kernel can make them (the default slack is 50 us).
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  if (o.realtime > 0) {
    sched_param param{};
    param.sched_priority = o.realtime;
    if (::sched_setscheduler(0, SCHED_FIFO, &param) != 0) die_errno("sched_setscheduler");
  }

  Fd tun_a, tun_b;
  try {
    tun_a = open_tun_in_netns({o.ns_a, o.device, addr_a, o.mtu});
    tun_b = open_tun_in_netns({o.ns_b, o.device, addr_b, o.mtu});
  } catch (const SetupError& e) {
    die(e.what());
  }
  Emulator emulator(std::move(tun_a), std::move(tun_b), o);
  std::fprintf(stderr, "linkem: %s <-> %s on %s; a2b: %s; b2a: %s\n", o.ns_a.c_str(),
               o.ns_b.c_str(), o.device.c_str(), describe(o.a2b).c_str(), describe(o.b2a).c_str());
  std::printf("linkem ready\n");
  std::fflush(stdout);

  emulator.run(signal_fd.get());
  std::fprintf(stderr, "linkem: stopped; timer lead %.1f us\n", emulator.timer_lead_us());
  if (!o.stats_json.empty()) write_stats(o.stats_json, emulator);
  return 0;
}

}  // namespace
}  // namespace pqot::bench::linkem

int main(int argc, char** argv) {
  return pqot::bench::linkem::run(argc, argv);
}
