// srup-device's join (docs/srup-mqtt.md 4.2): the request retried with the same token until the C2
// answers, the code shown for human and observed joins, observation for another device's join, and
// the membership kept across restarts.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <fstream>

#include "agent.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_device {

namespace {

constexpr std::chrono::milliseconds kJoinBackoffMax{300'000};
constexpr std::size_t kMaxCodeFile = 256;
/// Observation Requests waiting for their observation at once; more are answered 0x6F.
constexpr std::size_t kMaxObservations = 16;
constexpr std::chrono::milliseconds kObservePoll{100};

// Replaces `path` with `text` (mode 0600) atomically and durably: a temporary file, fsync, rename,
// then the directory.
void replace_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp.string());
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + path.string());
  }
  const int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

std::string code_text(const srup::OneTimeCodeBytes& code) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (i > 0 && i % 2 == 0) s += ' ';
    s += kHex[code[i] >> 4];
    s += kHex[code[i] & 0xF];
  }
  return s;
}

}  // namespace

std::filesystem::path Agent::membership_file() const {
  return std::filesystem::path(config_.device.state_dir) / "membership";
}

Agent::Membership Agent::load_membership() const {
  std::ifstream in(membership_file());
  std::string word, c2;
  if (!(in >> word >> c2)) return Membership::unjoined;
  if (c2 != srup::id_text(c2_.id)) return Membership::unjoined;  // another C2 now: join it
  if (word == "joined") return Membership::joined;
  if (word == "left") return Membership::left;
  return Membership::unjoined;
}

const char* Agent::membership_name() const {
  switch (membership_) {
    case Membership::unjoined: return "not joined";
    case Membership::joining: return "joining";
    case Membership::joined: return "joined";
    case Membership::refused: return "join refused";
    case Membership::left: return "left its C2";
  }
  return "?";
}

void Agent::set_membership(Membership m) {
  membership_ = m;
  if (m == Membership::joined || m == Membership::left || m == Membership::unjoined) {
    const char* word = m == Membership::joined ? "joined" : m == Membership::left ? "left" : "unjoined";
    try {
      replace_file(membership_file(), std::string(word) + " " + srup::id_text(c2_.id) + "\n");
    } catch (const std::exception& e) {
      spdlog::error("{}", e.what());
    }
  }
  if (m == Membership::left) {
    telemetry_.reset();
    join_timer_.cancel();
    spdlog::warn("this device left its C2: it obeys no command until it is enrolled and joins again");
  }
  spdlog::info("membership: {}", membership_name());
}

void Agent::send_join_request() {
  if (stopping_ || membership_ == Membership::joined || membership_ == Membership::left) return;
  if (join_token_.empty()) {
    join_token_.resize(16);
    crypto::random_bytes(join_token_);
  }
  membership_ = Membership::joining;
  const srup::PublicKeys keys{identity_.pub.keys.signature_public, identity_.pub.keys.kem_public};
  srup::MessageType type = srup::MessageType::join_request;
  srup::Body body = srup::JoinRequest{keys};
  if (config_.join.mode == JoinMode::human) type = srup::MessageType::human_join_request;
  if (config_.join.mode == JoinMode::observed) {
    type = srup::MessageType::observed_join_request;
    body = srup::ObservedJoinRequest{keys, config_.join.observer};
  }
  try {
    // A new envelope each time (a repeat of the same bytes would be a replay at the C2), the same
    // token: the C2 answers the join, not the copy.
    publish(srup::topic_from_device(identity_.self.id),
            endpoint_->make(c2_.id, type, body, srup::topic_from_device(identity_.self.id), join_token_));
  } catch (const std::exception& e) {
    spdlog::error("join request: {}", e.what());
  }
  join_timer_.expires_after(join_backoff_);
  join_backoff_ = std::min(join_backoff_ * 2, kJoinBackoffMax);
  join_timer_.async_wait([this](std::error_code ec) {
    if (!ec) send_join_request();
  });
}

void Agent::on_join_answer(const srup::Inbound& in) {
  if (in.header.token != join_token_ || join_token_.empty()) {
    return refuse("BAD_REQUEST", "a Response to nothing this device asked");
  }
  const auto status = std::get<srup::Response>(in.body).status;
  join_timer_.cancel();
  join_token_.clear();
  join_backoff_ = std::chrono::milliseconds(5000);
  if (status == static_cast<std::uint8_t>(srup::Status::join_success)) {
    set_membership(Membership::joined);
    return;
  }
  spdlog::error("the C2 refused the join (status 0x{:02x}: {}); asking again in 5 minutes", status,
                srup::status_name(status));
  membership_ = Membership::refused;
  join_timer_.expires_after(kJoinBackoffMax);
  join_timer_.async_wait([this](std::error_code ec) {
    if (!ec) send_join_request();
  });
}

void Agent::show_code(const srup::OneTimeCodeBytes& code) {
  const std::string text = code_text(code);
  spdlog::warn("JOIN CODE: {}  (the operator types it: srup c2 join-code {} '{}')", text,
               srup::id_text(identity_.self.id), text);
  const std::string file = config_.join.code_file.empty()
                               ? (std::filesystem::path(config_.device.state_dir) / "join-code").string()
                               : config_.join.code_file;
  try {
    replace_file(file, text + "\n");
  } catch (const std::exception& e) {
    spdlog::error("cannot show the join code in {}: {}", file, e.what());
  }
}

