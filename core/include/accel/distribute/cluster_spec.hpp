// ClusterSpec: the jobs of a cluster (tf.train.ClusterSpec). Each job name
// ("chief", "worker", "ps", "evaluator") maps to the "host:port" addresses of
// its tasks; a task is named by its job and its index in that list.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace accel::distribute {

class ClusterSpec {
 public:
  using Jobs = std::map<std::string, std::vector<std::string>, std::less<>>;

  ClusterSpec() = default;
  explicit ClusterSpec(Jobs jobs);

  bool empty() const noexcept { return jobs_.empty(); }
  const Jobs& jobs() const noexcept { return jobs_; }
  std::vector<std::string> job_names() const;
  bool has_job(std::string_view job) const;
  // Number of tasks of `job`; 0 for a job the cluster does not have.
  int num_tasks(std::string_view job) const;
  // The addresses of `job`'s tasks; NotFoundError for an unknown job.
  const std::vector<std::string>& job_tasks(std::string_view job) const;
  // "host:port" of one task; NotFoundError / OutOfRangeError naming the task.
  const std::string& task_address(std::string_view job, int task_index) const;

  // {"worker": ["h:1", "h:2"]}, as TF_CONFIG's "cluster" field.
  std::string to_json() const;

  bool operator==(const ClusterSpec& other) const = default;

 private:
  Jobs jobs_;
};

// A "host:port" or "[ipv6]:port" address split in two (the host without its
// brackets); InvalidArgumentError saying what is wrong when it is not one:
// no port, a port outside 1..65535, an empty host, or an IPv6 address
// without brackets.
struct HostPort {
  std::string host;
  int port = 0;
};
HostPort split_host_port(std::string_view address);

}  // namespace accel::distribute
