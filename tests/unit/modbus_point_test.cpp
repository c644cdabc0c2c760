// Modbus point layouts and conversions (docs/srmcpd-modbus.md, "Node mapping").
#include "pqot/modbus/point.hpp"

#include <gtest/gtest.h>

#include <limits>

using namespace pqot::modbus;

namespace {

Point point(DataType type, std::uint16_t count, Order words = Order::big, Order bytes = Order::big) {
  Point p;
  p.type = type;
  p.count = count;
  p.word_order = words;
  p.byte_order = bytes;
  return p;
}

std::vector<std::uint16_t> regs_of(const Encoded& e) {
  EXPECT_TRUE(std::holds_alternative<std::vector<std::uint16_t>>(e)) << std::get<std::string>(e);
  return std::get<std::vector<std::uint16_t>>(e);
}

}  // namespace

TEST(ModbusPoint, NamesRoundTrip) {
  for (auto t : {Table::coil, Table::discrete_input, Table::holding_register, Table::input_register}) {
    EXPECT_EQ(parse_table(table_name(t)), t);
  }
  EXPECT_FALSE(parse_table("holding_register"));
  for (auto t : {DataType::boolean, DataType::int16, DataType::uint16, DataType::int32, DataType::uint32,
                 DataType::float32, DataType::float64, DataType::string}) {
    EXPECT_EQ(parse_data_type(data_type_name(t)), t);
  }
  EXPECT_FALSE(parse_data_type("int64"));
}

TEST(ModbusPoint, CheckRejectsInconsistentPoints) {
  EXPECT_EQ(check(point(DataType::int32, 2)), "");
  EXPECT_NE(check(point(DataType::int32, 1)), "");  // count does not match the type
  Point coil = point(DataType::uint16, 1);
  coil.table = Table::coil;
  EXPECT_NE(check(coil), "");  // a coil holds bool only
  coil.type = DataType::boolean;
  EXPECT_EQ(check(coil), "");
  Point high = point(DataType::float64, 4);
  high.address = 65533;
  EXPECT_NE(check(high), "");  // 65533..65536
  high.address = 65532;
  EXPECT_EQ(check(high), "");
  Point zero = point(DataType::int16, 1);
  zero.scale = 0.0;
  EXPECT_NE(check(zero), "");
  zero.scale = std::numeric_limits<double>::infinity();
  EXPECT_NE(check(zero), "");
  Point s = point(DataType::string, 0);
  EXPECT_NE(check(s), "");
  s.count = kMaxStringRegisters + 1;
  EXPECT_NE(check(s), "");
  s.count = 8;
  EXPECT_EQ(check(s), "");
  s.scale = 2.0;
  EXPECT_NE(check(s), "");  // scale on a string
}

TEST(ModbusPoint, ValueKinds) {
  EXPECT_EQ(value_kind(point(DataType::int16, 1)), ValueKind::integer);
  Point scaled = point(DataType::int16, 1);
  scaled.scale = 0.1;
  EXPECT_EQ(value_kind(scaled), ValueKind::real);
  EXPECT_EQ(value_kind(point(DataType::float32, 2)), ValueKind::real);
  EXPECT_EQ(value_kind(point(DataType::boolean, 1)), ValueKind::boolean);
  EXPECT_EQ(value_kind(point(DataType::string, 4)), ValueKind::string);
  EXPECT_TRUE(value_matches(ValueKind::real, Json(3)));  // a real accepts any number
  EXPECT_FALSE(value_matches(ValueKind::integer, Json(3.5)));
}

