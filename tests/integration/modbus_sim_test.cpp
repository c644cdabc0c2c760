// pqot-modbus-sim as the gateway's tests use it: the real binary on loopback, libmodbus as the
// client. The register map, the write protection, every fault kind, SIGUSR1, the limits on
// misbehaving clients, and the command line (docs/modbus-sim.md).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <modbus.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/child_process.hpp"
#include "../support/temp_dir.hpp"
#include "../support/programs.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;


using pqot::test::count_of;
using pqot::test::eventually;
using pqot::test::kSim;
using pqot::test::slurp;

/// One running pqot-modbus-sim (tests/support/child_process.hpp).
class Sim : public pqot::test::ChildProcess {
 public:
  explicit Sim(std::vector<std::string> args, bool listen_any = true)
      : ChildProcess(kSim, std::move(args), listen_any) {}
};

/// The result of one libmodbus call: rc as returned, errno right after it.
struct Reply {
  int rc = 0;
  int err = 0;
  std::vector<std::uint16_t> regs;
  std::vector<std::uint8_t> bits;
  bool ok() const { return rc >= 0; }
  std::string error() const { return ok() ? "ok" : modbus_strerror(err); }
};

/// A libmodbus TCP client.
class Client {
 public:
  explicit Client(int port, std::chrono::milliseconds timeout = 5s)
      : ctx_(modbus_new_tcp("127.0.0.1", port)) {
    if (ctx_ == nullptr) throw std::runtime_error("modbus_new_tcp failed");
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timeout).count();
    modbus_set_response_timeout(ctx_, static_cast<std::uint32_t>(us / 1000000),
                                static_cast<std::uint32_t>(us % 1000000));
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() {
    modbus_close(ctx_);
    modbus_free(ctx_);
  }

  bool connect() { return modbus_connect(ctx_) == 0; }
  modbus_t* raw() { return ctx_; }
  void close() { modbus_close(ctx_); }

  Reply read_hr(int addr, int n) { return read_regs(addr, n, modbus_read_registers); }
  Reply read_ir(int addr, int n) { return read_regs(addr, n, modbus_read_input_registers); }
  Reply read_coils(int addr, int n) { return read_bits(addr, n, modbus_read_bits); }
  Reply read_di(int addr, int n) { return read_bits(addr, n, modbus_read_input_bits); }
  Reply write_hr(int addr, std::uint16_t value) {
    return result(modbus_write_register(ctx_, addr, value));
  }
  Reply write_hrs(int addr, const std::vector<std::uint16_t>& values) {
    return result(
        modbus_write_registers(ctx_, addr, static_cast<int>(values.size()), values.data()));
  }
  Reply write_coil(int addr, bool on) { return result(modbus_write_bit(ctx_, addr, on ? 1 : 0)); }

 private:
  using ReadRegs = int (*)(modbus_t*, int, int, std::uint16_t*);
  using ReadBits = int (*)(modbus_t*, int, int, std::uint8_t*);
  static Reply result(int rc) { return Reply{rc, errno, {}, {}}; }
  Reply read_regs(int addr, int n, ReadRegs fn) {
    std::vector<std::uint16_t> regs(static_cast<std::size_t>(n));
    Reply r = result(fn(ctx_, addr, n, regs.data()));
    if (r.ok()) r.regs = std::move(regs);
    return r;
  }
  Reply read_bits(int addr, int n, ReadBits fn) {
    std::vector<std::uint8_t> bits(static_cast<std::size_t>(n));
    Reply r = result(fn(ctx_, addr, n, bits.data()));
    if (r.ok()) r.bits = std::move(bits);
    return r;
  }

  modbus_t* ctx_;
};

