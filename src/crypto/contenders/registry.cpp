// The registry of comparison contenders (include/pqot/crypto/contender_kem.hpp).
#include <array>
#include <string>

#include "ntru/ntru_kem.hpp"
#include "pqot/crypto/contender_kem.hpp"
#include "pqot/crypto/error.hpp"
#include "saber/saber_kem.hpp"

namespace pqot::crypto {

namespace {

constexpr std::array<std::string_view, 7> kNames = {
    "NTRU-HPS-2048-509", "NTRU-HPS-2048-677", "NTRU-HPS-4096-821", "NTRU-HRSS-701",
    "LightSaber",        "Saber",             "FireSaber"};

std::string joined(std::span<const std::string_view> names) {
  std::string s;
  for (auto n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

const Kem* find_contender(std::string_view name) {
  static const ntru::NtruKem hps509(ntru::ParameterSet::hps2048509);
  static const ntru::NtruKem hps677(ntru::ParameterSet::hps2048677);
  static const ntru::NtruKem hps821(ntru::ParameterSet::hps4096821);
  static const ntru::NtruKem hrss701(ntru::ParameterSet::hrss701);
  static const saber::SaberKem light(saber::Level::light_saber);
  static const saber::SaberKem saber(saber::Level::saber);
  static const saber::SaberKem fire(saber::Level::fire_saber);
  static const std::array<const Kem*, 7> all = {&hps509, &hps677, &hps821, &hrss701,
                                                &light,  &saber,  &fire};
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return all[i];
  }
  return nullptr;
}

}  // namespace

std::span<const std::string_view> contender_kem_names() noexcept { return kNames; }

const Kem& contender_kem_by_name(std::string_view name) {
  if (const Kem* kem = find_contender(name)) return *kem;
  throw Error(ErrorCode::unknown_algorithm, "unknown comparison KEM '" + std::string(name) +
                                                "' (known: " + joined(kNames) + ")");
}

const Kem& any_kem_by_name(std::string_view name) {
  if (const Kem* kem = find_contender(name)) return *kem;
  try {
    return kem_by_name(name);
  } catch (const Error&) {
    throw Error(ErrorCode::unknown_algorithm,
                "unknown KEM '" + std::string(name) + "' (known: " + joined(kem_names()) +
                    "; comparison only: " + joined(kNames) + ")");
  }
}

std::string contender_warning(const Kem& kem) {
  return "warning: " + std::string(kem.name()) +
         " is a NIST round-3 candidate that was not standardized; pqot keeps it only as a "
         "comparison contender (use ML-KEM)";
}

}  // namespace pqot::crypto
