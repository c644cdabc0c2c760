// Batched reads of Modbus points (docs/srmcpd-modbus.md, "How requests reach a device").
#include "pqot/modbus/batch.hpp"

#include <gtest/gtest.h>

using namespace pqot::modbus;

namespace {

Point reg(std::uint16_t address, std::uint16_t count = 1, Table t = Table::holding_register) {
  Point p;
  p.table = t;
  p.address = address;
  p.count = count;
  p.type = count == 2 ? DataType::uint32 : DataType::uint16;
  if (is_bit_table(t)) p.type = DataType::boolean;
  return p;
}

std::vector<ReadSpan> plan(const std::vector<Point>& points, std::uint16_t max_registers = kMaxReadRegisters) {
  std::vector<const Point*> ptrs;
  for (const auto& p : points) ptrs.push_back(&p);
  return plan_reads(ptrs, max_registers);
}

}  // namespace

TEST(ModbusBatch, ContiguousAndOverlappingPointsShareOneRead) {
  const auto spans = plan({reg(12, 2), reg(10), reg(11), reg(13)});
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].start, 10);
  EXPECT_EQ(spans[0].count, 4);
  EXPECT_EQ(spans[0].members, (std::vector<std::size_t>{1, 2, 0, 3}));  // by address
}

TEST(ModbusBatch, GapsTablesAndLimitsStartNewReads) {
  const auto spans = plan({reg(0), reg(5), reg(1, 1, Table::input_register), reg(0, 1, Table::coil)});
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].table, Table::coil);
  EXPECT_EQ(spans[1].start, 0);
  EXPECT_EQ(spans[2].start, 5);
  EXPECT_EQ(spans[3].table, Table::input_register);
  const auto limited = plan({reg(0, 2), reg(2, 2), reg(4, 2)}, 4);
  ASSERT_EQ(limited.size(), 2u);
  EXPECT_EQ(limited[0].count, 4);
  EXPECT_EQ(limited[1].start, 4);
}

TEST(ModbusBatch, BitsBatchUpToTheFunctionCodeLimit) {
  std::vector<Point> bits;
  for (std::uint16_t a = 0; a < kMaxReadBits + 1; ++a) bits.push_back(reg(a, 1, Table::discrete_input));
  const auto spans = plan(bits, 1);  // the register limit does not apply to bits
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].count, kMaxReadBits);
  EXPECT_EQ(spans[1].count, 1);
}

TEST(ModbusBatch, NoPointsNoReads) { EXPECT_TRUE(plan({}).empty()); }