// Decoding as docs/modbus-sim.md specifies: high word first, high byte first.
std::uint32_t u32(const std::vector<std::uint16_t>& r, std::size_t i) {
  return (static_cast<std::uint32_t>(r.at(i)) << 16) | r.at(i + 1);
}
float f32(const std::vector<std::uint16_t>& r, std::size_t i) {
  return std::bit_cast<float>(u32(r, i));
}
double f64(const std::vector<std::uint16_t>& r, std::size_t i) {
  return std::bit_cast<double>((static_cast<std::uint64_t>(u32(r, i)) << 32) | u32(r, i + 2));
}
std::int16_t i16(std::uint16_t v) {
  return static_cast<std::int16_t>(v);
}

/// A plain TCP connection for bytes libmodbus would never send.
class RawSocket {
 public:
  explicit RawSocket(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      throw std::runtime_error("raw connect failed");
    }
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  ~RawSocket() { ::close(fd_); }

  void send(const std::vector<std::uint8_t>& bytes) const {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  /// Exactly `n` bytes, or fewer if the server closed or `limit` passed.
  std::vector<std::uint8_t> receive(std::size_t n, std::chrono::milliseconds limit = 10s) const {
    std::vector<std::uint8_t> out;
    const auto deadline = Clock::now() + limit;
    while (out.size() < n && Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      std::uint8_t buf[512];
      const ssize_t got = ::recv(fd_, buf, std::min(sizeof buf, n - out.size()), 0);
      if (got <= 0) break;
      out.insert(out.end(), buf, buf + got);
    }
    return out;
  }
  /// Whether the server closes the connection within `limit` (end of stream or reset).
  bool closed_by_server(std::chrono::milliseconds limit = 10s) const {
    return eventually(
        [this] {
          pollfd p{fd_, POLLIN, 0};
          if (::poll(&p, 1, 0) <= 0) return false;
          std::uint8_t buf[512];
          const ssize_t got = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
          return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
        },
        limit);
  }

 private:
  int fd_;
};

/// FC03 request: MBAP (tid, protocol 0, length 6, unit 1) + function, address, count.
std::vector<std::uint8_t> read_hr_request(std::uint16_t tid, std::uint16_t addr, std::uint16_t n) {
  return {static_cast<std::uint8_t>(tid >> 8),
          static_cast<std::uint8_t>(tid),
          0,
          0,
          0,
          6,
          1,
          3,
          static_cast<std::uint8_t>(addr >> 8),
          static_cast<std::uint8_t>(addr),
          static_cast<std::uint8_t>(n >> 8),
          static_cast<std::uint8_t>(n)};
}

// ---- command line ------------------------------------------------------------------------------

TEST(ModbusSimCli, HelpDescribesOptionsRegisterMapFaultsAndExitCodes) {
  const auto r = pqot::test::run_process(kSim, {"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* needle :
       {"--listen", "--port-file", "--seed", "--max-clients", "--fault", "--fault-delay-ms",
        "--fault-exception", "--fault-start", "--log-level", "wrong-tid", "refuse", "SIGUSR1",
        "PQOT-SIM-PLC", "ILLEGAL DATA ADDRESS", "Exit codes", "docs/modbus-sim.md"}) {
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << " missing from --help:\n"
                                                     << r.out;
  }
}

TEST(ModbusSimCli, BadCommandLinesExitWith2AndAMessage) {
  const std::vector<std::vector<std::string>> bad = {
      {"--fault", "melt"},
      {"--listen", "127.0.0.1"},
      {"--listen", "127.0.0.1:65536"},
      {"--listen", "127.0.0.1:http"},
      {"--max-clients", "0"},
      {"--fault-exception", "0"},
      {"--fault-exception", "12"},
      {"--fault-start", "maybe"},
      {"--fault-delay-ms", "-1"},
      {"--log-level", "loud"},
      {"--seed", "x"},
      {"--no-such-option"},
      {"positional"},
  };
  for (const auto& args : bad) {
    const auto r = pqot::test::run_process(kSim, args);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << r.err;
    EXPECT_EQ(r.err.rfind("pqot-modbus-sim: error: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(ModbusSimCli, CannotListenExitsWith1) {
  Sim first({});
  Sim second({"--listen", "127.0.0.1:" + std::to_string(first.port())}, false);
  EXPECT_EQ(second.wait_exit(), 1) << second.log();
  EXPECT_NE(second.log().find("pqot-modbus-sim: error: cannot listen on 127.0.0.1:"),
            std::string::npos)
      << second.log();
  EXPECT_TRUE(second.out().empty()) << "nothing announced: " << second.out();

  pqot::test::TempDir dir("pqot-modbus-sim");
  const std::string unwritable = (dir.path() / "no-such-dir" / "port").string();
  Sim third({"--listen", "127.0.0.1:0", "--port-file", unwritable}, false);
  EXPECT_EQ(third.wait_exit(), 1) << third.log();
  EXPECT_NE(third.log().find("--port-file"), std::string::npos) << third.log();
  EXPECT_EQ(first.stop(), 0);
}

TEST(ModbusSimCli, SigtermAndSigintExitWith0) {
  for (const int sig : {SIGTERM, SIGINT}) {
    Sim sim({});
    Client c(sim.port());
    ASSERT_TRUE(c.connect());  // with a client connected
    ASSERT_TRUE(c.read_hr(0, 1).ok());
    EXPECT_EQ(sim.stop(sig), 0) << sim.log();
    EXPECT_NE(sim.log().find("shutting down"), std::string::npos) << sim.log();
  }
}

// ---- register map ------------------------------------------------------------------------------

TEST(ModbusSim, AnnouncesItsPortOnStdoutAndInThePortFile) {
  Sim sim({"--seed", "7"});
  EXPECT_EQ(sim.out(),
            "pqot-modbus-sim listening on 127.0.0.1:" + std::to_string(sim.port()) + "\n");
  EXPECT_NE(sim.log().find("noise seed 7"), std::string::npos) << sim.log();
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, HoldingRegistersHoldTheDocumentedValues) {
  Sim sim({});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  const auto r = c.read_hr(0, 28);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(i16(r.regs[0]), 1800) << "oven set-point 180.0 degC";
  EXPECT_EQ(r.regs[1], 250) << "conveyor speed mm/s";
  EXPECT_EQ(r.regs[2], 2) << "mode auto";
  for (int a = 3; a < 10; ++a) EXPECT_EQ(r.regs[static_cast<std::size_t>(a)], 0) << a;
  const std::uint32_t batch = u32(r.regs, 10);
  EXPECT_LT(batch, 3600u) << "seconds since start";
  std::string name;
  for (int a = 20; a < 28; ++a) {
    name += static_cast<char>(r.regs[static_cast<std::size_t>(a)] >> 8);
    name += static_cast<char>(r.regs[static_cast<std::size_t>(a)] & 0xFF);
  }
  EXPECT_EQ(name, std::string("PQOT-SIM-PLC\0\0\0\0", 16));

  const auto scratch = c.read_hr(100, 100);
  ASSERT_TRUE(scratch.ok()) << scratch.error();
  EXPECT_EQ(scratch.regs, std::vector<std::uint16_t>(100, 0));

  // The batch counter counts seconds: it moves on (and never back) while the device runs.
  std::uint32_t later = batch;
  EXPECT_TRUE(eventually([&] {
    const auto again = c.read_hr(10, 2);
    if (!again.ok()) return false;
    later = u32(again.regs, 0);
    return later > batch;
  }));
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, InputRegistersHoldPlausibleLiveValues) {
  Sim sim({});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  const auto p = c.read_ir(0, 5);
  ASSERT_TRUE(p.ok()) << p.error();
  const float oven = f32(p.regs, 0);
  EXPECT_GE(oven, 19.9f) << "starts at 20 degC and heats toward 180";
  EXPECT_LT(oven, 180.1f);
  EXPECT_LE(p.regs[2], 999) << "ramp";
  EXPECT_GE(i16(p.regs[3]), -1000) << "sine";
  EXPECT_LE(i16(p.regs[3]), 1000) << "sine";
  EXPECT_GE(i16(p.regs[4]), 247) << "pressure 2.50 bar +- 0.03";
  EXPECT_LE(i16(p.regs[4]), 253) << "pressure 2.50 bar +- 0.03";

  const auto m = c.read_ir(100, 26);
  ASSERT_TRUE(m.ok()) << m.error();
  double total = 0;
  for (std::size_t ph = 0; ph < 3; ++ph) {
    const float v = f32(m.regs, 2 * ph);
    const float a = f32(m.regs, 6 + 2 * ph);
    const float w = f32(m.regs, 12 + 2 * ph);
    EXPECT_NEAR(v, 230.0, 2.25) << "voltage L" << ph + 1;
    EXPECT_NEAR(a, 10.0, 3.1) << "current L" << ph + 1;
    EXPECT_NEAR(w, v * a * 0.95, 0.05) << "active power L" << ph + 1;
    total += w;
  }
  EXPECT_NEAR(f32(m.regs, 18), total, 0.1) << "total active power";
  EXPECT_NEAR(f32(m.regs, 20), 50.0, 0.0201) << "frequency";
  const double energy = f64(m.regs, 22);
  EXPECT_GE(energy, 12345.0);
  EXPECT_LT(energy, 12346.0);

  // The meter integrates power: the energy grows from one read to the next.
  EXPECT_TRUE(eventually([&] {
    const auto again = c.read_ir(122, 4);
    return again.ok() && f64(again.regs, 0) > energy;
  }));

  // Beyond the map: ILLEGAL DATA ADDRESS, from every table.
  for (const auto& r :
       {c.read_ir(200, 1), c.read_ir(199, 2), c.read_hr(200, 1), c.read_hr(150, 51),
        c.read_coils(64, 1), c.read_di(16, 1), c.write_hr(200, 1), c.write_coil(64, true)}) {
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.err, EMBXILADD) << r.error();
  }
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, NoiseIsReproducibleWithASeed) {
  // The noise sequence depends only on the seed, the time only moves the sines: two devices with
  // the same seed report the same pressure (pure noise around 2.50 bar) for their first requests.
  Sim a({"--seed", "42"});
  Sim b({"--seed", "42"});
  Client ca(a.port());
  Client cb(b.port());
  ASSERT_TRUE(ca.connect());
  ASSERT_TRUE(cb.connect());
  for (int i = 0; i < 5; ++i) {
    const auto ra = ca.read_ir(4, 1);
    const auto rb = cb.read_ir(4, 1);
    ASSERT_TRUE(ra.ok() && rb.ok());
    EXPECT_EQ(ra.regs, rb.regs) << "request " << i;
  }
  EXPECT_EQ(a.stop(), 0);
  EXPECT_EQ(b.stop(), 0);
}

TEST(ModbusSim, CoilsAndDiscreteInputs) {
  Sim sim({});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  auto coils = c.read_coils(0, 64);
  ASSERT_TRUE(coils.ok()) << coils.error();
  EXPECT_EQ(coils.bits[0], 1) << "conveyor run";
  EXPECT_EQ(coils.bits[1], 0) << "alarm reset";
  auto di = c.read_di(0, 16);
  ASSERT_TRUE(di.ok()) << di.error();
  EXPECT_EQ(di.bits[0], 1) << "conveyor running mirrors coil 0";
  EXPECT_EQ(di.bits[2], 0) << "no over-temperature alarm";

  ASSERT_TRUE(c.write_coil(0, false).ok());
  di = c.read_di(0, 1);
  ASSERT_TRUE(di.ok());
  EXPECT_EQ(di.bits[0], 0) << "conveyor stopped";
  ASSERT_TRUE(c.write_coil(63, true).ok());
  coils = c.read_coils(62, 2);
  ASSERT_TRUE(coils.ok());
  EXPECT_EQ(coils.bits, (std::vector<std::uint8_t>{0, 1})) << "scratch coils";

  // DI 1 blinks at 1 Hz: both states show up.
  bool seen[2] = {false, false};
  EXPECT_TRUE(eventually([&] {
    const auto blink = c.read_di(1, 1);
    if (blink.ok()) seen[blink.bits[0] != 0] = true;
    return seen[0] && seen[1];
  }));
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, OverTemperatureAlarmLatchesUntilReset) {
  Sim sim({});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  // A set-point of -100.0 degC: the oven (about 20 degC) is more than 10 degC above it.
  ASSERT_TRUE(c.write_hr(0, static_cast<std::uint16_t>(-1000)).ok());
  auto di = c.read_di(2, 1);
  ASSERT_TRUE(di.ok());
  EXPECT_EQ(di.bits[0], 1) << "alarm latched";
  // Back to 180.0 degC: the condition is gone, the latch holds.
  ASSERT_TRUE(c.write_hr(0, 1800).ok());
  di = c.read_di(2, 1);
  ASSERT_TRUE(di.ok());
  EXPECT_EQ(di.bits[0], 1) << "alarm still latched";
  // Coil 1 resets it and reads back 0.
  ASSERT_TRUE(c.write_coil(1, true).ok());
  const auto coil = c.read_coils(1, 1);
  ASSERT_TRUE(coil.ok());
  EXPECT_EQ(coil.bits[0], 0) << "alarm reset reads back 0";
  di = c.read_di(2, 1);
  ASSERT_TRUE(di.ok());
  EXPECT_EQ(di.bits[0], 0) << "alarm cleared";
  EXPECT_EQ(sim.stop(), 0);
}

// ---- writes ------------------------------------------------------------------------------------

TEST(ModbusSim, SetpointWritesReadBackAndAreHeld) {
  Sim sim({});
  {
    Client c(sim.port());
    ASSERT_TRUE(c.connect());
    auto w = c.write_hr(0, 2000);  // FC06: 200.0 degC
    ASSERT_TRUE(w.ok()) << w.error();
    w = c.write_hrs(1, {300, 1});  // FC16: 300 mm/s, manual
    ASSERT_TRUE(w.ok()) << w.error();
    const auto r = c.read_hr(0, 3);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.regs, (std::vector<std::uint16_t>{2000, 300, 1}));

    std::vector<std::uint16_t> pattern(100);
    for (std::size_t i = 0; i < pattern.size(); ++i)
      pattern[i] = static_cast<std::uint16_t>(0xA500 + i);
    ASSERT_TRUE(c.write_hrs(100, pattern).ok());
    const auto s = c.read_hr(100, 100);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s.regs, pattern) << "scratch registers";
  }
  // Held: a new connection, later, sees the same values.
  Client other(sim.port());
  ASSERT_TRUE(other.connect());
  const auto r = other.read_hr(0, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.regs, (std::vector<std::uint16_t>{2000, 300, 1}));
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, WritesTouchingReadOnlyRegistersAreRejectedAndChangeNothing) {
  Sim sim({});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  const auto before = c.read_hr(0, 28);
  ASSERT_TRUE(before.ok());
  for (const int addr : {3, 10, 11, 20, 27, 99}) {
    const auto w = c.write_hr(addr, 0x1234);
    EXPECT_FALSE(w.ok()) << "FC06 to HR " << addr;
    EXPECT_EQ(w.err, EMBXILADD) << "HR " << addr << ": " << w.error();
  }
  // FC16 ranges that only partly overlap 3..99: rejected as a whole.
  for (const auto& [addr, n] : {std::pair{0, 4}, std::pair{98, 4}, std::pair{2, 98}}) {
    const auto w = c.write_hrs(addr, std::vector<std::uint16_t>(static_cast<std::size_t>(n), 7));
    EXPECT_FALSE(w.ok()) << "FC16 " << addr << "+" << n;
    EXPECT_EQ(w.err, EMBXILADD) << w.error();
  }
  // FC22 mask write and the write half of FC23 are write functions too.
  auto w = Reply{modbus_mask_write_register(c.raw(), 10, 0, 0xFFFF), errno, {}, {}};
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.err, EMBXILADD) << "FC22: " << w.error();
  const std::uint16_t value = 9;
  std::uint16_t read_back = 0;
  w = Reply{
      modbus_write_and_read_registers(c.raw(), 50, 1, &value, 0, 1, &read_back), errno, {}, {}};
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.err, EMBXILADD) << "FC23: " << w.error();
  w = Reply{
      modbus_write_and_read_registers(c.raw(), 150, 1, &value, 150, 1, &read_back), errno, {}, {}};
  ASSERT_TRUE(w.ok()) << "FC23 on scratch: " << w.error();
  EXPECT_EQ(read_back, 9);

