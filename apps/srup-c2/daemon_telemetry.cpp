// srup-c2 as a telemetry reader (docs/srup-mqtt.md 4.6; docs/srup-pq.md section 5): keys, readings
// held as provisional until their Checkpoint confirms them, then stored.
#include <spdlog/spdlog.h>

#include "daemon_internal.hpp"
#include "pqot/srup/reading_json.hpp"
#include "pqot/srup/topics.hpp"

namespace pqot::srup_c2 {

nlohmann::json value_json(const srup::Value& v) {
  return {{"type", std::string(srup::to_string(srup::type_of(v)))}, {"text", srup::to_text(v)}};
}

void Daemon::handle_telemetry_key(std::uint64_t device, const std::string& topic, const crypto::Bytes& payload) {
  if (!sender_matches_topic(payload, device)) return;
  try {
    const srup::Opened opened =
        srup::open_protected(payload, topic, now_ms(), identity_.self, [this](std::uint64_t id) {
          const auto it = telemetry_peers_.find(id);  // joined devices only
          return it == telemetry_peers_.end() ? nullptr : &it->second;
        });
    if (opened.header.type != srup::MessageType::telemetry_key) {
      return refuse("BAD_REQUEST", device, "not a Telemetry Key on a key topic");
    }
    if (!state_->accept({opened.header.sender, opened.header.recipient}, opened.header.sequence)) {
      return refuse("REPLAY", device, "telemetry key already seen");
    }
    const std::vector<std::uint32_t> before = telemetry_->epochs(device);
    telemetry_->add_key(opened, now_ms());
    ++counters_.received_by_type["telemetry-key"];
    // Kept for the next start (mqtt 4.6) when it is a new epoch; the same key resent every
    // key_resend_s is not written again.
    if (before.empty() || before.front() != telemetry_->epochs(device).front()) {
      try {
        telemetry_keys_->save(device, payload);
      } catch (const std::exception& e) {
        if (log_limiter_.allow().log) spdlog::error("cannot keep the telemetry key of {}: {}", srup::id_text(device), e.what());
      }
    }
  } catch (const srup::Refused& r) {
    refuse(srup::to_string(r.reason()), device, r.what());
  } catch (const std::exception& e) {
    refuse("INTERNAL", device, e.what());
  }
}

// docs/srup-mqtt.md 4.6: the last key envelope of each device, opened again at start, so that
// the readings the broker queued while the C2 was down decrypt at once. Runs after the registry
// enrolled the joined devices: a stored key of a device no longer joined is refused and deleted.
void Daemon::restore_telemetry_keys() {
  telemetry_keys_ = std::make_unique<srup::TelemetryKeyStore>(config_.c2.state_dir / "telemetry-keys");
  const srup::KeyStoreRestore r = telemetry_keys_->restore(
      *telemetry_, identity_.self,
      [this](std::uint64_t id) {
        const auto it = telemetry_peers_.find(id);
        return it == telemetry_peers_.end() ? nullptr : &it->second;
      },
      now_ms(), [](std::uint64_t device, const std::string& why) {
        spdlog::info("stored telemetry key of {} dropped: {}", srup::id_text(device), why);
      });
  spdlog::info("telemetry keys restored: {} ({} dropped, {} other files skipped)", r.restored, r.removed, r.skipped);
}

void Daemon::handle_telemetry(std::uint64_t device, const std::string& topic, const crypto::Bytes& payload) {
  if (!sender_matches_topic(payload, device)) return;
  const std::uint64_t now = now_ms();
  try {
    const srup::EnvelopeView v = srup::parse_envelope(payload);
    if (v.header.type == srup::MessageType::checkpoint) {
      if (!state_->would_accept({device, 0}, v.header.sequence)) return refuse("REPLAY", device, "checkpoint already seen");
      const srup::CheckpointReport report = telemetry_->checkpoint(payload, topic, now);  // steps 1-9
      state_->accept({device, 0}, v.header.sequence);
      on_checkpoint(report);
      return;
    }
    srup::TelemetryReading reading = telemetry_->open(payload, topic, now);
    if (!state_->accept_batched({device, 0}, reading.opened.header.sequence)) {
      return refuse("REPLAY", device, "telemetry sequence already seen");
    }
    const srup::Body body =
        srup::decode_body(srup::MessageType::telemetry, reading.opened.header.suite, reading.opened.body);
    ++counters_.telemetry_readings;
    seen(device);
    if (!config_.telemetry.store) return;
    if (!reading.awaiting_checkpoint) return;  // its range was already checked: never confirmed
    hold_provisional(device, {reading.epoch, reading.opened.header.sequence, now,
                              srup::reading_json(std::get<srup::Reading>(body))});
  } catch (const srup::Refused& r) {
    refuse(srup::to_string(r.reason()), device, r.what());
  } catch (const std::exception& e) {
    refuse("INTERNAL", device, e.what());
  }
}

void Daemon::on_checkpoint(const srup::CheckpointReport& report) {
  using V = srup::CheckpointReport::Verdict;
  if (report.verdict == V::incomplete) return;  // the missing ones may still come
  auto it = provisional_.find(report.sender);
  std::vector<Reading> confirmed;
  if (it != provisional_.end()) {
    auto& list = it->second;
    const std::uint64_t first = report.first_sequence;
    const std::uint64_t end = first + report.count;
    for (auto r = list.begin(); r != list.end();) {
      if (r->epoch == report.epoch && r->sequence >= first && r->sequence < end) {
        provisional_budget_.release(report.sender, r->json.size());
        if (report.verdict == V::confirmed) confirmed.push_back({report.sender, r->sequence, r->received_ms, std::move(r->json)});
        r = list.erase(r);
      } else {
        ++r;
      }
    }
    if (list.empty()) provisional_.erase(it);
  }
  if (report.verdict == V::mismatch) {
    ++counters_.telemetry_mismatch;
    spdlog::error("ALARM: telemetry of {} epoch {} sequences {}..{} does not match its Checkpoint: a reader "
                  "holding the key forged readings; none of them is stored",
                  srup::id_text(report.sender), report.epoch, report.first_sequence,
                  report.first_sequence + report.count - 1);
    return;
  }
  counters_.telemetry_confirmed += confirmed.size();
  if (!confirmed.empty()) registry_->add_readings(confirmed);
}

void Daemon::drop_provisional(std::uint64_t device, std::uint64_t sequence) {
  const auto it = provisional_.find(device);
  if (it == provisional_.end()) return;
  auto& list = it->second;
  for (auto r = list.begin(); r != list.end();) {
    if (r->sequence == sequence) {
      provisional_budget_.release(device, r->json.size());
      r = list.erase(r);
    } else {
      ++r;
    }
  }
  if (list.empty()) provisional_.erase(it);
}

namespace {

// The reason label of srup_c2_telemetry_provisional_drops_total.
const char* provisional_reason(common::ShareBudget::Verdict v) {
  using V = common::ShareBudget::Verdict;
  switch (v) {
    case V::key_items: return "device_readings";
    case V::key_bytes: return "device_bytes";
    case V::total_items: return "total_readings";
    case V::total_bytes: return "total_bytes";
    case V::admitted: break;
  }
  return "?";
}

}  // namespace

// Bounded per device and in all ([telemetry] provisional_max*, docs/srup-c2.md "Telemetry"): a
// device over its share gives up its own oldest readings (a flood of its own, or readings whose
// Checkpoint was lost), so it never keeps another device's readings out; with the total reached,
// the device holding the most (readings or bytes, whichever total was reached) gives up its oldest
// reading (devices that fill their shares and never send a Checkpoint cannot starve the fleet). Each reading given up is
// counted by the bound that decided.
void Daemon::hold_provisional(std::uint64_t device, ProvisionalReading reading) {
  using V = common::ShareBudget::Verdict;
  const std::size_t bytes = reading.json.size();
  for (;;) {
    const V v = provisional_budget_.admit(device, bytes);
    if (v == V::admitted) break;
    ++counters_.provisional_drops[provisional_reason(v)];
    auto it = provisional_.end();
    if (v == V::key_items || v == V::key_bytes) {
      it = provisional_.find(device);
    } else {
      // The largest holder in the dimension that overflowed (readings or bytes).
      std::size_t most = 0;
      for (auto h = provisional_.begin(); h != provisional_.end(); ++h) {
        const common::ShareBudget::Usage u = provisional_budget_.of(h->first);
        const std::size_t held = v == V::total_items ? u.items : u.bytes;
        if (it == provisional_.end() || held > most) {
          it = h;
          most = held;
        }
      }
    }
    if (it == provisional_.end()) return;  // nothing to give up: not held
    provisional_budget_.release(it->first, it->second.front().json.size());
    it->second.pop_front();
    if (it->second.empty()) provisional_.erase(it);
  }
  provisional_[device].push_back(std::move(reading));
}

// A reading waits for its Checkpoint at most kProvisionalMaxAgeMs (twice the longest checkpoint
// interval a device may choose, plus the key grace): older ones are given up and counted
// ("expired"), so readings whose Checkpoint never comes do not hold their share for ever.
void Daemon::expire_provisional(std::uint64_t now) {
  for (auto it = provisional_.begin(); it != provisional_.end();) {
    auto& list = it->second;
    while (!list.empty() && now - list.front().received_ms > kProvisionalMaxAgeMs) {
      provisional_budget_.release(it->first, list.front().json.size());
      ++counters_.provisional_drops["expired"];
      list.pop_front();
    }
    it = list.empty() ? provisional_.erase(it) : std::next(it);
  }
}

// A device that leaves (resigned or deregistered) sends no Checkpoint the C2 would accept: what it
// still held is given up at once.
void Daemon::forget_provisional(std::uint64_t device) {
  const auto it = provisional_.find(device);
  if (it == provisional_.end()) return;
  for (const ProvisionalReading& r : it->second) provisional_budget_.release(device, r.json.size());
  counters_.provisional_drops["device_left"] += it->second.size();
  provisional_.erase(it);
}

}  // namespace pqot::srup_c2
