// srup-device's requests to leave its C2 (docs/srup-mqtt.md 4.5): `srup-device --resign` and
// `--deregister` run the agent once to send a Resign or Deregister Request, retried with the same
// token until the C2 answers, and record the membership "left".
#include <spdlog/spdlog.h>

#include <iostream>

#include "agent.hpp"
#include "pqot/crypto/random.hpp"
#include "pqot/srup/status.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_device {

namespace {

constexpr std::chrono::milliseconds kLeaveBackoffFirst{2000};
constexpr std::chrono::milliseconds kLeaveBackoffMax{30'000};

srup::Status leave_success(srup::MessageType request) {
  return request == srup::MessageType::resign_request ? srup::Status::resign_success : srup::Status::deregister_success;
}

}  // namespace

int Agent::leave(srup::MessageType request, std::chrono::milliseconds wait) {
  if (membership_ != Membership::joined) {
    spdlog::error("this device is {} (C2 {}): only a joined device can leave its C2", membership_name(),
                  srup::id_text(c2_.id));
    return 2;
  }
  leaving_ = request;
  join_backoff_ = kLeaveBackoffFirst;
  start_mqtt();
  spdlog::info("srup-device {}: sending a {} to C2 {} (waiting up to {} s)", srup::id_text(identity_.self.id),
               srup::to_string(request), srup::id_text(c2_.id), wait.count() / 1000);
  leave_deadline_.expires_after(wait);
  leave_deadline_.async_wait([this](std::error_code ec) {
    if (ec) return;
    spdlog::error("the C2 did not answer in time; the device stays joined (run it again, or check the C2)");
    stop();
  });
  io_.run();
  mqtt_->stop();
  state_->flush();
  return leave_result_;
}

void Agent::send_leave_request() {
  if (stopping_ || !leaving_) return;
  if (leave_token_.empty()) {
    leave_token_.resize(16);
    crypto::random_bytes(leave_token_);
  }
  try {
    // As with joins: a new envelope each time, the same token.
    publish(srup::topic_from_device(identity_.self.id),
            endpoint_->make(c2_.id, *leaving_, srup::Empty{}, srup::topic_from_device(identity_.self.id), leave_token_));
  } catch (const std::exception& e) {
    spdlog::error("{}: {}", srup::to_string(*leaving_), e.what());
  }
  join_timer_.expires_after(join_backoff_);
  join_backoff_ = std::min(join_backoff_ * 2, kLeaveBackoffMax);
  join_timer_.async_wait([this](std::error_code ec) {
    if (!ec) send_leave_request();
  });
}

void Agent::on_leave_answer(const srup::Inbound& in) {
  if (leave_token_.empty() || in.header.token != leave_token_) {
    return refuse("BAD_REQUEST", "a Response to nothing this device asked");
  }
  const auto status = std::get<srup::Response>(in.body).status;
  join_timer_.cancel();
  if (status == static_cast<std::uint8_t>(leave_success(*leaving_))) {
    set_membership(Membership::left);
    std::cout << (*leaving_ == srup::MessageType::resign_request ? "resigned" : "deregistered") << " from C2 "
              << srup::id_text(c2_.id) << std::endl;
    leave_result_ = 0;
  } else {
    spdlog::error("the C2 refused the {} (status 0x{:02x}: {})", srup::to_string(*leaving_), status,
                  srup::status_name(status));
    leave_result_ = 1;
  }
  stop();
}

}  // namespace pqot::srup_device