TEST(ModbusPoint, Int16AndUint16) {
  const std::vector<std::uint16_t> r{0xfffe};
  EXPECT_EQ(decode_registers(point(DataType::int16, 1), r), Json(-2));
  EXPECT_EQ(decode_registers(point(DataType::uint16, 1), r), Json(65534));
  EXPECT_EQ(regs_of(encode(point(DataType::int16, 1), Json(-2))), r);
  EXPECT_TRUE(std::holds_alternative<std::string>(encode(point(DataType::int16, 1), Json(32768))));
  EXPECT_TRUE(std::holds_alternative<std::string>(encode(point(DataType::uint16, 1), Json(-1))));
  // Byte order "little" swaps the bytes of each register.
  EXPECT_EQ(decode_registers(point(DataType::uint16, 1, Order::big, Order::little), std::vector<std::uint16_t>{0x3412}),
            Json(0x1234));
}

TEST(ModbusPoint, WordAndByteOrdersOf32BitValues) {
  // 0x12345678 in the four layouts devices use: ABCD, CDAB, BADC, DCBA.
  const std::vector<std::pair<Point, std::vector<std::uint16_t>>> layouts = {
      {point(DataType::uint32, 2, Order::big, Order::big), {0x1234, 0x5678}},
      {point(DataType::uint32, 2, Order::little, Order::big), {0x5678, 0x1234}},
      {point(DataType::uint32, 2, Order::big, Order::little), {0x3412, 0x7856}},
      {point(DataType::uint32, 2, Order::little, Order::little), {0x7856, 0x3412}},
  };
  for (const auto& [p, regs] : layouts) {
    EXPECT_EQ(decode_registers(p, regs), Json(0x12345678));
    EXPECT_EQ(regs_of(encode(p, Json(0x12345678))), regs);
  }
  EXPECT_EQ(decode_registers(point(DataType::int32, 2), std::vector<std::uint16_t>{0xffff, 0xfffd}), Json(-3));
}

TEST(ModbusPoint, Floats) {
  // 230.5f = 0x43668000
  EXPECT_EQ(decode_registers(point(DataType::float32, 2), std::vector<std::uint16_t>{0x4366, 0x8000}), Json(230.5));
  EXPECT_EQ(regs_of(encode(point(DataType::float32, 2), Json(230.5))), (std::vector<std::uint16_t>{0x4366, 0x8000}));
  // A float32 reads as the shortest decimal that gives the same float (230.54f = 0x43668A3D).
  EXPECT_EQ(decode_registers(point(DataType::float32, 2), std::vector<std::uint16_t>{0x4366, 0x8a3d}), Json(230.54));
  // 12345.25 = 0x40C81CA000000000
  const std::vector<std::uint16_t> d{0x40c8, 0x1ca0, 0x0000, 0x0000};
  EXPECT_EQ(decode_registers(point(DataType::float64, 4), d), Json(12345.25));
  EXPECT_EQ(regs_of(encode(point(DataType::float64, 4), Json(12345.25))), d);
  const std::vector<std::uint16_t> d_le{0x0000, 0x0000, 0x1ca0, 0x40c8};
  EXPECT_EQ(decode_registers(point(DataType::float64, 4, Order::little), d_le), Json(12345.25));
  // The largest float reads as 3.4028235e38 (its shortest decimal, a little above FLT_MAX as a
  // double) and writes back as the largest float.
  const std::vector<std::uint16_t> max_float{0x7f7f, 0xffff};
  EXPECT_EQ(regs_of(encode(point(DataType::float32, 2), *decode_registers(point(DataType::float32, 2), max_float))),
            max_float);
  // -0.0 stays -0.0 (and is written back bit for bit).
  const std::vector<std::uint16_t> minus_zero{0x8000, 0x0000, 0x0000, 0x0000};
  EXPECT_EQ(regs_of(encode(point(DataType::float64, 4), *decode_registers(point(DataType::float64, 4), minus_zero))),
            minus_zero);
  // NaN and infinity have no JSON form: no value.
  EXPECT_FALSE(decode_registers(point(DataType::float32, 2), std::vector<std::uint16_t>{0x7fc0, 0x0000}));
  EXPECT_FALSE(decode_registers(point(DataType::float32, 2), std::vector<std::uint16_t>{0x7f80, 0x0000}));
  EXPECT_TRUE(std::holds_alternative<std::string>(encode(point(DataType::float32, 2), Json(1e39))));
}

