// libFuzzer target: the C2 registry's load-and-check path (docs/srup-c2.md, "Registry"). Arbitrary
// bytes as a stored row (IDs, suite, state and join mode text, times, certificate fields) and as
// the stored public identity: either a record consistent with its row, or one RegistryError.
//
// Input: id (8) | suite (1) | flags (1) | state length (1) + state | join mode length (1) + mode |
// enrolled_ms (8) | the rest: the identity bytes.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "records.hpp"

using namespace pqot::srup_c2;

namespace {

struct FuzzInput {
  const std::uint8_t* p;
  std::size_t n;
  bool take(std::size_t k, const std::uint8_t*& out) {
    if (n < k) return false;
    out = p;
    p += k;
    n -= k;
    return true;
  }
  bool u64(std::int64_t& v) {
    const std::uint8_t* b = nullptr;
    if (!take(8, b)) return false;
    std::uint64_t x = 0;
    for (int i = 0; i < 8; ++i) x = (x << 8) | b[i];
    v = static_cast<std::int64_t>(x);
    return true;
  }
  bool text(std::string& s) {
    const std::uint8_t* len = nullptr;
    const std::uint8_t* b = nullptr;
    if (!take(1, len) || !take(*len % 16, b)) return false;
    s.assign(reinterpret_cast<const char*>(b), *len % 16);
    return true;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxIdentityBytes + 64) return 0;
  FuzzInput in{data, size};
  DeviceRecord row;
  const std::uint8_t* suite = nullptr;
  const std::uint8_t* flags = nullptr;
  if (!in.u64(row.id) || !in.take(1, suite) || !in.take(1, flags) || !in.text(row.state) ||
      !in.text(row.join_mode) || !in.u64(row.enrolled_ms)) {
    return 0;
  }
  row.suite = *suite;
  row.username = (*flags & 1) ? "dev-0000000000000000" : device_username(static_cast<std::uint64_t>(row.id));
  row.type = (*flags & 2) ? "has space" : "meter";
  if (*flags & 4) row.observer = row.id ^ 1;
  if (*flags & 8) row.joined_ms = row.enrolled_ms ^ 1;
  if (*flags & 16) row.cert_serial = (*flags & 32) ? "00ff" : "XY";
  if (*flags & 64) row.cert_not_after_ms = row.enrolled_ms;
  row.identity.assign(in.p, in.p + in.n);

  try {
    const Device d = check_device_record(row, "fuzz");
    // Accepted: consistent with its row.
    if (d.id != static_cast<std::uint64_t>(row.id) || d.identity.id != d.id) std::abort();
    if (d.username != device_username(d.id) || static_cast<std::int64_t>(d.identity.keys.suite) != row.suite) std::abort();
    if ((d.join_mode == JoinMode::observed) != d.observer.has_value()) std::abort();
    if (d.identity_pem.size() != row.identity.size()) std::abort();
  } catch (const RegistryError&) {
  }

  MonitorRecord m;
  m.id = row.id;
  m.username = monitor_username(static_cast<std::uint64_t>(row.id));
  m.suite = row.suite;
  m.identity = row.identity;
  m.state = row.state;
  m.enrolled_ms = row.enrolled_ms;
  try {
    const Monitor mon = check_monitor_record(m, "fuzz");
    if (mon.identity.id != mon.id) std::abort();
  } catch (const RegistryError&) {
  }
  return 0;
}