  const auto after = c.read_hr(0, 28);
  ASSERT_TRUE(after.ok());
  for (std::size_t a = 0; a < 28; ++a) {
    if (a == 10 || a == 11) continue;  // the batch counter moves by itself
    EXPECT_EQ(after.regs[a], before.regs[a]) << "HR " << a;
  }
  const auto scratch = c.read_hr(98 + 2, 2);
  ASSERT_TRUE(scratch.ok());
  EXPECT_EQ(scratch.regs, (std::vector<std::uint16_t>{0, 0})) << "HR 100-101 untouched";
  EXPECT_EQ(sim.stop(), 0);
}

// ---- faults ------------------------------------------------------------------------------------

TEST(ModbusSim, FaultExceptionAnswersEveryRequestWithTheCode) {
  {
    Sim sim({"--fault", "exception", "--log-level", "debug"});
    Client c(sim.port());
    ASSERT_TRUE(c.connect());
    for (const auto& r :
         {c.read_hr(0, 1), c.read_ir(100, 2), c.read_coils(0, 1), c.write_hr(100, 1)}) {
      EXPECT_FALSE(r.ok());
      EXPECT_EQ(r.err, EMBXSFAIL) << r.error();
    }
    EXPECT_NE(sim.log().find("fault exception:"), std::string::npos) << "debug log:\n" << sim.log();
    EXPECT_EQ(sim.stop(), 0);
  }
  Sim busy({"--fault", "exception", "--fault-exception", "6"});
  Client c(busy.port());
  ASSERT_TRUE(c.connect());
  const auto r = c.read_hr(0, 1);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.err, EMBXSBUSY) << r.error();
  EXPECT_EQ(busy.stop(), 0);
}

