// keras.distribution's processes: the exchange initialize set, and the
// device names of every process.
#include <accel/keras/distribution/processes.hpp>

#include <accel/config.hpp>

#include "graph/process_exchange.hpp"

#include <fmt/format.h>

#include <mutex>

namespace accel::keras::distribution {
namespace {

std::mutex exchange_mutex;
std::shared_ptr<graph::ProcessExchange>& current_exchange() {
  static std::shared_ptr<graph::ProcessExchange> exchange;
  return exchange;
}

}  // namespace

void initialize(std::shared_ptr<graph::ProcessExchange> exchange) {
  std::lock_guard<std::mutex> lock(exchange_mutex);
  current_exchange() = std::move(exchange);
}

std::shared_ptr<graph::ProcessExchange> process_exchange() {
  std::lock_guard<std::mutex> lock(exchange_mutex);
  return current_exchange();
}

int process_id() {
  const std::shared_ptr<graph::ProcessExchange> exchange = process_exchange();
  return exchange ? exchange->process_id() : 0;
}

int num_processes() {
  const std::shared_ptr<graph::ProcessExchange> exchange = process_exchange();
  return exchange ? exchange->num_processes() : 1;
}

std::vector<std::string> list_devices(std::string_view device_type) {
  const std::vector<::accel::config::LogicalDevice> local = ::accel::config::list_logical_devices(device_type);
  std::vector<std::string> names;
  const int processes = num_processes();
  if (processes == 1) {
    for (const ::accel::config::LogicalDevice& device : local) names.push_back(device.name);
    return names;
  }
  for (int task = 0; task < processes; ++task) {
    for (size_t index = 0; index < local.size(); ++index) {
      names.push_back(fmt::format("/job:worker/replica:0/task:{}/device:{}:{}", task, local[index].device_type, index));
    }
  }
  return names;
}

}  // namespace accel::keras::distribution
