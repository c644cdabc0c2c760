// The meter readings of `srup bench-payload`: realistic, varying values from a fixed seed, and
// their two encodings (the paper's JSON text, SRUP-PQ's telemetry channels); base64, for the
// paper's RSA chunks.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <ctime>
#include <random>
#include <stdexcept>

#include "bench_payload.hpp"

namespace pqot::srup_tool::payload {

namespace {

constexpr std::uint64_t kFirstTimestamp = 1'796'083'200;  // 2026-12-01T00:00:00Z
constexpr std::uint64_t kIntervalS = 10;
constexpr double kPi = 3.14159265358979323846;

double round_to(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

// Household load over the day (W): a night base, a morning and a larger evening peak.
double daily_curve(std::uint64_t t) {
  const double hour = static_cast<double>(t % 86'400) / 3600.0;
  const double morning = std::exp(-std::pow((hour - 7.5) / 1.2, 2));
  const double evening = std::exp(-std::pow((hour - 19.0) / 2.0, 2));
  return 250.0 + 900.0 * morning + 1600.0 * evening + 150.0 * std::sin(2 * kPi * hour / 24.0);
}

// Python's repr() of a float: the shortest text that reads back, with ".0" for whole numbers.
void append_float(std::string& out, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  if (r.ec != std::errc{}) throw std::logic_error("bench-payload: to_chars");
  std::string_view text(buf, static_cast<std::size_t>(r.ptr - buf));
  out += text;
  if (text.find_first_of(".en") == std::string_view::npos) out += ".0";
}

void append_field(std::string& out, std::string_view key, double v) {
  out += out.size() > 1 ? ", \"" : "\"";
  out += key;
  out += "\": ";
  append_float(out, v);
}

std::string iso_time(std::uint64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[40];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
  return std::string(buf, n);
}

}  // namespace

std::vector<MeterReading> make_readings(Phases phases, std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ static_cast<std::uint64_t>(phases));
  std::normal_distribution<double> noise(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::size_t n_phases = phases == Phases::one ? 1 : 3;
  double voltage[3] = {230.8, 229.6, 231.3};
  double frequency = 50.0;
  double import_kwh = phases == Phases::one ? 4'211.337 : 18'734.902;
  double export_kwh = phases == Phases::one ? 0.0 : 1'204.55;
  double kettle_left[3] = {0, 0, 0};  // seconds of a 2 kW appliance still running, per phase
  std::vector<MeterReading> out;
  out.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    MeterReading r;
    r.phases = phases;
    r.timestamp_s = kFirstTimestamp + 8 * 3600 + 60 + i * kIntervalS;  // from 08:01, a busy morning
    frequency = std::clamp(frequency + 0.004 * noise(rng) - 0.05 * (frequency - 50.0), 49.9, 50.1);
    r.frequency = round_to(frequency, 2);
    double p_total = 0, q_total = 0, s_total = 0;
    for (std::size_t ph = 0; ph < n_phases; ++ph) {
      voltage[ph] =
          std::clamp(voltage[ph] + 0.3 * noise(rng) - 0.02 * (voltage[ph] - 230.0), 216.0, 248.0);
      if (kettle_left[ph] <= 0 && unit(rng) < 0.02) kettle_left[ph] = 120 + 60 * unit(rng);
      double p = daily_curve(r.timestamp_s) / static_cast<double>(n_phases) *
                     (0.8 + 0.1 * static_cast<double>(ph)) +
                 40.0 * noise(rng);
      if (kettle_left[ph] > 0) {
        p += 2000.0;
        kettle_left[ph] -= kIntervalS;
      }
      p = std::max(p, 15.0);
      const double pf =
          std::clamp(0.80 + 0.18 * std::min(1.0, p / 1500.0) + 0.01 * noise(rng), 0.5, 0.999);
      const double v = round_to(voltage[ph], 1);
      const double current = p / (v * pf);
      r.voltage[ph] = v;
      r.current[ph] = round_to(current, 3);
      r.active_power[ph] = round_to(p, 1);
      r.power_factor[ph] = round_to(pf, 3);
      const double s = v * current;
      p_total += p;
      s_total += s;
      q_total += std::sqrt(std::max(0.0, s * s - p * p));
    }
    import_kwh += p_total * kIntervalS / 3.6e6;
    if (phases == Phases::three && unit(rng) < 0.1) export_kwh += 0.001;  // a little rooftop PV
    r.total_active_power = round_to(p_total, 1);
    r.total_reactive_power = round_to(q_total, 1);
    r.total_apparent_power = round_to(s_total, 1);
    r.energy_import_kwh = round_to(import_kwh, 3);
    r.energy_export_kwh = round_to(export_kwh, 3);
    out.push_back(r);
  }
  return out;
}

std::string reading_json(const MeterReading& r) {
  std::string out = "{";
  if (r.phases == Phases::one) {
    out += "\"meter_id\": \"SDM120-000117\", \"timestamp\": \"" + iso_time(r.timestamp_s) + "\"";
    append_field(out, "voltage", r.voltage[0]);
    append_field(out, "current", r.current[0]);
    append_field(out, "active_power", r.active_power[0]);
    append_field(out, "reactive_power", r.total_reactive_power);
    append_field(out, "apparent_power", r.total_apparent_power);
    append_field(out, "power_factor", r.power_factor[0]);
    append_field(out, "frequency", r.frequency);
    append_field(out, "energy_import", r.energy_import_kwh);
    append_field(out, "energy_export", r.energy_export_kwh);
  } else {
    out += "\"meter_id\": \"SDM630-000042\", \"timestamp\": \"" + iso_time(r.timestamp_s) + "\"";
    static constexpr std::string_view kL[3] = {"l1", "l2", "l3"};
    for (std::size_t ph = 0; ph < 3; ++ph)
      append_field(out, "voltage_" + std::string(kL[ph]), r.voltage[ph]);
    for (std::size_t ph = 0; ph < 3; ++ph)
      append_field(out, "current_" + std::string(kL[ph]), r.current[ph]);
    for (std::size_t ph = 0; ph < 3; ++ph)
      append_field(out, "power_" + std::string(kL[ph]), r.active_power[ph]);
    for (std::size_t ph = 0; ph < 3; ++ph)
      append_field(out, "pf_" + std::string(kL[ph]), r.power_factor[ph]);
    append_field(out, "total_power", r.total_active_power);
    append_field(out, "total_reactive_power", r.total_reactive_power);
    append_field(out, "total_apparent_power", r.total_apparent_power);
    append_field(out, "frequency", r.frequency);
    append_field(out, "energy_import", r.energy_import_kwh);
    append_field(out, "energy_export", r.energy_export_kwh);
  }
  out += "}";
  return out;
}

srup::Reading reading_channels(const MeterReading& r) {
  // docs/srup-pq.md 5.3: electrical quantities as float32, energies (Wh) as float64.
  srup::Reading out;
  out.timestamp_ms = r.timestamp_s * 1000;
  const std::size_t n = r.phases == Phases::one ? 1 : 3;
  auto add = [&](std::uint16_t ch, srup::Value v) { out.channels.push_back({ch, std::move(v)}); };
  for (std::size_t ph = 0; ph < n; ++ph)
    add(static_cast<std::uint16_t>(0x0101 + ph), static_cast<float>(r.voltage[ph]));
  for (std::size_t ph = 0; ph < n; ++ph)
    add(static_cast<std::uint16_t>(0x0111 + ph), static_cast<float>(r.current[ph]));
  for (std::size_t ph = 0; ph < n; ++ph) {
    add(static_cast<std::uint16_t>(0x0121 + ph), static_cast<float>(r.active_power[ph]));
  }
  add(0x0130, static_cast<float>(r.total_active_power));
  add(0x0140, r.energy_import_kwh * 1000.0);
  add(0x0141, r.energy_export_kwh * 1000.0);
  add(0x0150, static_cast<float>(r.frequency));
  add(0x0160, static_cast<float>(r.total_active_power / std::max(r.total_apparent_power, 1.0)));
  if (n == 3) {
    for (std::size_t ph = 0; ph < 3; ++ph) {
      add(static_cast<std::uint16_t>(0x0161 + ph), static_cast<float>(r.power_factor[ph]));
    }
  }
  return out;
}

// ---- base64 (RFC 4648 section 4) -------------------------------------------------------------

namespace {
constexpr std::string_view kB64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
  const auto at = kB64.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}
}  // namespace

std::string base64_encode(ByteView data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < data.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, data.size() - i);
    std::uint32_t v = std::uint32_t{data[i]} << 16;
    if (n > 1) v |= std::uint32_t{data[i + 1]} << 8;
    if (n > 2) v |= data[i + 2];
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += n > 1 ? kB64[(v >> 6) & 63] : '=';
    out += n > 2 ? kB64[v & 63] : '=';
  }
  return out;
}

Bytes base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) throw std::invalid_argument("base64: length not a multiple of 4");
  Bytes out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const std::size_t pad = last ? (text[i + 3] == '=' ? (text[i + 2] == '=' ? 2 : 1) : 0) : 0;
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int d = k >= 4 - pad ? 0 : b64_value(text[i + k]);
      if (d < 0) throw std::invalid_argument("base64: not a base64 character");
      v = (v << 6) | static_cast<std::uint32_t>(d);
    }
    // Canonical: the bits the padding drops must be zero.
    if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0)) {
      throw std::invalid_argument("base64: non-canonical padding");
    }
    out.push_back(static_cast<std::uint8_t>(v >> 16));
    if (pad < 2) out.push_back(static_cast<std::uint8_t>(v >> 8));
    if (pad < 1) out.push_back(static_cast<std::uint8_t>(v));
  }
  return out;
}

}  // namespace pqot::srup_tool::payload
