// Running part of a benchmark in another network namespace: `srup bench-mqtt --device-netns`
// puts the device's MQTT client behind an emulated link (bench/srup.mjs joins the namespaces with
// bench/linkem) while the C2's client and the broker stay where the program runs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace pqot::srup_tool {

/// Runs `fn` on a new thread that has first entered the network namespace `name`
/// (/var/run/netns/NAME, as `ip netns add` makes it), and waits for it. Sockets `fn` opens, and
/// threads it starts (an MQTT client's network thread), stay in that namespace; the calling
/// thread's namespace is unchanged. Throws std::runtime_error if the namespace cannot be entered
/// (missing, or not root), and rethrows what `fn` threw.
void run_in_netns(const std::string& name, const std::function<void()>& fn);

/// IP bytes received and sent by every interface of a namespace but `lo` (its /proc/net/dev as a
/// thread inside it sees it): what crossed the emulated link, from that side.
struct LinkBytes {
  std::uint64_t received = 0;
  std::uint64_t sent = 0;
};
LinkBytes netns_link_bytes(const std::string& name);

}  // namespace pqot::srup_tool
