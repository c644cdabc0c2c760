// Modbus TCP gateway backend (docs/srmcpd-modbus.md): nodes bound to points of devices, one
// Device (device.hpp) per [[device]].
#include "pqot/srmcp/gateway.hpp"

#include <asio.hpp>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "device.hpp"

namespace pqot::srmcp::gateway {

Gateway::Gateway(std::vector<ModbusDeviceConfig> devices) {
  for (auto& d : devices) devices_.push_back(std::make_shared<Device>(std::move(d)));
}

Gateway::~Gateway() { stop(); }

void Gateway::bind(NodeSpec& spec, const ModbusBinding& binding) {
  const auto it = std::find_if(devices_.begin(), devices_.end(),
                               [&](const auto& d) { return d->name() == binding.device; });
  if (it == devices_.end()) {
    throw std::invalid_argument("node '" + spec.id + "': unknown Modbus device '" + binding.device + "'");
  }
  std::shared_ptr<Device> dev = *it;
  auto p = std::make_shared<PointState>();
  p->point = binding.point;
  p->node_id = spec.id;
  p->poll = binding.poll;
  p->cache_age = binding.cache_age;
  p->next_poll = Clock::now();
  if (binding.poll.count() > 0) dev->add_polled(p);
  spec.read = nullptr;
  spec.read_async = [dev, p](ReadDone done) { dev->read(p, std::move(done)); };
  if (!spec.writers.empty()) {
    spec.write = nullptr;
    spec.write_async = [dev, p](const Json& v, WriteDone done) { dev->write(p, v, std::move(done)); };
  }
}

void Gateway::start(const std::vector<asio::io_context*>& contexts) {
  if (contexts.empty()) throw std::invalid_argument("Gateway::start: no io_context");
  for (std::size_t i = 0; i < devices_.size(); ++i) devices_[i]->start(*contexts[i % contexts.size()]);
}

void Gateway::stop() {
  for (auto& d : devices_) d->stop();
}

std::vector<DeviceStats> Gateway::stats() const {
  std::vector<DeviceStats> out;
  for (const auto& d : devices_) out.push_back(d->stats());
  return out;
}

std::size_t Gateway::device_count() const { return devices_.size(); }

std::shared_ptr<NodeStore> build_node_store(const LoadedConfig& config, Gateway& gateway) {
  std::map<std::string, const ModbusBinding*> bindings;
  for (const auto& b : config.modbus) bindings.emplace(b.node_id, &b);
  auto store = std::make_shared<NodeStore>();
  for (NodeSpec spec : config.nodes) {
    if (const auto it = bindings.find(spec.id); it != bindings.end()) gateway.bind(spec, *it->second);
    store->add(std::move(spec));
  }
  return store;
}

}  // namespace pqot::srmcp::gateway
