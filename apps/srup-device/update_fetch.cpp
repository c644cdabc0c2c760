// srup-device: the update fetcher (docs/srup-device.md, "Updates").
#include "update_fetch.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "http_get.hpp"
#include "pqot/crypto/hash.hpp"

namespace pqot::srup_device {
namespace {

UpdateResult update_result(srup::Status s, std::string detail, std::string path = {}) {
  if (detail.size() > srup::kMaxDetail) detail.resize(srup::kMaxDetail);
  return UpdateResult{s, std::move(detail), std::move(path)};
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// `p` lexically normal, without a trailing '/' (but "/" itself).
std::string update_normal(const std::string& p) {
  std::string n = std::filesystem::path(p).lexically_normal().string();
  while (n.size() > 1 && n.back() == '/') n.pop_back();
  return n;
}

/// A name the fetcher gives its files: "update-XXXXXX" (ready) or "update-XXXXXX.part" (being
/// written), XXXXXX six letters or digits (mkostemps).
bool update_own_name(std::string_view name) {
  constexpr std::string_view prefix = "update-";
  if (!starts_with(name, prefix)) return false;
  name.remove_prefix(prefix.size());
  if (name.size() != 6 && !(name.size() == 11 && name.substr(6) == ".part")) return false;
  return std::all_of(name.begin(), name.begin() + 6, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

/// Closes a descriptor at the end of its scope.
struct UpdateFd {
  int fd = -1;
  ~UpdateFd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

struct UpdateFetcher::Pending {
  crypto::Bytes token;
  std::string url;
  srup::Digest digest{};
  std::string path;  // the ready file
  bool ready = false;
  Done done;
};

UpdateFetcher::UpdateFetcher(UpdateSection config, ActionRunner& runner) : config_(std::move(config)), runner_(runner) {
  std::filesystem::create_directories(config_.dir);
  std::filesystem::permissions(config_.dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
  sweep();
  thread_ = std::thread([this] { loop(); });
}

UpdateFetcher::~UpdateFetcher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cancel_ = true;
  cv_.notify_all();
  thread_.join();
  for (auto& p : pending_)
    if (p->ready) ::unlink(p->path.c_str());
}

// A new fetcher holds no update, so every file of its own naming in the directory was left by an
// agent that stopped mid-download or with updates ready (a crash, SIGKILL, power loss): disk the
// C2 made it fill, never to be used again. Nothing else is touched (not even a symlink so named).
void UpdateFetcher::sweep() {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(config_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!update_own_name(it->path().filename().string()) || !it->is_regular_file(type_ec) || it->is_symlink(type_ec))
      continue;
    if (::unlink(it->path().c_str()) == 0) ++swept_;
  }
}

std::size_t UpdateFetcher::swept() const { return swept_; }

std::size_t UpdateFetcher::pending() const {
  std::lock_guard lock(mu_);
  return pending_.size();
}

void UpdateFetcher::drop_locked(std::deque<std::unique_ptr<Pending>>::iterator it) {
  if ((*it)->ready) ::unlink((*it)->path.c_str());
  pending_.erase(it);
}

std::optional<UpdateResult> UpdateFetcher::initiate(const crypto::Bytes& token, const std::string& url,
                                                    const srup::Digest& digest, Done done) {
  if (starts_with(url, "https://")) {
    return update_result(srup::Status::update_http_error,
                         "https:// is not supported: the signed digest already authenticates the file; use http://");
  }
  if (!starts_with(url, "http://") && !starts_with(url, "file://"))
    return update_result(srup::Status::update_http_error, "unsupported URL scheme (file:// and http:// only)");
  std::lock_guard lock(mu_);
  if (downloading_ || queued_ != nullptr)
    return update_result(srup::Status::busy, "busy: another update is downloading");
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if ((*it)->token == token) {
      drop_locked(it);
      break;
    }
  }
  while (pending_.size() >= kMaxPendingUpdates) drop_locked(pending_.begin());  // all ready: none downloads
  auto p = std::make_unique<Pending>();
  p->token = token;
  p->url = url;
  p->digest = digest;
  p->done = std::move(done);
  queued_ = p.get();
  pending_.push_back(std::move(p));
  cv_.notify_all();
  return std::nullopt;
}

std::optional<UpdateResult> UpdateFetcher::activate(const crypto::Bytes& token, Done done) {
  std::lock_guard lock(mu_);
  const auto it = std::find_if(pending_.begin(), pending_.end(), [&](const auto& p) { return p->token == token; });
  if (it == pending_.end()) return update_result(srup::Status::activate_failed, "no update with this token");
  if (!(*it)->ready) return update_result(srup::Status::activate_failed, "the update has not finished downloading");
  if (config_.apply_program.empty())
    return update_result(srup::Status::activate_failed, "no apply program configured");
  const std::string path = (*it)->path;
  const ProgramSpec spec{config_.apply_program, config_.apply_args, {}, config_.apply_timeout_ms};
  auto now = runner_.run_program(spec, {path}, [path, done](ActionResult r) {
    ::unlink(path.c_str());
    const auto s = r.status == srup::Status::action_success ? srup::Status::activate_success : srup::Status::activate_failed;
    done(update_result(s, "apply: " + r.detail));
  });
  if (now) {
    if (now->status == srup::Status::busy) return update_result(srup::Status::busy, now->detail);
    return update_result(srup::Status::activate_failed, "apply: " + now->detail);
  }
  pending_.erase(it);  // the runner's callback now owns the file
  return std::nullopt;
}

void UpdateFetcher::loop() {
  for (;;) {
    Pending* p = nullptr;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || queued_ != nullptr; });
      if (stopping_) return;
      p = std::exchange(queued_, nullptr);
      downloading_ = true;
    }
    UpdateResult r = download(*p);
    Done done;
    {
      std::lock_guard lock(mu_);
      downloading_ = false;
      if (stopping_) {
        if (r.status == srup::Status::update_success) ::unlink(r.path.c_str());
        return;
      }
      done = std::move(p->done);
      if (r.status == srup::Status::update_success) {
        p->ready = true;
        p->path = r.path;
      } else {
        pending_.erase(std::find_if(pending_.begin(), pending_.end(), [p](const auto& q) { return q.get() == p; }));
      }
    }
    done(std::move(r));
  }
}

UpdateResult UpdateFetcher::download(Pending& p) {
  std::string part = (std::filesystem::path(config_.dir) / "update-XXXXXX.part").string();
  UpdateFd out;
  out.fd = ::mkostemps(part.data(), 5, O_CLOEXEC);
  if (out.fd < 0)
    return update_result(srup::Status::update_file_error, "cannot create a file in the update directory: " +
                                                              std::string(std::strerror(errno)));
  crypto::Sha256Hasher hasher;
  int write_errno = 0;
  const Sink sink = [&](crypto::ByteView data) {
    hasher.update(data);
    for (std::size_t done = 0; done < data.size();) {
      const ssize_t n = ::write(out.fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        write_errno = n < 0 ? errno : EIO;
        return false;
      }
      done += static_cast<std::size_t>(n);
    }
    return true;
  };
  UpdateResult r;
  if (starts_with(p.url, "file://")) {
    r = fetch_file(p.url, sink);
  } else {
    const HttpLimits limits{config_.io_timeout_ms, config_.timeout_ms, config_.max_bytes, config_.redirects};
    const HttpResult h = http_get(p.url, limits, sink, cancel_);
    switch (h.failure) {
      case HttpFailure::none: r.status = srup::Status::update_success; break;
      case HttpFailure::http: r = update_result(srup::Status::update_http_error, h.detail); break;
      case HttpFailure::server: r = update_result(srup::Status::update_server_error, h.detail); break;
      case HttpFailure::size: r = update_result(srup::Status::update_file_error, h.detail); break;
      case HttpFailure::sink: r = update_result(srup::Status::update_file_error, h.detail); break;
    }
  }
  if (r.status == srup::Status::update_success && write_errno == 0 && ::fsync(out.fd) != 0) write_errno = errno;
  if (write_errno != 0)
    r = update_result(srup::Status::update_file_error, "cannot write the update file: " + std::string(std::strerror(write_errno)));
  if (r.status == srup::Status::update_success && hasher.finish() != p.digest)
    r = update_result(srup::Status::update_digest_mismatch, "the file's SHA-256 differs from the digest");
  if (r.status != srup::Status::update_success) {
    ::unlink(part.c_str());
    return r;
  }
  std::string ready = part.substr(0, part.size() - 5);  // without ".part": complete and checked
  if (::rename(part.c_str(), ready.c_str()) != 0) {
    const int e = errno;
    ::unlink(part.c_str());
    return update_result(srup::Status::update_file_error, "cannot rename the update file: " + std::string(std::strerror(e)));
  }
  return update_result(srup::Status::update_success, "ready", ready);
}

UpdateResult UpdateFetcher::fetch_file(const std::string& url, const Sink& sink) {
  const std::string path = url.substr(7);
  if (path.empty() || path[0] != '/')
    return update_result(srup::Status::update_file_error, "a file URL must be file:///ABSOLUTE/PATH");
  if (path.find('\0') != std::string::npos) return update_result(srup::Status::update_file_error, "the path holds NUL");
  // Without a root the device reads no local file for its C2 (not even to answer whether it exists).
  if (config_.allowed_file_root.empty())
    return update_result(srup::Status::update_file_error,
                         "file:// updates are off: update.allowed_file_root names no directory");
  // The real path, symlinks resolved, must lie under the allowed root (itself resolved).
  char* root_real = ::realpath(config_.allowed_file_root.c_str(), nullptr);
  const std::string root = root_real != nullptr ? root_real : "";
  std::free(root_real);
  const auto inside = [](const std::string& p, const std::string& r) {
    return !r.empty() && (r == "/" || starts_with(p, r + "/"));
  };
  const auto outside = update_result(srup::Status::update_file_error, "the file is outside the allowed root");
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) {
    const int e = errno;
    // Whether a path outside the root exists is none of the C2's business either.
    const std::string lexical = update_normal(path);
    if (!inside(lexical, root) && !inside(lexical, update_normal(config_.allowed_file_root))) return outside;
    return update_result(srup::Status::update_file_error, "cannot open the file: " + std::string(std::strerror(e)));
  }
  const std::string canonical(real);
  std::free(real);
  if (!inside(canonical, root)) return outside;
  UpdateFd in;
  in.fd = ::open(canonical.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (in.fd < 0)
    return update_result(srup::Status::update_file_error, "cannot open the file: " + std::string(std::strerror(errno)));
  struct stat st {};
  if (::fstat(in.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return update_result(srup::Status::update_file_error, "not a regular file");
  const auto limit = std::to_string(config_.max_bytes);
  if (static_cast<std::uint64_t>(st.st_size) > config_.max_bytes)
    return update_result(srup::Status::update_file_error,
                         "the file has " + std::to_string(st.st_size) + " bytes, over the limit of " + limit);
  std::vector<std::uint8_t> buf(64 * 1024);
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(in.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return update_result(srup::Status::update_file_error, "reading the file: " + std::string(std::strerror(errno)));
    if (n == 0) break;
    total += static_cast<std::uint64_t>(n);
    if (total > config_.max_bytes)
      return update_result(srup::Status::update_file_error, "the file grew over the limit of " + limit + " bytes");
    if (!sink(crypto::ByteView(buf.data(), static_cast<std::size_t>(n))))
      return update_result(srup::Status::update_file_error, "cannot write the update file");
  }
  return update_result(srup::Status::update_success, "");
}

}  // namespace pqot::srup_device
