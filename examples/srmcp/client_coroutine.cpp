// Example: the coroutine client API on the application's own io_context.
//
//   example_client_coroutine PORT CA CERT KEY
#include <iostream>

#include "pqot/srmcp/client.hpp"

using namespace pqot::srmcp;

asio::awaitable<int> run(Client& client) {
  co_await client.async_connect();
  Json read_body;
  read_body["ids"] = Json::array({"pump.speed"});
  for (int i = 0; i < 3; ++i) {
    const Response r = co_await client.async_request(MessageType::read, read_body);
    if (r.status != Status::ok) {
      std::cerr << "read failed: " << status_name(r.status) << "\n";
      co_return 1;
    }
    std::cout << "pump.speed = " << r.body["values"][0]["value"] << "\n";
  }
  const Response ping = co_await client.async_request(MessageType::ping, Json::object());
  std::cout << "ping: " << status_name(ping.status) << "\n";
  co_await client.async_close();
  co_return 0;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: " << argv[0] << " PORT CA CERT KEY\n";
    return 2;
  }
  ClientOptions options;
  options.port = static_cast<std::uint16_t>(std::stoi(argv[1]));
  options.tls = {argv[2], argv[3], argv[4]};
  asio::io_context io;
  Client client(io, options);
  int rc = 1;
  asio::co_spawn(io, run(client), [&](std::exception_ptr e, int result) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        std::cerr << "error: " << ex.what() << "\n";
      }
      return;
    }
    rc = result;
  });
  io.run();
  return rc;
}
