// Batched reads of Modbus points (docs/srmcpd-modbus.md, "Batching"): which requests cover which
// points. Points of one table at contiguous or overlapping addresses share one read, up to the
// function code's limit (FC03/04: a register count; FC01/02: kMaxReadBits). No I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pqot/modbus/point.hpp"

namespace pqot::modbus {

/// One read request and the points it answers.
struct ReadSpan {
  Table table = Table::holding_register;
  std::uint16_t start = 0;  ///< first register or bit
  std::uint16_t count = 0;  ///< registers or bits
  std::vector<std::size_t> members;  ///< indices into the planned points, by address
};

/// Covers `points` (each valid, see check()) with as few reads as contiguous addresses allow: by
/// table and address, a point joins the current read if it starts at or before the read's end
/// and the read stays within `max_registers` (register tables) or kMaxReadBits (bit tables).
/// Points at the same address keep their order.
std::vector<ReadSpan> plan_reads(std::span<const Point* const> points, std::uint16_t max_registers);

}  // namespace pqot::modbus
