// ClusterSpec: job name -> task addresses, and "host:port" splitting.
#include <accel/distribute/cluster_spec.hpp>

#include <accel/error.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>

namespace accel::distribute {

ClusterSpec::ClusterSpec(Jobs jobs) : jobs_(std::move(jobs)) {}

std::vector<std::string> ClusterSpec::job_names() const {
  std::vector<std::string> names;
  for (const auto& [name, tasks] : jobs_) names.push_back(name);
  return names;
}

bool ClusterSpec::has_job(std::string_view job) const { return jobs_.find(job) != jobs_.end(); }

int ClusterSpec::num_tasks(std::string_view job) const {
  auto found = jobs_.find(job);
  return found == jobs_.end() ? 0 : static_cast<int>(found->second.size());
}

const std::vector<std::string>& ClusterSpec::job_tasks(std::string_view job) const {
  auto found = jobs_.find(job);
  if (found == jobs_.end()) {
    throw NotFoundError(fmt::format("the cluster has no job '{}' (jobs: {})", job,
                                    fmt::join(job_names(), ", ")));
  }
  return found->second;
}

const std::string& ClusterSpec::task_address(std::string_view job, int task_index) const {
  const std::vector<std::string>& tasks = job_tasks(job);
  if (task_index < 0 || task_index >= static_cast<int>(tasks.size())) {
    throw OutOfRangeError(fmt::format("task {} of job '{}' does not exist: the job has {} task(s)",
                                      task_index, job, tasks.size()));
  }
  return tasks[static_cast<size_t>(task_index)];
}

std::string ClusterSpec::to_json() const {
  nlohmann::json jobs = nlohmann::json::object();
  for (const auto& [name, tasks] : jobs_) jobs[name] = tasks;
  return jobs.dump();
}

HostPort split_host_port(std::string_view address) {
  auto fail = [&](std::string_view why) -> InvalidArgumentError {
    return InvalidArgumentError(fmt::format(
        "'{}' is not a \"host:port\" or \"[ipv6]:port\" address: {}", address, why));
  };
  std::string_view host;
  std::string_view rest;  // ":port", or what stands there instead
  if (address.starts_with('[')) {  // [::1]:2222
    const size_t close = address.find(']');
    if (close == std::string_view::npos) throw fail("the '[' of the IPv6 address is never closed");
    host = address.substr(1, close - 1);
    rest = address.substr(close + 1);
    const bool ipv6_characters = host.find_first_not_of(
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:.%") == std::string_view::npos;
    if (!ipv6_characters || host.find(':') == std::string_view::npos) {
      throw fail("only an IPv6 address may stand between '[' and ']'");
    }
  } else {
    const size_t colon = address.find(':');
    host = address.substr(0, colon == std::string_view::npos ? address.size() : colon);
    rest = colon == std::string_view::npos ? std::string_view() : address.substr(colon);
    if (rest.find(':', 1) != std::string_view::npos) {
      throw fail("an IPv6 address needs brackets, as in [::1]:2222");
    }
  }
  if (host.empty()) throw fail("the host is empty");
  if (host.find_first_of(" \t\r\n[]/@") != std::string_view::npos) throw fail("the host has a character no host name has");
  if (rest.empty()) throw fail("the port is missing");
  if (rest.front() != ':') throw fail("expected ':' and the port after the host");
  const std::string_view port_text = rest.substr(1);
  int port = 0;
  const auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || port_text.find_first_not_of("0123456789") != std::string_view::npos ||
      error != std::errc{} || end != port_text.data() + port_text.size() || port < 1 || port > 65535) {
    throw fail("the port must be a number in 1..65535");
  }
  return {std::string(host), port};
}

}  // namespace accel::distribute
