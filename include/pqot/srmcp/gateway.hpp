// The Modbus TCP gateway backend of srmcpd (docs/srmcpd-modbus.md): nodes whose Read and Write
// go to legacy Modbus devices through a Modbus TCP client of its own on Asio (library
// pqot_srmcp_gateway; the point layouts, conversions and PDUs are pqot::modbus, src/srmcp/gateway/
// has the device and its connection).
//
// Each device has one connection, confined to one strand of an event loop: srmcpd runs them on
// the server's own io_contexts, so an on-demand read costs no thread hand-off. Nothing waits on a
// device: a down or slow one affects only its own nodes. Requests queued together are batched
// (contiguous addresses in one Modbus request); nodes may be polled, feeding their reads and
// subscriptions from the last poll, or read on demand with an optional cache age. Failures become
// per-node statuses: BACKEND_ERROR (unreachable, connection lost, malformed answer), TIMEOUT
// (too slow), DEVICE_EXCEPTION (a Modbus exception code). A failed device is retried with
// exponential backoff; while it waits, its requests fail at once with the last failure's status.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pqot/srmcp/config.hpp"
#include "pqot/metrics/histogram.hpp"
#include "pqot/srmcp/node.hpp"

namespace asio {
class io_context;
}

namespace pqot::srmcp::gateway {

struct DeviceStats {
  std::string name;
  std::string address;  ///< "host:port unit N"
  bool connected = false;
  std::uint64_t transactions = 0;       ///< Modbus requests sent
  std::uint64_t comm_errors = 0;        ///< connection refused or lost, malformed answers
  std::uint64_t timeouts = 0;
  std::uint64_t exceptions = 0;         ///< Modbus exception answers
  std::uint64_t connects = 0;           ///< successful connections
  std::uint64_t connect_failures = 0;
  std::uint64_t failed_fast = 0;        ///< requests answered without I/O during a backoff
  std::uint64_t expired = 0;            ///< requests that waited past the deadline
  std::uint64_t rejected = 0;           ///< requests refused because the queue was full (BUSY)
  std::uint64_t queued = 0;             ///< requests waiting now
  metrics::LatencyHistogram::Snapshot latency;  ///< of each Modbus request
};

/// Most requests waiting for one device; more are answered BUSY at once.
inline constexpr std::size_t kMaxQueuedPerDevice = 4096;

class Device;  // one device's queue and connection (src/srmcp/gateway/device.hpp)

class Gateway {
 public:
  /// Devices as configured; nothing connects before start().
  explicit Gateway(std::vector<ModbusDeviceConfig> devices);
  ~Gateway();  ///< stop()
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  /// Gives `spec` (the binding's node) the Read and Write callables of its Modbus point. Call
  /// before start(). Throws std::invalid_argument for an unknown device.
  void bind(NodeSpec& spec, const ModbusBinding& binding);
  /// Runs the devices on `contexts` (each device on a strand of one of them, round robin); each
  /// connects at once and keeps its polls going. The contexts must outlive the gateway and every
  /// node store bound to it, and keep running until stop().
  void start(const std::vector<asio::io_context*>& contexts);
  /// Queued and later requests are answered SHUTTING_DOWN; each device closes its connection on
  /// its strand. Idempotent, any thread.
  void stop();
  std::vector<DeviceStats> stats() const;
  std::size_t device_count() const;

 private:
  std::vector<std::shared_ptr<Device>> devices_;
};

/// The node store of a configuration: memory, signal and Modbus nodes, the last bound to
/// `gateway`'s devices. Throws std::invalid_argument as NodeStore::add does.
std::shared_ptr<NodeStore> build_node_store(const LoadedConfig& config, Gateway& gateway);

}  // namespace pqot::srmcp::gateway
