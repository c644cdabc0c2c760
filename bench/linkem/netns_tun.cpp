#include "netns_tun.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>

namespace pqot::bench::linkem {
namespace {

[[noreturn]] void fail(const std::string& what, int err) {
  throw SetupError(what + ": " + std::strerror(err));
}

// Back to the namespace we came from when the scope ends, whatever happened inside.
class NetnsGuard {
 public:
  explicit NetnsGuard(const std::string& name) {
    const std::string path = "/var/run/netns/" + name;
    Fd target(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!target.valid()) {
      if (errno == ENOENT)
        throw SetupError("network namespace '" + name + "' not found (" + path + ")");
      fail("cannot open " + path, errno);
    }
    home_ = Fd(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!home_.valid()) fail("cannot open /proc/self/ns/net", errno);
    if (::setns(target.get(), CLONE_NEWNET) != 0)
      fail("cannot enter network namespace '" + name + "'", errno);
  }
  NetnsGuard(const NetnsGuard&) = delete;
  NetnsGuard& operator=(const NetnsGuard&) = delete;
  ~NetnsGuard() {
    // Staying in the wrong namespace would silently break everything after; better stop here.
    if (::setns(home_.get(), CLONE_NEWNET) != 0) std::terminate();
  }

 private:
  Fd home_;
};

ifreq make_ifreq(const std::string& device) {
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, device.data(), device.size());  // length checked by the caller
  return ifr;
}

void set_up(int sock, const std::string& device) {
  ifreq ifr = make_ifreq(device);
  if (::ioctl(sock, SIOCGIFFLAGS, &ifr) != 0) fail("SIOCGIFFLAGS " + device, errno);
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  if (::ioctl(sock, SIOCSIFFLAGS, &ifr) != 0) fail("cannot bring " + device + " up", errno);
}

void set_ipv4(int sock, const std::string& device, unsigned long request, std::uint32_t value,
              const char* what) {
  ifreq ifr = make_ifreq(device);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(value);
  static_assert(sizeof sin <= sizeof ifr.ifr_addr);
  std::memcpy(&ifr.ifr_addr, &sin, sizeof sin);
  if (::ioctl(sock, request, &ifr) != 0)
    fail(std::string("cannot set ") + what + " of " + device, errno);
}

// Best effort: without IPv6 in the kernel the file does not exist, and there is nothing to stop.
void disable_ipv6(const std::string& device) {
  const std::string path = "/proc/sys/net/ipv6/conf/" + device + "/disable_ipv6";
  Fd f(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!f.valid()) return;
  if (::write(f.get(), "1", 1) != 1) fail("cannot write " + path, errno);
}

}  // namespace

std::optional<Ipv4Cidr> parse_ipv4_cidr(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::string host = text.substr(0, slash);
  in_addr addr{};
  if (::inet_pton(AF_INET, host.c_str(), &addr) != 1) return std::nullopt;
  int prefix = -1;
  const char* first = text.data() + slash + 1;
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, prefix);
  if (ec != std::errc{} || end != last || first == last || prefix < 1 || prefix > 32) {
    return std::nullopt;
  }
  return Ipv4Cidr{ntohl(addr.s_addr), prefix};
}

Fd open_tun_in_netns(const TunSpec& spec) {
  if (spec.device.empty() || spec.device.size() >= IFNAMSIZ) {
    throw SetupError("device name '" + spec.device + "' must be 1.." +
                     std::to_string(IFNAMSIZ - 1) + " characters");
  }
  NetnsGuard in_ns(spec.netns);

  // The device is created in the namespace of the opener of /dev/net/tun.
  Fd tun(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!tun.valid()) fail("cannot open /dev/net/tun", errno);
  ifreq ifr = make_ifreq(spec.device);
  // ifr_flags is a short; IFF_TUN_EXCL is its top bit.
  ifr.ifr_flags =
      static_cast<short>(static_cast<unsigned short>(IFF_TUN | IFF_NO_PI | IFF_TUN_EXCL));
  if (::ioctl(tun.get(), TUNSETIFF, &ifr) != 0) {
    fail("cannot create TUN device " + spec.device + " in namespace '" + spec.netns + "'", errno);
  }

  Fd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) fail("cannot open a configuration socket", errno);
  disable_ipv6(spec.device);
  ifreq mtu = make_ifreq(spec.device);
  mtu.ifr_mtu = spec.mtu;
  if (::ioctl(sock.get(), SIOCSIFMTU, &mtu) != 0) fail("cannot set MTU of " + spec.device, errno);
  set_ipv4(sock.get(), spec.device, SIOCSIFADDR, spec.address.address, "address");
  set_ipv4(sock.get(), spec.device, SIOCSIFNETMASK, spec.address.netmask(), "netmask");
  set_up(sock.get(), spec.device);
  set_up(sock.get(), "lo");
  return tun;
}

}  // namespace pqot::bench::linkem
