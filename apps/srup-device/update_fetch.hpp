// srup-device: SRUP-PQ updates (docs/srup-device.md, "Updates"). Update Initiate names a URL
// and the file's SHA-256; the fetcher downloads it (file:// or http://) into a temporary file of
// the update directory and checks the digest. Update Activate with the same token runs the
// configured apply command (through the ActionRunner) with the file's path as its one argument.
// Asynchronous: downloads run on the fetcher's own thread, outcomes arrive through callbacks.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "pqot/crypto/bytes.hpp"
#include "pqot/srup/body.hpp"
#include "pqot/srup/status.hpp"
#include "srup-device/action_runner.hpp"
#include "srup-device/config.hpp"

namespace pqot::srup_device {

/// Updates kept at once (downloading or ready); a new one beyond drops the oldest ready one.
inline constexpr std::size_t kMaxPendingUpdates = 2;

struct UpdateResult {
  srup::Status status = srup::Status::update_file_error;
  std::string detail;  ///< <= srup::kMaxDetail bytes
  std::string path;    ///< the ready file (status update_success only)
};

class UpdateFetcher {
 public:
  using Done = std::function<void(UpdateResult)>;

  /// `runner` runs the apply command and must outlive the fetcher. Creates `config.dir` (0700)
  /// if missing (std::filesystem::filesystem_error if it cannot), and deletes the files an earlier
  /// fetcher left there: regular files named update-XXXXXX or update-XXXXXX.part, nothing else.
  UpdateFetcher(UpdateSection config, ActionRunner& runner);
  /// Cancels a running download (within about 100 ms) and deletes every file it made.
  ~UpdateFetcher();
  UpdateFetcher(const UpdateFetcher&) = delete;
  UpdateFetcher& operator=(const UpdateFetcher&) = delete;

  /// Update Initiate with `token`. Returns the outcome at once if there is nothing to wait for
  /// (0xFC for a URL that is not file:// or http://, https:// included; 0x91 BUSY while another
  /// download runs); otherwise `done` gets it later from the fetcher's thread: 0x00 (file
  /// ready, digest right), 0xFC HTTP error, 0xFD server error, 0xFE file error, 0xFF digest
  /// mismatch. A file that fails is deleted. The same token again replaces its earlier update.
  std::optional<UpdateResult> initiate(const crypto::Bytes& token, const std::string& url, const srup::Digest& digest,
                                       Done done);

  /// Update Activate with `token`: runs the apply command on the token's file. At once: 0x1F
  /// when no ready update has this token, no apply program is configured, or the command cannot
  /// start; 0x91 BUSY at the runner's limit. Later, through `done`: 0x10 if it exited 0, else
  /// 0x1F with the runner's detail. The update is forgotten and its file deleted either way.
  std::optional<UpdateResult> activate(const crypto::Bytes& token, Done done);

  /// Updates held (downloading or ready).
  std::size_t pending() const;

  /// Files left by an earlier fetcher that the constructor deleted.
  std::size_t swept() const;

 private:
  struct Pending;
  void sweep();
  void loop();
  UpdateResult download(Pending& p);
  using Sink = std::function<bool(crypto::ByteView)>;
  UpdateResult fetch_file(const std::string& url, const Sink& sink);
  void drop_locked(std::deque<std::unique_ptr<Pending>>::iterator it);

  UpdateSection config_;
  ActionRunner& runner_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Pending>> pending_;  // oldest first
  Pending* queued_ = nullptr;                     // the download to start
  bool downloading_ = false;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};
  std::size_t swept_ = 0;
  std::thread thread_;
};

}  // namespace pqot::srup_device
