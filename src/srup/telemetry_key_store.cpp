// A reader's last Telemetry Key envelope per device, on disk (docs/srup-mqtt.md 4.6).
#include "pqot/srup/telemetry_key_store.hpp"

#include <sys/stat.h>

#include <stdexcept>
#include <system_error>

#include "pqot/common/files.hpp"
#include "pqot/srup/refusal.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup {

namespace fs = std::filesystem;

std::optional<std::uint64_t> telemetry_key_file_device(std::string_view name) {
  if (name.size() != 16 + kTelemetryKeyFileSuffix.size() ||
      name.substr(16) != kTelemetryKeyFileSuffix) {
    return std::nullopt;
  }
  std::uint64_t id = 0;
  for (const char c : name.substr(0, 16)) {
    std::uint64_t digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<std::uint64_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<std::uint64_t>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
    id = (id << 4) | digit;
  }
  if (id == 0 || id == ~std::uint64_t{0}) return std::nullopt;
  return id;
}

TelemetryKeyStore::TelemetryKeyStore(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (fs::create_directories(dir_, ec)) {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace, ec);
  }
  if (ec || !fs::is_directory(dir_)) {
    throw std::system_error(ec ? ec : std::make_error_code(std::errc::not_a_directory),
                            "telemetry key store '" + dir_.string() + "'");
  }
}

fs::path TelemetryKeyStore::file_of(std::uint64_t device) const {
  return dir_ / (id_text(device) + std::string(kTelemetryKeyFileSuffix));
}

void TelemetryKeyStore::save(std::uint64_t device, ByteView envelope) {
  if (envelope.size() > kMaxEnvelope) {
    throw std::length_error("SRUP-PQ: a Telemetry Key envelope over 65,535 bytes");
  }
  common::replace_file(file_of(device).string(),
                       std::string_view(reinterpret_cast<const char*>(envelope.data()), envelope.size()),
                       0600);
}

void TelemetryKeyStore::remove(std::uint64_t device) {
  std::error_code ec;
  fs::remove(file_of(device), ec);
}

KeyStoreRestore TelemetryKeyStore::restore(
    TelemetryReader& reader, const Identity& self, const PeerLookup& peers, std::uint64_t now_ms,
    const std::function<void(std::uint64_t, const std::string&)>& on_refused, UnknownDevices unknown) {
  KeyStoreRestore r;
  std::error_code ec;
  fs::directory_iterator it(dir_, ec);
  if (ec) throw std::system_error(ec, "telemetry key store '" + dir_.string() + "'");
  std::size_t read = 0;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw std::system_error(ec, "telemetry key store '" + dir_.string() + "'");
    const auto device = telemetry_key_file_device(it->path().filename().string());
    if (!device || !it->is_regular_file(ec) || read >= kMaxTelemetrySenders ||
        (unknown == UnknownDevices::keep && peers(*device) == nullptr)) {
      ++r.skipped;
      continue;
    }
    ++read;
    Bytes wire;
    try {
      wire = common::read_bounded_file<Bytes>(it->path().string(), kMaxEnvelope);
    } catch (const std::exception&) {
      ++r.skipped;  // unreadable or too large: not ours to delete
      continue;
    }
    std::string why;
    try {
      const Opened opened = open_protected(wire, topic_telemetry_key(*device, self.id), now_ms, self, peers);
      if (opened.header.sender != *device) throw Refused(Refusal::wrong_topic, "stored under another device");
      reader.add_key(opened, now_ms);
      ++r.restored;
      continue;
    } catch (const Refused& e) {
      why = std::string(to_string(e.reason())) + ": " + e.what();
    } catch (const std::exception& e) {
      why = e.what();
    }
    fs::remove(it->path(), ec);
    ++r.removed;
    if (on_refused) on_refused(*device, why);
  }
  return r;
}

}  // namespace pqot::srup