// The code observed for the device, if any: `observe_dir/<device-id>` (an empty file is one still
// being written). An observation is used once: the file is removed when it has been judged.
std::optional<srup::Status> Agent::observed(const srup::ObservationRequest& r) const {
  const std::filesystem::path file = std::filesystem::path(config_.join.observe_dir) / srup::id_text(r.device);
  std::ifstream in(file, std::ios::binary);
  if (!in) return std::nullopt;
  std::string seen(kMaxCodeFile, '\0');
  in.read(seen.data(), static_cast<std::streamsize>(seen.size()));
  seen.resize(static_cast<std::size_t>(in.gcount()));
  in.close();
  if (seen.empty()) return std::nullopt;
  while (!seen.empty() && (seen.back() == '\n' || seen.back() == '\r')) seen.pop_back();
  std::error_code ec;
  std::filesystem::remove(file, ec);
  return seen == code_text(r.code) ? srup::Status::observed_join_valid : srup::Status::observed_join_invalid;
}

void Agent::observe(const srup::Header& h, const srup::ObservationRequest& r) {
  if (config_.join.observe_dir.empty()) return answer(h, srup::Status::observed_join_failed, "this device observes nothing");
  if (const auto verdict = observed(r)) {
    spdlog::info("observation of device {}: {}", srup::id_text(r.device), srup::status_name(static_cast<std::uint8_t>(*verdict)));
    return answer(h, *verdict, "");
  }
  if (observations_.size() >= kMaxObservations) {
    return answer(h, srup::Status::observed_join_failed, "too many observations at once");
  }
  spdlog::info("observing device {}: waiting up to {} ms for its code in {}", srup::id_text(r.device),
               config_.join.observe_wait_ms, config_.join.observe_dir);
  observations_.push_back({h, r, std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.join.observe_wait_ms)});
  if (observations_.size() == 1) poll_observations();
}

void Agent::poll_observations() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = observations_.begin(); it != observations_.end();) {
    auto verdict = observed(it->request);
    if (!verdict && now >= it->deadline) verdict = srup::Status::observed_join_failed;
    if (!verdict) {
      ++it;
      continue;
    }
    spdlog::info("observation of device {}: {}", srup::id_text(it->request.device),
                 srup::status_name(static_cast<std::uint8_t>(*verdict)));
    const srup::Header h = it->header;
    it = observations_.erase(it);
    answer(h, *verdict, *verdict == srup::Status::observed_join_failed ? "nothing observed in time" : "");
  }
  if (observations_.empty() || stopping_) return;
  observe_timer_.expires_after(kObservePoll);
  observe_timer_.async_wait([this](std::error_code ec) {
    if (!ec) poll_observations();
  });
}

std::filesystem::path Agent::current_c2_file(const DeviceConfig& c) {
  return std::filesystem::path(c.device.state_dir) / "current-c2.pub";
}

// The C2 this device obeys: the one a Join Command named (STATE_DIR/current-c2.pub), else the
// configured one.
srup::PublicIdentity Agent::load_c2(const DeviceConfig& c) {
  const std::filesystem::path rehomed = current_c2_file(c);
  const std::filesystem::path file = std::filesystem::exists(rehomed) ? rehomed : std::filesystem::path(c.c2.public_identity);
  try {
    return srup::load_public_identity(file);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load the C2's public identity " + file.string() + ": " + e.what());
  }
}

// Join Command (docs/srup-mqtt.md 4.2): only the current C2 can send it (nobody else is enrolled).
// The new C2 is stored durably first, then the old C2 hears 0x50, then the device joins the new one
// with its configured join mode.
void Agent::on_join_command(const srup::Header& h, const srup::JoinCommand& j) {
  if (j.suite != identity_.self.suite) {
    return answer(h, srup::Status::join_refused, "the new C2's suite differs from this device's");
  }
  if (j.c2_id == c2_.id) return answer(h, srup::Status::join_refused, "that C2 is this device's C2 already");
  if (j.c2_id == identity_.self.id) return answer(h, srup::Status::join_refused, "that ID is this device's own");
  srup::PublicIdentity next;
  std::string text;
  try {
    text = srup::encode_public_identity(srup::PublicIdentity{j.c2_id, {j.suite, j.keys.signature_public, j.keys.kem_public}});
    next = srup::decode_public_identity(crypto::as_bytes(text));  // the keys checked as at start
  } catch (const std::exception& e) {
    return answer(h, srup::Status::join_refused, std::string("the new C2's keys: ") + e.what());
  }
  try {
    replace_file(current_c2_file(config_), text);
  } catch (const std::exception& e) {
    spdlog::error("Join Command: {}", e.what());
    return answer(h, srup::Status::join_failed, "cannot store the new C2");
  }
  const std::uint64_t old = c2_.id;
  answer(h, srup::Status::join_success, "re-homed to c2-" + srup::id_text(next.id));
  endpoint_->remove(old);
  c2_ = next;
  endpoint_->enrol(c2_.id, c2_.keys);
  telemetry_.reset();
  join_timer_.cancel();
  join_token_.clear();
  join_backoff_ = std::chrono::milliseconds(5000);
  spdlog::warn("re-homed: this device's C2 is now {} (was {}); joining it", srup::id_text(c2_.id), srup::id_text(old));
  set_membership(Membership::unjoined);
  send_join_request();
}

}  // namespace pqot::srup_device
