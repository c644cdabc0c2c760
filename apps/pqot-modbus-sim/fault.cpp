#include "fault.hpp"

#include <array>
#include <stdexcept>

namespace pqot::modbus_sim {

namespace {

struct Named {
  FaultKind kind;
  std::string_view name;
};

constexpr std::array<Named, 6> kNames{{{FaultKind::none, "none"},
                                       {FaultKind::exception, "exception"},
                                       {FaultKind::drop, "drop"},
                                       {FaultKind::slow, "slow"},
                                       {FaultKind::wrong_tid, "wrong-tid"},
                                       {FaultKind::refuse, "refuse"}}};

}  // namespace

std::string_view fault_name(FaultKind kind) {
  for (const auto& n : kNames) {
    if (n.kind == kind) return n.name;
  }
  return "?";
}

std::optional<FaultKind> parse_fault_kind(std::string_view text) {
  for (const auto& n : kNames) {
    if (n.name == text) return n.kind;
  }
  return std::nullopt;
}

std::string fault_names() {
  std::string out;
  for (const auto& n : kNames) {
    if (!out.empty()) out += ", ";
    out += n.name;
  }
  return out;
}

std::string Fault::describe() const {
  if (kind == FaultKind::none) return "fault none";
  return "fault " + std::string(fault_name(kind)) + (on ? " on" : " off");
}

void bump_transaction_id(std::span<std::uint8_t> adu) {
  if (adu.size() < 2) throw std::invalid_argument("bump_transaction_id: ADU shorter than 2 bytes");
  const auto tid = static_cast<std::uint16_t>(((adu[0] << 8) | adu[1]) + 1);
  adu[0] = static_cast<std::uint8_t>(tid >> 8);
  adu[1] = static_cast<std::uint8_t>(tid & 0xFF);
}

}  // namespace pqot::modbus_sim
