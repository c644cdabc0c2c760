// 100 devices on one C2 and one broker (issue 13): 100 srup-device processes, enrolled through
// `srup c2 enrol` as an operator would (a few at a time: the control socket serves up to 8 clients),
// each started once enrolled, joined, and each sent an Action; every command is answered, and each
// device ran its own.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "../support/srup_system.hpp"

namespace pqot::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint64_t kScaleDevices = 100;
constexpr std::uint64_t kScaleFirstId = 0x100;
constexpr unsigned kScaleWorkers = 4;  // concurrent operator calls, below the socket's 8 clients

// Runs job(i) for i in [0, n) on kScaleWorkers threads.
void scale_in_parallel(std::uint64_t n, const std::function<void(std::uint64_t)>& job) {
  std::atomic<std::uint64_t> next{0};
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < kScaleWorkers; ++w) {
    workers.emplace_back([&] {
      for (std::uint64_t i = next++; i < n; i = next++) job(i);
    });
  }
  for (auto& t : workers) t.join();
}

// The resident set of process `pid` in KiB (0 if it cannot be read), for the report line.
std::uint64_t scale_rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6));
  }
  return 0;
}

double scale_seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

json scale_list(SrupSystem& sys, std::vector<std::string> args) {
  args.insert(args.begin(), "--json");
  const CliResult r = sys.c2_cli(std::move(args));
  if (r.exit_code != 0) return json::object();
  return json::parse(r.out, nullptr, false);
}

TEST(SrupScale, AHundredDevicesOnOneC2AnswerEveryCommand) {
  SrupSystem sys;
  // Phase times and memory are printed for the record, never asserted.
  auto phase = std::chrono::steady_clock::now();
  // Each device starts as soon as its bundle is written, so that joining overlaps enrolment.
  std::vector<std::unique_ptr<ChildProcess>> devices(kScaleDevices);
  scale_in_parallel(kScaleDevices, [&](std::uint64_t i) {
    const fs::path config = sys.make_device(kScaleFirstId + i, "simple");
    devices[i] = std::make_unique<ChildProcess>(bin("srup-device"), std::vector<std::string>{"--config", config.string()}, false);
  });
  const double enrol_s = scale_seconds_since(phase);
  phase = std::chrono::steady_clock::now();
  std::size_t joined = 0;
  ASSERT_TRUE(eventually([&] {
    joined = scale_list(sys, {"devices", "--state", "joined"}).value("devices", json::array()).size();
    return joined == kScaleDevices;
  }, kPatience * 12)) << joined << " joined\n" << sys.c2().out();

  const double join_s = scale_seconds_since(phase);
  phase = std::chrono::steady_clock::now();
  std::uint64_t rss_kib = 0;
  for (const auto& d : devices) rss_kib += scale_rss_kib(d->pid());

  // One Action per device, its argument naming the device; sent without waiting, answered later.
  std::vector<std::string> tokens(kScaleDevices);
  scale_in_parallel(kScaleDevices, [&](std::uint64_t i) {
    const std::string id = srup::id_text(kScaleFirstId + i);
    const CliResult r = sys.c2_cli({"--json", "action", id, "7", "--arg", "scale-" + id});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    tokens[i] = json::parse(r.out).value("token", "");
  });

  std::map<std::string, json> answered;
  ASSERT_TRUE(eventually([&] {
    for (const json& c : scale_list(sys, {"commands", "--state", "answered", "--limit", "1000"}).value("commands", json::array())) {
      if (c.value("type", "") == "action") answered[c.value("token", "")] = c;
    }
    return answered.size() >= kScaleDevices;
  }, kPatience * 12)) << answered.size() << " answered\n" << sys.c2().out();
  std::cout << "[ scale    ] enrolment and start " << enrol_s << " s, the rest of the joins " << join_s << " s, 100 Actions answered "
            << scale_seconds_since(phase) << " s; srup-device RSS " << rss_kib / 1024 << " MiB in all, srup-c2 "
            << scale_rss_kib(sys.c2().pid()) / 1024 << " MiB\n";
  for (std::uint64_t i = 0; i < kScaleDevices; ++i) {
    const std::string id = srup::id_text(kScaleFirstId + i);
    ASSERT_EQ(answered.count(tokens[i]), 1u) << id;
    const json& c = answered[tokens[i]];
    EXPECT_EQ(c.value("device", ""), id);
    EXPECT_EQ(c["answer"].value("status_name", ""), "ACTION_SUCCESS") << c.dump();
    EXPECT_EQ(count_of(devices[i]->out(), "action log: scale-" + id), 1u) << id << "\n" << devices[i]->out();
  }
  const json status = scale_list(sys, {"status"});
  EXPECT_EQ(status.value("outbox_pending", -1), 0) << status.dump();
  EXPECT_EQ(sys.c2().stop(), 0) << sys.c2().log();
}

}  // namespace
}  // namespace pqot::test