TEST(ModbusSim, FaultDropClosesTheConnectionWithoutAnswer) {
  Sim sim({"--fault", "drop"});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  const auto r = c.read_hr(0, 1);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.err, ETIMEDOUT) << "closed, not silent: " << r.error();
  EXPECT_TRUE(sim.wait_for_log("disconnected: dropped (fault drop)")) << sim.log();
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, FaultSlowMakesAShortClientTimeOut) {
  Sim sim({"--fault", "slow", "--fault-delay-ms", "1500"});
  Client impatient(sim.port(), 200ms);
  ASSERT_TRUE(impatient.connect());
  const auto r = impatient.read_hr(0, 1);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.err, ETIMEDOUT) << r.error();
  // SIGTERM while the device waits: it stops without sending the late answer.
  EXPECT_EQ(sim.stop(), 0) << sim.log();

  Sim patient_sim({"--fault", "slow", "--fault-delay-ms", "100"});
  Client patient(patient_sim.port(), 10s);
  ASSERT_TRUE(patient.connect());
  const auto late = patient.read_hr(0, 1);
  ASSERT_TRUE(late.ok()) << "the answer comes, late: " << late.error();
  EXPECT_EQ(late.regs[0], 1800);
  EXPECT_EQ(patient_sim.stop(), 0);
}

