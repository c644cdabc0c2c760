// run_in_netns (bench_netns.hpp): setns(2) on a thread of its own. Entering a network namespace is
// allowed in a multi-threaded process and affects only the calling thread and what it creates.
#include "bench_netns.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace pqot::srup_tool {

void run_in_netns(const std::string& name, const std::function<void()>& fn) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    throw std::runtime_error("network namespace name '" + name + "' is not a plain name");
  }
  const std::string path = "/var/run/netns/" + name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error("network namespace '" + name + "': cannot open " + path + ": " +
                             std::strerror(errno));
  }
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      if (::setns(fd, CLONE_NEWNET) != 0) {
        throw std::runtime_error("network namespace '" + name + "': setns: " + std::strerror(errno));
      }
      fn();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  worker.join();
  ::close(fd);
  if (failure) std::rethrow_exception(failure);
}

LinkBytes netns_link_bytes(const std::string& name) {
  LinkBytes total;
  run_in_netns(name, [&] {
    // /proc/thread-self/net is this thread's namespace (/proc/self/net would be the process's).
    std::ifstream dev("/proc/thread-self/net/dev");
    if (!dev) throw std::runtime_error("network namespace '" + name + "': cannot read /proc/thread-self/net/dev");
    std::string line;
    while (std::getline(dev, line)) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;  // the two header lines
      std::string iface = line.substr(0, colon);
      iface.erase(0, iface.find_first_not_of(' '));
      if (iface == "lo") continue;
      // receive: bytes packets errs drop fifo frame compressed multicast; transmit: bytes ...
      std::istringstream fields(line.substr(colon + 1));
      std::uint64_t v[9] = {};
      for (auto& x : v) fields >> x;
      total.received += v[0];
      total.sent += v[8];
    }
  });
  return total;
}

}  // namespace pqot::srup_tool
