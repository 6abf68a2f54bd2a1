// The rank-0 rendezvous store: an Asio server thread and a blocking client.
#include "rendezvous_store.hpp"

#include <accel/error.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <gloo/common/error.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace accel::distribute {
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr char kSetRequest = 'S';
constexpr char kGetRequest = 'G';
constexpr size_t kHeaderSize = 1 + 4 + 4;

void put_u32(std::vector<char>& out, uint32_t value) {
  const uint32_t big_endian = htonl(value);
  const char* bytes = reinterpret_cast<const char*>(&big_endian);
  out.insert(out.end(), bytes, bytes + 4);
}

uint32_t get_u32(const char* in) {
  uint32_t big_endian = 0;
  std::memcpy(&big_endian, in, 4);
  return ntohl(big_endian);
}

}  // namespace

void require_resolvable_host(const std::string& host, const std::string& whose) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (status == 0) {
    ::freeaddrinfo(found);
    return;
  }
  const std::string reason = status == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(status);
  throw UnavailableError(fmt::format("cannot resolve host '{}' of {}: {}", host, whose, reason));
}

// One client connection: read a request, answer it, repeat until it closes.
class RendezvousServer::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::map<std::string, std::vector<char>>& values)
      : socket_(std::move(socket)), values_(values) {}

  void read_request() {
    asio::async_read(socket_, asio::buffer(header_),
                     [self = shared_from_this()](boost::system::error_code error, size_t) {
                       if (!error) self->read_body();
                     });
  }

 private:
  void read_body() {
    key_.resize(get_u32(header_.data() + 1));
    value_.resize(get_u32(header_.data() + 5));
    std::array<asio::mutable_buffer, 2> body{asio::buffer(key_), asio::buffer(value_)};
    asio::async_read(socket_, body, [self = shared_from_this()](boost::system::error_code error, size_t) {
      if (!error) self->answer();
    });
  }

  void answer() {
    reply_.clear();
    if (header_[0] == kSetRequest) {
      values_[key_] = value_;
      reply_.push_back(1);
    } else {
      auto found = values_.find(key_);
      reply_.push_back(found == values_.end() ? 0 : 1);
      const std::vector<char> empty;
      const std::vector<char>& value = found == values_.end() ? empty : found->second;
      put_u32(reply_, static_cast<uint32_t>(value.size()));
      reply_.insert(reply_.end(), value.begin(), value.end());
    }
    asio::async_write(socket_, asio::buffer(reply_),
                      [self = shared_from_this()](boost::system::error_code error, size_t) {
                        if (!error) self->read_request();
                      });
  }

  tcp::socket socket_;
  std::map<std::string, std::vector<char>>& values_;
  std::array<char, kHeaderSize> header_{};
  std::string key_;
  std::vector<char> value_;
  std::vector<char> reply_;
};

RendezvousServer::RendezvousServer(int port) : acceptor_(io_context_) {
  boost::system::error_code error;
  const auto port_number = static_cast<unsigned short>(port);
  // One IPv6 socket with IPV6_V6ONLY off also takes IPv4 clients, so a
  // cluster written with either kind of address reaches the store.
  tcp::endpoint endpoint(tcp::v6(), port_number);
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(asio::ip::v6_only(false), error);
  if (error) {  // no IPv6 on this host
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    error.clear();
    endpoint = tcp::endpoint(tcp::v4(), port_number);
    acceptor_.open(endpoint.protocol(), error);
  }
  if (!error) acceptor_.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    throw UnavailableError(fmt::format(
        "cannot serve the rendezvous store on port {}: {} (is another process using the chief's port?)",
        port, error.message()));
  }
  accept_next();
  thread_ = std::thread([this] { io_context_.run(); });
}

RendezvousServer::~RendezvousServer() {
  io_context_.stop();
  thread_.join();
}

void RendezvousServer::accept_next() {
  acceptor_.async_accept([this](boost::system::error_code error, tcp::socket socket) {
    if (error) return;
    socket.set_option(tcp::no_delay(true));
    std::make_shared<Session>(std::move(socket), values_)->read_request();
    accept_next();
  });
}

std::unique_ptr<RendezvousClient> RendezvousClient::connect(const std::string& host, int port,
                                                            std::chrono::steady_clock::time_point deadline,
                                                            std::chrono::milliseconds wait_timeout) {
  auto io_context = std::make_unique<asio::io_context>();
  tcp::resolver resolver(*io_context);
  const std::string server = fmt::format("{}:{}", host, port);
  do {
    boost::system::error_code error;
    const auto endpoints = resolver.resolve(host, std::to_string(port), error);
    if (!error) {
      tcp::socket socket(*io_context);
      asio::connect(socket, endpoints, error);
      if (!error) {
        socket.set_option(tcp::no_delay(true));
        std::unique_ptr<RendezvousClient> client(new RendezvousClient(std::move(socket), server, wait_timeout));
        client->io_context_ = std::move(io_context);
        return client;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the server may not be up yet
  } while (std::chrono::steady_clock::now() < deadline);
  return nullptr;
}

RendezvousClient::RendezvousClient(tcp::socket socket, std::string server, std::chrono::milliseconds wait_timeout)
    : socket_(std::move(socket)), server_(std::move(server)), wait_timeout_(wait_timeout) {}

void RendezvousClient::set(const std::string& key, const std::vector<char>& data) {
  std::vector<char> request{kSetRequest};
  put_u32(request, static_cast<uint32_t>(key.size()));
  put_u32(request, static_cast<uint32_t>(data.size()));
  request.insert(request.end(), key.begin(), key.end());
  request.insert(request.end(), data.begin(), data.end());
  char ack = 0;
  boost::system::error_code error;
  asio::write(socket_, asio::buffer(request), error);
  if (!error) asio::read(socket_, asio::buffer(&ack, 1), error);
  if (error) {
    GLOO_THROW_IO_EXCEPTION("lost the rendezvous store at ", server_, ": ", error.message());
  }
}

std::optional<std::vector<char>> RendezvousClient::try_get(const std::string& key) {
  std::vector<char> request{kGetRequest};
  put_u32(request, static_cast<uint32_t>(key.size()));
  put_u32(request, 0);
  request.insert(request.end(), key.begin(), key.end());
  std::array<char, 5> reply_header{};
  boost::system::error_code error;
  asio::write(socket_, asio::buffer(request), error);
  if (!error) asio::read(socket_, asio::buffer(reply_header), error);
  std::vector<char> value(error ? 0 : get_u32(reply_header.data() + 1));
  if (!error) asio::read(socket_, asio::buffer(value), error);
  if (error) {
    GLOO_THROW_IO_EXCEPTION("lost the rendezvous store at ", server_, ": ", error.message());
  }
  if (reply_header[0] == 0) return std::nullopt;
  return value;
}

void RendezvousClient::wait_until(std::vector<std::string>& missing, std::chrono::steady_clock::time_point deadline) {
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    std::erase_if(missing, [this](const std::string& key) { return try_get(key).has_value(); });
    if (missing.empty() || std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

void RendezvousClient::wait(const std::vector<std::string>& keys) { wait(keys, wait_timeout_); }

void RendezvousClient::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  std::vector<std::string> missing = keys;
  wait_until(missing, std::chrono::steady_clock::now() + timeout);
  if (!missing.empty()) {
    GLOO_THROW_IO_EXCEPTION("rendezvous keys still missing after ", timeout.count(), " ms: ", missing.front());
  }
}

std::vector<char> RendezvousClient::get(const std::string& key) {
  wait({key});
  return *try_get(key);
}

}  // namespace accel::distribute
