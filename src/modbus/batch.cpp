// Batched reads of Modbus points: the greedy cover of sorted addresses (docs/srmcpd-modbus.md).
#include "pqot/modbus/batch.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace pqot::modbus {

std::vector<ReadSpan> plan_reads(std::span<const Point* const> points, std::uint16_t max_registers) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::pair(points[a]->table, points[a]->address) < std::pair(points[b]->table, points[b]->address);
  });
  std::vector<ReadSpan> spans;
  std::size_t i = 0;
  while (i < order.size()) {
    const Point& first = *points[order[i]];
    const std::uint32_t limit = is_bit_table(first.table) ? kMaxReadBits : max_registers;
    std::uint32_t span_end = first.address + first.count;
    ReadSpan span;
    span.table = first.table;
    span.start = first.address;
    span.members.push_back(order[i]);
    std::size_t j = i + 1;
    while (j < order.size()) {
      const Point& p = *points[order[j]];
      const std::uint32_t new_end = std::max<std::uint32_t>(span_end, p.address + p.count);
      if (p.table != first.table || p.address > span_end || new_end - first.address > limit) break;
      span_end = new_end;
      span.members.push_back(order[j]);
      ++j;
    }
    span.count = static_cast<std::uint16_t>(span_end - first.address);
    spans.push_back(std::move(span));
    i = j;
  }
  return spans;
}

}  // namespace pqot::modbus
