// The rendezvous Gloo needs before it can connect its TCP pairs: a key-value
// store where each rank publishes its pair addresses and reads the others'.
// Debian's Gloo has no TCP store (only file, hash, prefix and Redis stores),
// so rank 0 serves this small one at its cluster address for the few seconds
// of joining. It carries rendezvous keys only; collective data never passes
// through it.
//
// Wire format, one request at a time per connection (integers big-endian u32):
//   set: 'S' key_size value_size key value  -> 1 byte ack
//   get: 'G' key_size 0          key        -> found byte, value_size, value
#pragma once

#include <gloo/rendezvous/store.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace accel::distribute {

// Resolves `host` (IPv4 or IPv6) once: UnavailableError naming the host, the
// task it belongs to (`whose`, e.g. "worker 1 (h:2222)") and getaddrinfo's
// reason when it does not resolve. Called before joining, so a mistyped host
// fails at once instead of when the join times out.
void require_resolvable_host(const std::string& host, const std::string& whose);

// Serves the store on a background thread until destroyed.
class RendezvousServer {
 public:
  // Listens on every interface at `port`, IPv6 and IPv4 on one dual-stack
  // socket (IPv4 only where the host has no IPv6); UnavailableError when it cannot.
  explicit RendezvousServer(int port);
  ~RendezvousServer();
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;

 private:
  class Session;
  void accept_next();

  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::map<std::string, std::vector<char>> values_;  // used on the server thread only
  std::thread thread_;
};

// A connection to a RendezvousServer, as the gloo::rendezvous::Store that
// gloo::rendezvous::Context::connectFullMesh uses.
class RendezvousClient : public gloo::rendezvous::Store {
 public:
  // Connects to host:port, retrying while the server is not up yet; returns
  // nullptr when `deadline` passes first.
  static std::unique_ptr<RendezvousClient> connect(const std::string& host, int port,
                                                   std::chrono::steady_clock::time_point deadline,
                                                   std::chrono::milliseconds wait_timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  // Waits for the key as wait() does.
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  // gloo::IoException when a key is still missing after `timeout`.
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  // The value of `key`, or nullopt while nobody has set it.
  std::optional<std::vector<char>> try_get(const std::string& key);
  // Removes keys from `missing` as they arrive, until none is left or
  // `deadline` passes; gloo::IoException if the store goes away meanwhile
  // (`missing` then holds the keys not seen yet).
  void wait_until(std::vector<std::string>& missing, std::chrono::steady_clock::time_point deadline);

 private:
  RendezvousClient(boost::asio::ip::tcp::socket socket, std::string server,
                   std::chrono::milliseconds wait_timeout);

  std::unique_ptr<boost::asio::io_context> io_context_;
  boost::asio::ip::tcp::socket socket_;
  std::string server_;  // "host:port", for errors
  std::chrono::milliseconds wait_timeout_;
};

}  // namespace accel::distribute
