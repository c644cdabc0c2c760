// SRUP-PQ's MQTT topics (docs/srup-mqtt.md, section 2): spelled in one place, parsed strictly.
#include "pqot/srup/topics.hpp"

#include <gtest/gtest.h>

namespace pqot::srup {
namespace {

TEST(SrupTopics, SpellsTheTopicsOfTheBinding) {
  EXPECT_EQ(topic_to_device(0xa1), "srup/00000000000000a1/c2");
  EXPECT_EQ(topic_from_device(0xa1), "srup/00000000000000a1/dev");
  EXPECT_EQ(topic_telemetry(0xa1), "srup/00000000000000a1/tm");
  EXPECT_EQ(topic_telemetry_key(0xa1, 0xc2), "srup/00000000000000a1/tk/00000000000000c2");
  EXPECT_EQ(filter_all_telemetry_keys(0xc2), "srup/+/tk/00000000000000c2");
}

TEST(SrupTopics, ParsesOnlyWhatItSpells) {
  for (const std::uint64_t id : {0x1ULL, 0xa1ULL, 0xfffffffffffffffeULL}) {
    const auto p = parse_topic(topic_telemetry_key(id, 0xc2));
    ASSERT_TRUE(p);
    EXPECT_EQ(p->kind, TopicParts::Kind::telemetry_key);
    EXPECT_EQ(p->device, id);
    EXPECT_EQ(p->reader, 0xc2u);
    EXPECT_EQ(parse_topic(topic_from_device(id))->kind, TopicParts::Kind::from_device);
    EXPECT_EQ(parse_topic(topic_to_device(id))->kind, TopicParts::Kind::to_device);
    EXPECT_EQ(parse_topic(topic_telemetry(id))->kind, TopicParts::Kind::telemetry);
  }
  for (const char* bad : {"srup/00000000000000A1/dev", "srup/00000000000000a1/dev/x", "srup/0000000000000a1/dev",
                          "srup/0000000000000000/dev", "srup/ffffffffffffffff/dev", "srup/00000000000000a1/tk/",
                          "srup/00000000000000a1/tk/00000000000000c2/x", "SRUP/00000000000000a1/dev",
                          "srup/+/dev", "srup/00000000000000a1", ""}) {
    EXPECT_FALSE(parse_topic(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace pqot::srup
