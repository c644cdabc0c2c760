// Modbus TCP framing and PDUs (include/pqot/modbus/pdu.hpp): requests byte for byte as the
// Application Protocol V1.1b3 gives them, and answers checked against their requests.
#include "pqot/modbus/pdu.hpp"

#include <gtest/gtest.h>

#include <vector>

// A namespace of its own: this file shares a unity batch with others (docs/architecture.md, "Build").
namespace modbus_pdu_test {

using namespace pqot::modbus;
using B = std::vector<std::uint8_t>;

B header(std::uint16_t tid, std::uint16_t protocol, std::uint16_t length, std::uint8_t unit) {
  return {static_cast<std::uint8_t>(tid >> 8), static_cast<std::uint8_t>(tid),
          static_cast<std::uint8_t>(protocol >> 8), static_cast<std::uint8_t>(protocol),
          static_cast<std::uint8_t>(length >> 8), static_cast<std::uint8_t>(length), unit};
}

TEST(ModbusPdu, RequestsAreFramedWithTheirTransactionAndUnit_Guide_3_1_3) {
  const B pdu = read_request(Table::holding_register, 0x006B, 3);
  EXPECT_EQ(pdu, (B{0x03, 0x00, 0x6B, 0x00, 0x03}));
  EXPECT_EQ(frame_request(0x1234, 17, pdu), (B{0x12, 0x34, 0x00, 0x00, 0x00, 0x06, 0x11, 0x03, 0x00, 0x6B, 0x00, 0x03}));
}

TEST(ModbusPdu, ReadRequestsUseTheTablesFunctionCodes_6_1_to_6_4) {
  EXPECT_EQ(read_request(Table::coil, 19, 19), (B{0x01, 0x00, 0x13, 0x00, 0x13}));
  EXPECT_EQ(read_request(Table::discrete_input, 196, 22), (B{0x02, 0x00, 0xC4, 0x00, 0x16}));
  EXPECT_EQ(read_request(Table::input_register, 8, 1), (B{0x04, 0x00, 0x08, 0x00, 0x01}));
}

TEST(ModbusPdu, WriteRequestsAreFc05Fc06AndFc16_6_5_6_6_6_12) {
  const std::vector<std::uint16_t> on{1}, one{0x0003}, two{0x000A, 0x0102};
  EXPECT_EQ(write_request(Table::coil, 172, on), (B{0x05, 0x00, 0xAC, 0xFF, 0x00}));
  EXPECT_EQ(write_request(Table::holding_register, 1, one), (B{0x06, 0x00, 0x01, 0x00, 0x03}));
  EXPECT_EQ(write_request(Table::holding_register, 1, two),
            (B{0x10, 0x00, 0x01, 0x00, 0x02, 0x04, 0x00, 0x0A, 0x01, 0x02}));
}

TEST(ModbusPdu, HeaderBoundsTheAnnouncedLength_Guide_3_1_3) {
  const auto h = parse_mbap_header(header(7, 0, 6, 1));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->transaction_id, 7);
  EXPECT_EQ(h->unit, 1);
  EXPECT_EQ(h->pdu_size, 5);
  EXPECT_TRUE(parse_mbap_header(header(7, 0, 254, 1)));   // 253 PDU bytes: the largest
  EXPECT_FALSE(parse_mbap_header(header(7, 0, 255, 1)));  // one more
  EXPECT_FALSE(parse_mbap_header(header(7, 0, 0xFFFF, 1)));
  EXPECT_FALSE(parse_mbap_header(header(7, 0, 1, 1)));    // a unit id without a function code
  EXPECT_FALSE(parse_mbap_header(header(7, 0, 0, 1)));
  EXPECT_FALSE(parse_mbap_header(header(7, 1, 6, 1)));    // not the Modbus protocol
  EXPECT_FALSE(parse_mbap_header(B{0, 0, 0, 0, 0, 6}));  // short
}

