// tripd's configuration (docs/tripd.md, "Configuration"): the examples parse, each side of a path
// states the flows the handshake will compare, and every mistake is refused at its line.
#include <gtest/gtest.h>

#include <filesystem>

#include "tripd/config.hpp"

namespace pqot::tripd {
namespace {

const std::string kTripIdentity = "[identity]\nca = \"ca.crt\"\ncert = \"a.crt\"\nkey = \"a.key\"\n";

TripdConfig trip_parse(const std::string& text) { return parse_config(text, "t.toml", "/etc/tripd"); }

// The message of the ConfigError `text` raises ("" if it parses).
std::string trip_refusal(const std::string& text) {
  try {
    trip_parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(TripdConfig, TheExamplesParseAndAgreeOnTheirFlows) {
  const std::filesystem::path dir = std::filesystem::path(PQOT_SOURCE_DIR) / "examples" / "trip";
  const TripdConfig a = load_config(dir / "reflector.toml");
  const TripdConfig b = load_config(dir / "filter.toml");
  const TripdConfig r = load_config(dir / "relay.toml");
  ASSERT_EQ(a.paths.size(), 3u);
  ASSERT_EQ(b.paths.size(), 3u);
  EXPECT_TRUE(a.paths[0].is_client());
  EXPECT_FALSE(b.paths[0].is_client());
  EXPECT_EQ(a.identity->ca, (dir / "pki/ca.crt").string());  // relative to the file
  for (std::size_t i = 0; i < 3; ++i) {
    // What the client sends in CLIENT_HELLO is exactly what the server expects (docs/trip.md §4.3).
    EXPECT_EQ(a.session_flows(a.paths[i]), b.session_flows(b.paths[i])) << a.paths[i].name;
    ASSERT_EQ(a.session_flows(a.paths[i]).size(), 1u);
    EXPECT_EQ(a.session_flows(a.paths[i])[0].dir, trip::FlowDirection::client_reflects);
  }
  ASSERT_EQ(r.relays.size(), 1u);
  EXPECT_EQ(r.relays[0].forward.port, 4502);
  EXPECT_EQ(r.relays[0].max_associations, 256u);  // the default
  EXPECT_FALSE(r.identity);                       // a relay holds no keys
}

TEST(TripdConfig, AFlowTheServerReflectsIsDirectionOneOnBothSides) {
  const TripdConfig client = trip_parse(kTripIdentity +
                                        "[[path]]\nname = \"p\"\nnumber = 1\nconnect = \"h:1\"\n"
                                        "[[flow]]\nid = 5\ndeliver = \"127.0.0.1:9\"\n"
                                        "[[flow]]\nid = 2\nreflect = \"127.0.0.1:8\"\n");
  const TripdConfig server = trip_parse(kTripIdentity +
                                        "[[path]]\nname = \"p\"\nnumber = 1\nlisten = \"0.0.0.0:1\"\npeers = [\"x\"]\n"
                                        "[[flow]]\nid = 5\nreflect = \"127.0.0.1:9\"\n"
                                        "[[flow]]\nid = 2\ndeliver = \"127.0.0.1:8\"\n");
  using D = trip::FlowDirection;
  const std::vector<trip::SessionFlow> expected{{2, D::client_reflects}, {5, D::server_reflects}};
  EXPECT_EQ(client.session_flows(client.paths[0]), expected);
  EXPECT_EQ(server.session_flows(server.paths[0]), expected);
}

TEST(TripdConfig, FlowsGoOnTheirNamedPathsOnly) {
  const TripdConfig c = trip_parse(kTripIdentity +
                                   "[[path]]\nname = \"a\"\nnumber = 1\nconnect = \"h:1\"\n"
                                   "[[path]]\nname = \"b\"\nnumber = 2\nconnect = \"h:2\"\n"
                                   "[[flow]]\nid = 1\nreflect = \"127.0.0.1:8\"\npaths = [\"b\"]\n"
                                   "[[flow]]\nid = 3\nreflect = \"127.0.0.1:9\"\n");
  EXPECT_EQ(c.session_flows(c.paths[0]).size(), 1u);
  EXPECT_EQ(c.session_flows(c.paths[1]).size(), 2u);
  EXPECT_EQ(c.paths[0].server_name, "h");  // the connect host when not given
}

TEST(TripdConfig, MistakesAreRefusedWithTheirLine) {
  const std::string path = "[[path]]\nname = \"a\"\nnumber = 1\nconnect = \"h:1\"\n";
  const std::string flow = "[[flow]]\nid = 1\nreflect = \"127.0.0.1:8\"\n";
  const struct {
    std::string text;
    std::string expected;
  } cases[] = {
      {"", "nothing to do"},
      {"[bogus]\n", "unknown key 'bogus'"},
      {path + flow, "need an [identity]"},
      {kTripIdentity + flow, "flows are configured but no [[path]]"},
      {kTripIdentity + "[[path]]\nname = \"a\"\nnumber = 1\n", "exactly one of connect"},
      {kTripIdentity + "[[path]]\nname = \"a\"\nnumber = 1\nlisten = \"0.0.0.0:1\"\n", "needs peers"},
      {kTripIdentity + "[[path]]\nname = \"a\"\nnumber = 0\nconnect = \"h:1\"\n", "t.toml:7: path 'a': number = 0 is out of range"},
      {kTripIdentity + path + path, "two paths are named 'a'"},
      {kTripIdentity + path + "[[flow]]\nid = 1\n", "exactly one of reflect"},
      {kTripIdentity + path + flow + flow, "two flows have id 1"},
      {kTripIdentity + path + "[[flow]]\nid = 1\nreflect = \"127.0.0.1:8\"\npaths = [\"z\"]\n", "names path 'z'"},
      {kTripIdentity + path + "[[flow]]\nid = 1\nreflect = \"h\"\n", "is not HOST:PORT"},
      {kTripIdentity + path + "[[flow]]\nid = 1\nreflect = \"h:1\"\nmax_age_ms = 5\n", "for the filtering side"},
      {kTripIdentity + path + "[session]\nkeepalive_ms = 1000\ndead_after_ms = 2000\n", "more than twice"},
      {kTripIdentity + path + "[session]\nkem = \"Kyber\"\n", "ML-KEM-768, ML-KEM-1024 or X-Wing"},
      {kTripIdentity + path + "[limits]\nreconnect_min_ms = 500\nreconnect_max_ms = 100\n", "below reconnect_min_ms"},
      {"[[relay]]\nname = \"r\"\nlisten = \"h:1\"\n", "needs listen and forward"},
      {"[[relay]]\nname = \"bad name\"\nlisten = \"h:1\"\nforward = \"h:2\"\n", "letters, digits"},
      {"[log]\nlevel = \"loud\"\n", "trace, debug"},
      {"a = [", "t.toml:1:"},
      // A filtered flow's paths trust one peer (docs/trip.md §8).
      {kTripIdentity + "[[path]]\nname = \"a\"\nnumber = 1\nlisten = \"0.0.0.0:1\"\npeers = [\"x\"]\n"
                       "[[path]]\nname = \"b\"\nnumber = 2\nlisten = \"0.0.0.0:2\"\npeers = [\"y\"]\n"
                       "[[flow]]\nid = 1\ndeliver = \"127.0.0.1:8\"\n",
       "must trust the same peer"},
      {kTripIdentity + "[[path]]\nname = \"a\"\nnumber = 1\nconnect = \"h:1\"\n"
                       "[[path]]\nname = \"b\"\nnumber = 2\nconnect = \"h:2\"\nserver_name = \"other\"\n"
                       "[[flow]]\nid = 1\ndeliver = \"127.0.0.1:8\"\n",
       "must trust the same peer"},
  };
  for (const auto& c : cases) {
    const std::string got = trip_refusal(c.text);
    EXPECT_NE(got.find(c.expected), std::string::npos) << c.text << "\n=> " << got;
  }
}

// docs/trip.md §4.1: a path's flows must fit one CLIENT_HELLO with its KEM's key.
TEST(TripdConfig, APathsFlowsMustFitOneHandshake) {
  const auto with_flows = [](int n, const std::string& kem) {
    std::string t = kTripIdentity + "[session]\nkem = \"" + kem + "\"\n[[path]]\nname = \"a\"\nnumber = 1\nconnect = \"h:1\"\n";
    for (int i = 1; i <= n; ++i) t += "[[flow]]\nid = " + std::to_string(i) + "\nreflect = \"127.0.0.1:" + std::to_string(1000 + i) + "\"\n";
    return t;
  };
  EXPECT_EQ(trip_refusal(with_flows(954, "ML-KEM-768")), "");  // (4096 - 48 - 1184) / 3
  EXPECT_NE(trip_refusal(with_flows(955, "ML-KEM-768")).find("at most 954"), std::string::npos);
  EXPECT_NE(trip_refusal(with_flows(900, "ML-KEM-1024")).find("at most 826"), std::string::npos);
}

}  // namespace
}  // namespace pqot::tripd
