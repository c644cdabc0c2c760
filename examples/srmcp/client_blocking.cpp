// Example: the blocking client API. Reads and writes the pump of example_server_callables.
//
//   example_client_blocking PORT CA CERT KEY
#include <iostream>

#include "pqot/srmcp/client.hpp"

using namespace pqot::srmcp;

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: " << argv[0] << " PORT CA CERT KEY\n";
    return 2;
  }
  ClientOptions options;
  options.port = static_cast<std::uint16_t>(std::stoi(argv[1]));
  options.tls = {argv[2], argv[3], argv[4]};
  options.links = 2;
  try {
    Client client(options);
    client.connect();
    const Json written = client.write({{"pump.speed", 1500.0}});
    std::cout << "wrote pump.speed, device holds " << written["values"][0]["value"] << "\n";
    const Json values = client.read({"pump.speed", "pump.reads"});
    for (const auto& v : values["values"]) std::cout << v["id"].get<std::string>() << " = " << v["value"] << "\n";
    // A value the device refuses: the per-node status says why, the call itself succeeds.
    const Json refused = client.write({{"pump.speed", 99999.0}});
    std::cout << "write 99999 -> " << status_name(static_cast<Status>(refused["values"][0]["status"].get<int>()))
              << "\n";
    client.close();
  } catch (const ClientError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