TEST(ModbusSim, FaultWrongTidIsDetectedByTheClient) {
  Sim sim({"--fault", "wrong-tid"});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  for (const auto& r : {c.read_hr(0, 1), c.read_ir(0, 2), c.read_coils(0, 8), c.read_di(0, 3),
                        c.write_hr(100, 5)}) {
    EXPECT_FALSE(r.ok());
    EXPECT_EQ(r.err, EMBBADDATA) << r.error();
  }
  // On the wire: the same answer as without the fault, but with the transaction id + 1.
  RawSocket raw(sim.port());
  raw.send(read_hr_request(0x1234, 0, 1));
  const auto answer = raw.receive(11);
  ASSERT_EQ(answer.size(), 11u);
  EXPECT_EQ(answer, (std::vector<std::uint8_t>{0x12, 0x35, 0, 0, 0, 5, 1, 3, 2, 0x07, 0x08}));
  raw.send(read_hr_request(0xFFFF, 1, 1));
  const auto wrapped = raw.receive(11);
  ASSERT_EQ(wrapped.size(), 11u);
  EXPECT_EQ(wrapped[0], 0);
  EXPECT_EQ(wrapped[1], 0) << "0xFFFF + 1 wraps to 0";
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, FaultRefuseClosesTheListenerUntilToggledOff) {
  Sim sim({"--fault", "refuse"});
  {
    Client c(sim.port());
    EXPECT_FALSE(c.connect()) << "refused while the fault is on";
  }
  sim.signal(SIGUSR1);
  ASSERT_TRUE(sim.wait_for_log("SIGUSR1: fault refuse off")) << sim.log();
  Client c(sim.port());
  ASSERT_TRUE(c.connect()) << "listening again, on the same port";
  const auto r = c.read_hr(0, 1);
  ASSERT_TRUE(r.ok()) << r.error();

  sim.signal(SIGUSR1);
  ASSERT_TRUE(sim.wait_for_log("SIGUSR1: fault refuse on")) << sim.log();
  const auto cut = c.read_hr(0, 1);
  EXPECT_FALSE(cut.ok()) << "existing clients are closed";
  Client late(sim.port());
  EXPECT_FALSE(late.connect());
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, Sigusr1TogglesAFaultOffAndOn) {
  Sim sim({"--fault", "exception"});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  auto r = c.read_hr(0, 1);
  EXPECT_EQ(r.err, EMBXSFAIL) << r.error();

  sim.signal(SIGUSR1);
  ASSERT_TRUE(sim.wait_for_log("SIGUSR1: fault exception off")) << sim.log();
  r = c.read_hr(0, 1);
  ASSERT_TRUE(r.ok()) << "the device recovered: " << r.error();
  EXPECT_EQ(r.regs[0], 1800);

  sim.signal(SIGUSR1);
  ASSERT_TRUE(sim.wait_for_log("SIGUSR1: fault exception on")) << sim.log();
  r = c.read_hr(0, 1);
  EXPECT_EQ(r.err, EMBXSFAIL) << r.error();
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, FaultStartOffWaitsForSigusr1) {
  Sim sim({"--fault", "drop", "--fault-start", "off"});
  Client c(sim.port());
  ASSERT_TRUE(c.connect());
  ASSERT_TRUE(c.read_hr(0, 1).ok());
  sim.signal(SIGUSR1);
  ASSERT_TRUE(sim.wait_for_log("SIGUSR1: fault drop on")) << sim.log();
  EXPECT_FALSE(c.read_hr(0, 1).ok());
  EXPECT_EQ(sim.stop(), 0);
}

