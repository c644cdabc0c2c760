// Driving mosquitto's dynamic-security plugin over MQTT (docs/mqtt.md, "Registration"): commands
// go to $CONTROL/dynamic-security/v1 through a Client, answers come back on .../response and are
// matched by correlationData. The admin's certificate identity must hold the ACLs of
// $CONTROL/dynamic-security/# (the initial dynsec.json of broker_config.hpp grants them).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pqot/mqtt/client.hpp"
#include "pqot/mqtt/dynsec_commands.hpp"

namespace pqot::mqtt {

struct DynsecResult {
  bool ok = false;
  std::string command;  ///< "createClient", ...
  /// When !ok: the plugin's error text ("Client already exists", "Client not found", ...), or
  /// ours: "timeout: no response within N ms", "too many outstanding dynsec commands (N)",
  /// "publish failed: not connected", "dynsec admin stopped".
  std::string error;
  nlohmann::json data;  ///< getClient, listClients: the response's "data"
};

struct DynsecAdminOptions {
  std::chrono::milliseconds timeout{10000};  ///< per command; 10 ms..10 min
  std::size_t max_outstanding = 64;          ///< commands sent and not answered; 1..10000
};

class DynsecAdmin {
 public:
  using Callback = std::function<void(const DynsecResult&)>;

  /// Subscribes `client` to the response topic (QoS 1; before or after client.start()). The
  /// client's message handler must pass every message to handle(). `client` outlives the admin.
  explicit DynsecAdmin(Client& client, DynsecAdminOptions options = {});
  /// Completes every outstanding command with "dynsec admin stopped".
  ~DynsecAdmin();
  DynsecAdmin(const DynsecAdmin&) = delete;
  DynsecAdmin& operator=(const DynsecAdmin&) = delete;

  /// True if `message` came on the response topic (it is consumed; entries matching our
  /// outstanding commands complete them, others, such as another admin's, are ignored).
  bool handle(const Message& message);

  /// Sends one command (a builder's result from dynsec_commands.hpp). `done` is called exactly
  /// once: on the client's network thread with the response, on the admin's timer thread at the
  /// timeout, or before submit() returns if the command cannot be sent (bound reached, publish
  /// refused). Until the broker has granted the response subscription in the current session
  /// (after a start or a reconnect), commands are held and sent once it has (libmosquitto sends its
  /// queued publishes before the client subscribes again, so a command sent then would be answered
  /// to nobody); a held command still times out. Throws DynsecError for a command without a
  /// "command" string.
  void submit(nlohmann::json command, Callback done);
  /// submit() and wait for the result. Never call it on the client's network thread (a handler).
  DynsecResult execute(nlohmann::json command);
  /// execute() one after the other, stopping after the first failure; the results so far.
  std::vector<DynsecResult> execute_all(const std::vector<nlohmann::json>& commands);

  std::size_t outstanding() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pqot::mqtt