TEST(ModbusPdu, RegisterReadAnswerGivesTheRegisters_6_3) {
  const auto a = decode_read_response(Table::holding_register, 3, B{0x03, 0x06, 0x02, 0x2B, 0x00, 0x00, 0x00, 0x64});
  ASSERT_EQ(a.kind, Answer::Kind::ok) << a.why;
  EXPECT_EQ(a.regs, (std::vector<std::uint16_t>{0x022B, 0x0000, 0x0064}));
}

TEST(ModbusPdu, BitReadAnswerUnpacksLeastSignificantBitFirst_6_1) {
  // The specification's example: coils 20..38 are CD 6B 05.
  const auto a = decode_read_response(Table::coil, 19, B{0x01, 0x03, 0xCD, 0x6B, 0x05});
  ASSERT_EQ(a.kind, Answer::Kind::ok) << a.why;
  const std::vector<std::uint8_t> want{1, 0, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1};
  EXPECT_EQ(a.bits, want);
}

TEST(ModbusPdu, ReadAnswerWithAnotherLengthOrFunctionIsMalformed) {
  const auto kind = [](Table t, std::uint16_t count, const B& pdu) { return decode_read_response(t, count, pdu).kind; };
  using K = Answer::Kind;
  EXPECT_EQ(kind(Table::holding_register, 2, B{0x03, 0x02, 0x00, 0x01}), K::malformed);              // one register short
  EXPECT_EQ(kind(Table::holding_register, 1, B{0x03, 0x02, 0x00, 0x01, 0x00}), K::malformed);        // a byte after
  EXPECT_EQ(kind(Table::holding_register, 1, B{0x03, 0x04, 0x00, 0x01}), K::malformed);              // count says 4
  EXPECT_EQ(kind(Table::holding_register, 1, B{0x04, 0x02, 0x00, 0x01}), K::malformed);              // FC04 for FC03
  EXPECT_EQ(kind(Table::coil, 9, B{0x01, 0x01, 0xFF}), K::malformed);                               // 9 bits need 2 bytes
  EXPECT_EQ(kind(Table::holding_register, 1, B{}), K::malformed);
  EXPECT_EQ(kind(Table::holding_register, 1, B{0x03}), K::malformed);
}

TEST(ModbusPdu, ExceptionAnswersCarryTheirCode_7) {
  const auto a = decode_read_response(Table::input_register, 1, B{0x84, 0x02});
  EXPECT_EQ(a.kind, Answer::Kind::exception);
  EXPECT_EQ(a.exception_code, 2);
  EXPECT_EQ(decode_read_response(Table::input_register, 1, B{0x83, 0x02}).kind, Answer::Kind::malformed);  // another FC's
  EXPECT_EQ(decode_read_response(Table::input_register, 1, B{0x84, 0x02, 0x00}).kind, Answer::Kind::malformed);
  EXPECT_EQ(decode_read_response(Table::input_register, 1, B{0x84, 0x00}).kind, Answer::Kind::malformed);
  const B write = write_request(Table::holding_register, 5, std::vector<std::uint16_t>{1});
  EXPECT_EQ(decode_write_response(write, B{0x86, 0x03}).kind, Answer::Kind::exception);
}

TEST(ModbusPdu, WriteAnswersMustEchoTheRequest_6_5_6_6_6_12) {
  const std::vector<std::uint16_t> one{0x0003}, two{0x000A, 0x0102};
  const B single = write_request(Table::holding_register, 1, one);
  EXPECT_EQ(decode_write_response(single, single).kind, Answer::Kind::ok);
  EXPECT_EQ(decode_write_response(single, B{0x06, 0x00, 0x01, 0x00, 0x04}).kind, Answer::Kind::malformed);
  const B multiple = write_request(Table::holding_register, 1, two);
  EXPECT_EQ(decode_write_response(multiple, B{0x10, 0x00, 0x01, 0x00, 0x02}).kind, Answer::Kind::ok);
  EXPECT_EQ(decode_write_response(multiple, B{0x10, 0x00, 0x01, 0x00, 0x03}).kind, Answer::Kind::malformed);
  EXPECT_EQ(decode_write_response(multiple, multiple).kind, Answer::Kind::malformed);
}

}  // namespace modbus_pdu_test