// ---- misbehaving clients -----------------------------------------------------------------------

TEST(ModbusSim, GarbageFromOneClientDoesNotStopAnother) {
  Sim sim({});
  Client good(sim.port());
  ASSERT_TRUE(good.connect());
  RawSocket http(sim.port());
  http.send({'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1', '\r', '\n'});
  RawSocket huge(sim.port());
  huge.send({0, 1, 0, 0, 0xFF, 0xFF, 1, 3});  // announces 65535 bytes
  RawSocket junk(sim.port());
  junk.send({0, 1, 0, 0, 0, 6, 1, 0x63, 0xDE, 0xAD, 0xBE, 0xEF});  // no such function
  EXPECT_TRUE(http.closed_by_server()) << "not Modbus: protocol id";
  EXPECT_TRUE(huge.closed_by_server()) << "length beyond 254";
  const auto illegal = junk.receive(9);
  ASSERT_EQ(illegal.size(), 9u);
  EXPECT_EQ(illegal[7], 0x63 + 0x80) << "an exception answer";
  EXPECT_EQ(illegal[8], MODBUS_EXCEPTION_ILLEGAL_FUNCTION);

  const auto r = good.read_hr(0, 3);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.regs[0], 1800);
  EXPECT_TRUE(sim.wait_for_log("bad request: protocol id")) << sim.log();
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, HalfARequestHoldsNobodyAndIsClosed) {
  Sim sim({});
  RawSocket half(sim.port());
  auto request = read_hr_request(1, 0, 1);
  request.resize(9);  // header + function + half the address
  half.send(request);
  Client good(sim.port());
  ASSERT_TRUE(good.connect());
  for (int i = 0; i < 3; ++i) {
    const auto r = good.read_hr(0, 1);
    ASSERT_TRUE(r.ok()) << r.error();
  }
  EXPECT_TRUE(half.closed_by_server()) << sim.log();
  EXPECT_NE(sim.log().find("incomplete request"), std::string::npos) << sim.log();
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, PipelinedAndSplitRequestsAreAnsweredInOrder) {
  Sim sim({});
  RawSocket raw(sim.port());
  auto both = read_hr_request(1, 0, 1);
  const auto second = read_hr_request(2, 1, 1);
  both.insert(both.end(), second.begin(), second.end());
  raw.send(both);  // two requests in one segment
  const auto answers = raw.receive(22);
  ASSERT_EQ(answers.size(), 22u);
  EXPECT_EQ(std::vector<std::uint8_t>(answers.begin(), answers.begin() + 11),
            (std::vector<std::uint8_t>{0, 1, 0, 0, 0, 5, 1, 3, 2, 0x07, 0x08}));
  EXPECT_EQ(std::vector<std::uint8_t>(answers.begin() + 11, answers.end()),
            (std::vector<std::uint8_t>{0, 2, 0, 0, 0, 5, 1, 3, 2, 0x00, 0xFA}));

  const auto third = read_hr_request(3, 2, 1);  // one request in two segments
  raw.send(std::vector<std::uint8_t>(third.begin(), third.begin() + 4));
  raw.send(std::vector<std::uint8_t>(third.begin() + 4, third.end()));
  EXPECT_EQ(raw.receive(11), (std::vector<std::uint8_t>{0, 3, 0, 0, 0, 5, 1, 3, 2, 0x00, 0x02}));
  EXPECT_EQ(sim.stop(), 0);
}

TEST(ModbusSim, MaxClientsIsEnforced) {
  Sim sim({"--max-clients", "2"});
  Client a(sim.port());
  Client b(sim.port());
  ASSERT_TRUE(a.connect());
  ASSERT_TRUE(b.connect());
  ASSERT_TRUE(a.read_hr(0, 1).ok());
  ASSERT_TRUE(b.read_hr(0, 1).ok());
  {
    Client third(sim.port());
    third.connect();  // the kernel completes the handshake; the server closes at once
    const auto r = third.read_hr(0, 1);
    EXPECT_FALSE(r.ok()) << "a third client is turned away";
  }
  EXPECT_TRUE(sim.wait_for_log("rejected: already 2 clients (--max-clients)")) << sim.log();
  ASSERT_TRUE(a.read_hr(0, 1).ok()) << "the first two are still served";

  a.close();
  ASSERT_TRUE(sim.wait_for_log("disconnected: closed by the peer")) << sim.log();
  Client next(sim.port());
  ASSERT_TRUE(next.connect());
  const auto r = next.read_hr(0, 1);
  EXPECT_TRUE(r.ok()) << "a slot is free again: " << r.error();
  EXPECT_EQ(sim.stop(), 0);
}

}  // namespace
