// A telemetry reader's stored keys (docs/srup-mqtt.md 4.6, second bullet): the last Telemetry Key
// envelope of each device, kept as received (sealed to this reader: on disk it is as protected as
// the reader's own identity key) and opened again at start, so that a restarted reader decrypts
// the readings the broker queued for it. Used by srup-c2 and `srup monitor`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "pqot/srup/protect.hpp"
#include "pqot/srup/telemetry.hpp"

namespace pqot::srup {

/// One file per device: DIR/<16 hex digits of the device ID>.tk, the envelope's bytes.
inline constexpr std::string_view kTelemetryKeyFileSuffix = ".tk";

/// What restore() did, for the caller's log.
struct KeyStoreRestore {
  std::size_t restored = 0;  ///< keys opened and handed to the reader
  std::size_t removed = 0;   ///< files refused (expired, not for us, damaged) and deleted
  std::size_t skipped = 0;   ///< entries left alone: other names, over the bound, unreadable
};

/// What restore() does with a file of a device `peers` does not know: srup-c2 deletes it (the
/// device is no longer joined); a monitor keeps it (it follows other devices in another run).
enum class UnknownDevices : std::uint8_t { remove, keep };

/// Not thread-safe. The directory is created (mode 0700) if missing.
class TelemetryKeyStore {
 public:
  /// Throws std::system_error if the directory cannot be created.
  explicit TelemetryKeyStore(std::filesystem::path dir);

  /// Replaces the device's file with `envelope` atomically and durably (a temporary file of mode
  /// 0600, fsync, rename, the directory fsynced): a crash leaves the old envelope or the new one.
  /// Bounded: one file per device, each at most kMaxEnvelope bytes. Throws std::system_error,
  /// std::length_error for an envelope over kMaxEnvelope.
  void save(std::uint64_t device, ByteView envelope);

  /// Deletes the device's file, if any (a device deregistered, a reader no longer following it).
  void remove(std::uint64_t device);

  /// Opens every stored envelope again as `self` (steps 1-9 of docs/srup-pq.md 6 on the topic
  /// srup/<dev>/tk/<self>, with `peers` as the enrolled devices) and gives it to `reader.add_key`.
  /// The replay window (step 10) is not asked: the envelope passed it when it arrived, and this is
  /// the reader's own copy. A file that is refused (the device no longer enrolled, expired, not
  /// sealed to `self`, damaged, or add_key refuses it) is deleted and reported to `on_refused`
  /// with the device and the reason. At most kMaxTelemetrySenders files are read (the reader's
  /// own bound); names other than <16 hex>.tk, files over kMaxEnvelope bytes and anything beyond
  /// the bound are skipped (counted, left in place), and so are files of devices `peers` does not
  /// know when `unknown` is keep.
  KeyStoreRestore restore(TelemetryReader& reader, const Identity& self, const PeerLookup& peers,
                          std::uint64_t now_ms,
                          const std::function<void(std::uint64_t device, const std::string& why)>&
                              on_refused = {},
                          UnknownDevices unknown = UnknownDevices::remove);

  const std::filesystem::path& dir() const noexcept { return dir_; }
  std::filesystem::path file_of(std::uint64_t device) const;

 private:
  std::filesystem::path dir_;
};

/// The device ID of a store file name ("<16 lower-case hex digits>.tk", not 0, not all ones);
/// nullopt for anything else.
std::optional<std::uint64_t> telemetry_key_file_device(std::string_view name);

}  // namespace pqot::srup