TEST(ModbusPoint, ScaleAndOffset) {
  Point p = point(DataType::int16, 1);
  p.scale = 0.1;
  EXPECT_NEAR(decode_registers(p, std::vector<std::uint16_t>{1800})->get<double>(), 180.0, 1e-9);
  // Exactly the decimal a person expects, not 201.20000000000002 (2012 × 0.1 in binary).
  EXPECT_EQ(decode_registers(p, std::vector<std::uint16_t>{2012}), Json(201.2));
  EXPECT_EQ(decode_registers(p, std::vector<std::uint16_t>{2012})->dump(), "201.2");
  EXPECT_EQ(regs_of(encode(p, Json(185.5))), std::vector<std::uint16_t>{1855});
  EXPECT_EQ(regs_of(encode(p, Json(-0.26))), std::vector<std::uint16_t>{0xfffd});  // rounds to -3
  EXPECT_TRUE(std::holds_alternative<std::string>(encode(p, Json(3276.8))));       // 32768 after scaling
  Point kelvin = point(DataType::uint16, 1);
  kelvin.scale = 0.01;
  kelvin.offset = -273.15;
  EXPECT_NEAR(decode_registers(kelvin, std::vector<std::uint16_t>{29315})->get<double>(), 20.0, 1e-9);
  EXPECT_EQ(regs_of(encode(kelvin, Json(20.0))), std::vector<std::uint16_t>{29315});
}

TEST(ModbusPoint, Strings) {
  const Point p = point(DataType::string, 4);
  const std::vector<std::uint16_t> regs{0x5051, 0x4f54, 0x2d31, 0x0000};  // "PQOT-1"
  EXPECT_EQ(decode_registers(p, regs), Json("PQOT-1"));
  EXPECT_EQ(regs_of(encode(p, Json("PQOT-1"))), regs);
  EXPECT_EQ(decode_registers(point(DataType::string, 2, Order::big, Order::little), std::vector<std::uint16_t>{0x5150, 0x0000}),
            Json("PQ"));
  // Non-printable bytes from a device never reach the client as such.
  EXPECT_EQ(decode_registers(p, std::vector<std::uint16_t>{0x41ff, 0x0a42, 0x4344, 0x4546}), Json("A??BCDEF"));
  EXPECT_TRUE(std::holds_alternative<std::string>(encode(p, Json("123456789"))));  // 9 > 8 characters
  EXPECT_TRUE(std::holds_alternative<std::string>(encode(p, Json("caf\xc3\xa9"))));
}

TEST(ModbusPoint, Bits) {
  Point coil = point(DataType::boolean, 1);
  coil.table = Table::coil;
  EXPECT_EQ(regs_of(encode(coil, Json(true))), std::vector<std::uint16_t>{1});
  EXPECT_EQ(decode_bit(false), Json(false));
  const Point reg = point(DataType::boolean, 1);
  EXPECT_EQ(decode_registers(reg, std::vector<std::uint16_t>{7}), Json(true));
  EXPECT_TRUE(std::holds_alternative<std::string>(encode(reg, Json(1))));
}

TEST(ModbusPoint, AnyRegistersDecodeToTheNodeType) {
  // Untrusted registers: every pattern gives a value of the node's type, or no value.
  for (auto type : {DataType::int16, DataType::uint16, DataType::int32, DataType::uint32, DataType::float32,
                    DataType::float64, DataType::boolean}) {
    Point p = point(type, registers_of(type));
    for (std::uint32_t seed = 0; seed < 2000; ++seed) {
      std::vector<std::uint16_t> regs(p.count);
      for (auto& r : regs) r = static_cast<std::uint16_t>(seed * 40503u + (&r - regs.data()) * 977u);
      const auto v = decode_registers(p, regs);
      if (v) {
        EXPECT_TRUE(value_matches(value_kind(p), *v)) << data_type_name(type) << " " << v->dump();
      }
    }
  }
}
