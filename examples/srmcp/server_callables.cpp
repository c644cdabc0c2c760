// Example: an SRMCP server whose nodes are backed by the application's own Read and Write
// callables, as the SRMCP node model intends (a node can sit on any hardware or protocol).
//
//   example_server_callables CA CERT KEY [PORT]
//
// Prints "listening on PORT" and serves until SIGINT/SIGTERM.
#include <asio.hpp>
#include <atomic>
#include <cmath>
#include <iostream>
#include <mutex>

#include "pqot/srmcp/server.hpp"

using namespace pqot::srmcp;

// Stand-in for a device driver: a pump with a speed set-point and a run-hours counter.
struct Pump {
  std::mutex mutex;
  double speed_rpm = 1200.0;
  std::atomic<long> reads{0};
};

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: " << argv[0] << " CA CERT KEY [PORT]\n";
    return 2;
  }
  auto pump = std::make_shared<Pump>();
  auto nodes = std::make_shared<NodeStore>();

  NodeSpec folder;
  folder.id = "pump";
  folder.name = "Pump";
  nodes->add(folder);

  NodeSpec speed;
  speed.id = "pump.speed";
  speed.name = "Speed set-point";
  speed.type = ValueType::float64;
  speed.parents = {"pump"};
  speed.unit = "rpm";
  speed.writers = {"*"};
  speed.read = [pump] {
    std::lock_guard lock(pump->mutex);
    ++pump->reads;
    return ReadResult{Status::ok, pump->speed_rpm};
  };
  speed.write = [pump](const Json& v) {
    const double rpm = v.get<double>();
    if (rpm < 0 || rpm > 3000) return WriteResult{Status::backend_error, Json()};  // the device refuses
    std::lock_guard lock(pump->mutex);
    pump->speed_rpm = rpm;
    return WriteResult{Status::ok, pump->speed_rpm};  // echo what the device now holds
  };
  nodes->add(speed);

  NodeSpec reads;
  reads.id = "pump.reads";
  reads.name = "Reads served";
  reads.type = ValueType::int64;
  reads.parents = {"pump"};
  reads.read = [pump] { return ReadResult{Status::ok, pump->reads.load()}; };
  nodes->add(reads);

  ServerConfig config;
  config.ca_file = argv[1];
  config.cert_file = argv[2];
  config.key_file = argv[3];
  config.listen_port = argc > 4 ? static_cast<std::uint16_t>(std::stoi(argv[4])) : 0;

  asio::io_context io;
  Server server(io, config, nodes);
  server.start();
  std::cout << "listening on " << server.port() << std::endl;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code&, int) {
    server.stop();
    io.stop();
  });
  io.run();
  return 0;
}
