// srup-device: the Modbus TCP energy meter (docs/srup-device.md, "Telemetry sources").
#include "modbus_meter.hpp"

#include <modbus.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <memory>

#include "pqot/common/clock.hpp"
#include "pqot/modbus/batch.hpp"
#include "pqot/srup/meter_channels.hpp"

namespace pqot::srup_device {
namespace {

using MeterClock = std::chrono::steady_clock;

void meter_set_timeout(modbus_t* ctx, std::uint32_t ms) {
  modbus_set_response_timeout(ctx, ms / 1000, (ms % 1000) * 1000);
  modbus_set_byte_timeout(ctx, ms / 1000, (ms % 1000) * 1000);
}

}  // namespace

/// The libmodbus side, touched only by the meter's thread.
struct ModbusMeter::Impl {
  TelemetryModbus cfg;
  std::vector<const modbus::Point*> points;
  std::vector<modbus::ReadSpan> plan;
  modbus_t* ctx = nullptr;
  bool connected = false;
  MeterClock::time_point next_attempt{};
  std::chrono::milliseconds backoff{0};

  explicit Impl(TelemetryModbus c) : cfg(std::move(c)) {
    for (const auto& ch : cfg.channels) points.push_back(&ch.point);
    plan = modbus::plan_reads(points, modbus::kMaxReadRegisters);
  }
  ~Impl() {
    if (ctx != nullptr) {
      if (connected) modbus_close(ctx);
      modbus_free(ctx);
    }
  }

  void fail_connection() {
    if (connected) modbus_close(ctx);
    connected = false;
    backoff = backoff.count() == 0 ? std::chrono::milliseconds(cfg.backoff_min_ms)
                                   : std::min(backoff * 2, std::chrono::milliseconds(cfg.backoff_max_ms));
    next_attempt = MeterClock::now() + backoff;
  }

  /// Connected, or false (and the caller counts why) while backing off or when the attempt fails.
  bool ensure_connected(ModbusMeterStats& s, bool& skipped) {
    skipped = false;
    if (connected) return true;
    if (MeterClock::now() < next_attempt) {
      skipped = true;
      return false;
    }
    if (ctx == nullptr) {
      ctx = modbus_new_tcp_pi(cfg.host.c_str(), std::to_string(cfg.port).c_str());
      if (ctx == nullptr) {
        ++s.connect_failures;
        fail_connection();
        return false;
      }
      modbus_set_slave(ctx, cfg.unit);
      meter_set_timeout(ctx, cfg.timeout_ms);
    }
    if (modbus_connect(ctx) == -1) {
      ++s.connect_failures;
      fail_connection();
      return false;
    }
    connected = true;
    return true;
  }

  /// One reading, or nothing (the connection is dropped after a transport error: a late answer
  /// could otherwise be taken for the next request's).
  std::optional<srup::Reading> read(ModbusMeterStats& s) {
    bool skipped = false;
    if (!ensure_connected(s, skipped)) {
      if (skipped) ++s.skipped_backoff;
      return std::nullopt;
    }
    srup::Reading r;
    r.timestamp_ms = common::unix_time_ms();
    std::vector<std::uint16_t> regs(modbus::kMaxReadRegisters);
    std::vector<std::uint8_t> bits(modbus::kMaxReadBits);
    for (const auto& span : plan) {
      int rc = -1;
      switch (span.table) {
        case modbus::Table::coil: rc = modbus_read_bits(ctx, span.start, span.count, bits.data()); break;
        case modbus::Table::discrete_input: rc = modbus_read_input_bits(ctx, span.start, span.count, bits.data()); break;
        case modbus::Table::holding_register: rc = modbus_read_registers(ctx, span.start, span.count, regs.data()); break;
        case modbus::Table::input_register: rc = modbus_read_input_registers(ctx, span.start, span.count, regs.data()); break;
      }
      if (rc != span.count) {
        const int e = errno;
        // A Modbus exception is the device's answer: the connection is fine.
        if (!(rc == -1 && e >= EMBXILFUN && e <= EMBXGTAR)) fail_connection();
        return std::nullopt;
      }
      backoff = std::chrono::milliseconds(0);
      for (const std::size_t i : span.members) {
        const auto& ch = cfg.channels[i];
        const auto off = static_cast<std::size_t>(ch.point.address - span.start);
        std::optional<modbus::Json> v;
        if (modbus::is_bit_table(span.table)) {
          v = modbus::decode_bit(bits[off] != 0);
        } else {
          v = modbus::decode_registers(ch.point, std::span<const std::uint16_t>(regs.data() + off, ch.point.count));
        }
        double x = 0;
        if (v && v->is_boolean()) x = v->get<bool>() ? 1.0 : 0.0;
        else if (v && v->is_number()) x = v->get<double>();
        else v.reset();
        if (!v || !std::isfinite(x)) {
          ++s.bad_values;
          return std::nullopt;
        }
        const auto known = srup::meter::channel_by_number(ch.channel);
        if (known && known->float64) r.channels.push_back({ch.channel, srup::Value(x)});
        else r.channels.push_back({ch.channel, srup::Value(static_cast<float>(x))});
      }
    }
    std::sort(r.channels.begin(), r.channels.end(), [](const auto& a, const auto& b) { return a.channel < b.channel; });
    return r;
  }
};

ModbusMeter::ModbusMeter(TelemetryModbus config) : impl_(std::make_unique<Impl>(std::move(config))) {
  thread_ = std::thread([this] { loop(); });
}

ModbusMeter::~ModbusMeter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool ModbusMeter::read_async(Done done) {
  {
    std::lock_guard lock(mu_);
    if (busy_ || stopping_) return false;
    busy_ = true;
    pending_ = std::move(done);
  }
  cv_.notify_all();
  return true;
}

ModbusMeterStats ModbusMeter::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void ModbusMeter::loop() {
  for (;;) {
    Done done;
    ModbusMeterStats s;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || pending_.has_value(); });
      if (stopping_) return;
      done = std::move(*pending_);
      pending_.reset();
      s = stats_;
    }
    auto reading = impl_->read(s);
    if (reading) ++s.readings;
    else ++s.errors;
    s.connected = impl_->connected;
    {
      std::lock_guard lock(mu_);
      stats_ = s;
      busy_ = false;
    }
    done(std::move(reading));
  }
}

}  // namespace pqot::srup_device
