// The C2 control protocol's request parser (docs/srup-c2.md, "Control socket").
#include "control_protocol.hpp"

#include <gtest/gtest.h>

namespace pqot::srup_c2 {
namespace {

// The error text of a request the parser must refuse.
std::string control_refusal(const std::string& line) {
  try {
    parse_control_request(line);
  } catch (const ControlError& e) {
    EXPECT_EQ(e.code(), ControlErrorCode::bad_request);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << line;
  return {};
}

TEST(SrupC2Control, ParsesAnActionWithATypedArgument) {
  const auto r = parse_control_request(
      R"({"cmd":"action","device":"dev-00000000000000A1","action":7,"arg":{"type":"float32","text":"21.5"},"wait_ms":5000})");
  const auto& c = std::get<SendCommand>(r);
  EXPECT_EQ(c.type, srup::MessageType::action);
  EXPECT_EQ(c.device, 0xa1u);
  EXPECT_EQ(c.wait_ms, 5000u);
  const auto& a = std::get<srup::Action>(c.body);
  EXPECT_EQ(a.action_id, 7);
  EXPECT_EQ(std::get<float>(a.argument), 21.5f);
}

TEST(SrupC2Control, ParsesTheOtherCommands) {
  const auto code = std::get<JoinCode>(parse_control_request(
      R"({"cmd":"join-code","device":"a1","code":"0011 2233-4455 6677 8899 aabb ccdd eeff"})"));
  EXPECT_EQ(code.code[0], 0x00);
  EXPECT_EQ(code.code[15], 0xff);
  const auto up = std::get<SendCommand>(parse_control_request(
      R"({"cmd":"update","device":"a1","url":"http://h/f","sha256":")" + std::string(64, 'a') +
      R"(","activate":false})"));
  EXPECT_EQ(up.type, srup::MessageType::update_initiate);
  EXPECT_FALSE(up.activate);
  EXPECT_EQ(std::get<srup::UpdateInitiate>(up.body).digest[31], 0xaa);
  const auto data = std::get<SendCommand>(parse_control_request(R"({"cmd":"data","device":"a1","id":"setpoint"})"));
  EXPECT_TRUE(std::holds_alternative<std::monostate>(std::get<srup::Data>(data.body).value));
  const auto enrol = std::get<Enrol>(parse_control_request(
      R"({"cmd":"enrol","public_identity":"P","csr":"C","type":"meter","join":"observed","observer":"b2"})"));
  EXPECT_EQ(enrol.join, "observed");
  EXPECT_EQ(*enrol.observer, 0xb2u);
  EXPECT_FALSE(enrol.monitor);
  EXPECT_TRUE(std::get<Enrol>(parse_control_request(R"({"cmd":"enrol-monitor","public_identity":"P","csr":"C"})")).monitor);
  const auto list = std::get<ListCommands>(parse_control_request(R"({"cmd":"commands","state":"pending"})"));
  EXPECT_EQ(list.limit, 100u);
  EXPECT_FALSE(list.device.has_value());
  EXPECT_FALSE(std::get<Authorize>(parse_control_request(R"({"cmd":"revoke","monitor":"c1","device":"a1"})")).allow);
}

TEST(SrupC2Control, RefusesWhatIsNotARequestNamingTheField) {
  EXPECT_NE(control_refusal("not json").find("one JSON object"), std::string::npos);
  EXPECT_NE(control_refusal("[1]").find("one JSON object"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"reboot-everything"})").find("unknown cmd"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"device"})").find("'device'"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"device","device":"0"})").find("hex digits"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"device","device":"ffffffffffffffff"})").find("hex digits"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"device","device":"a1","extra":1})").find("unknown field 'extra'"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"action","device":"a1","action":256})").find("0..255"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"action","device":"a1","action":-1})").find("non-negative"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"action","device":"a1","action":1,"arg":{"type":"int8","text":"300"}})").find("'arg'"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"action","device":"a1","action":1,"wait_ms":600001})").find("wait_ms"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"join-code","device":"a1","code":"00"})").find("32 hex digits"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"enrol","public_identity":"P","csr":"C","type":"a b"})").find("'type'"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"enrol","public_identity":"P","csr":"C","type":"m","observer":"b2"})").find("observer"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"backup","path":"relative/file"})").find("absolute"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"command","token":"abc"})").find("hex digits"), std::string::npos);
  EXPECT_NE(control_refusal(R"({"cmd":"status","x":[[[[[[1]]]]]]})").find("nested"), std::string::npos);
  EXPECT_NE(control_refusal(std::string(kMaxRequestLine + 1, ' ')).find("longer"), std::string::npos);
  // Invalid UTF-8 never reaches a field: the JSON parser refuses the line.
  EXPECT_NE(control_refusal("{\"cmd\":\"data\",\"device\":\"a1\",\"id\":\"\xff\"}").find("JSON"), std::string::npos);
}

TEST(SrupC2Control, AnswersAreOneJsonLine) {
  const std::string ok = format_result({{"devices", 2}});
  EXPECT_EQ(ok, "{\"ok\":true,\"result\":{\"devices\":2}}\n");
  const std::string err = format_error(ControlErrorCode::not_found, "no device 00000000000000a1");
  EXPECT_EQ(err.back(), '\n');
  const auto j = nlohmann::json::parse(err);
  EXPECT_EQ(j["code"], "not_found");
  EXPECT_EQ(parse_peer_id("mon-00000000000000A1"), 0xa1u);
  EXPECT_FALSE(parse_peer_id("00000000000000a1x").has_value());
}

}  // namespace
}  // namespace pqot::srup_c2
