#include "strategy_factory.hpp"

#include <accel/distribute/mirrored_strategy.hpp>
#include <accel/distribute/multi_worker_mirrored_strategy.hpp>
#include <accel/distribute/one_device_strategy.hpp>
#include <accel/distribute/simple_cluster_resolver.hpp>
#include <accel/distribute/slurm_cluster_resolver.hpp>
#include <accel/distribute/tf_config_cluster_resolver.hpp>
#include <accel/distribute/tpu_strategy.hpp>
#include <accel/error.hpp>

#include <fmt/format.h>

#include <chrono>

namespace accel::experiment {
namespace {

std::string text_argument(const KerasObject& object, const char* key, const std::string& fallback) {
  const Value* value = object.argument(key);
  return value != nullptr && value->is_set() ? value->as_text() : fallback;
}

// Null for auto: MirroredStrategy's own choice (select_cross_device_ops).
std::shared_ptr<distribute::CrossDeviceOps> make_cross_device_ops(const std::string& name) {
  if (name == "ring") return std::make_shared<distribute::HostRingAllReduce>();
  if (name == "nccl") return std::make_shared<distribute::NcclAllReduce>();
  if (name == "reduce_to_one_device") return std::make_shared<distribute::ReductionToOneDevice>();
  return nullptr;
}

distribute::CommunicationImplementation communication_of(const std::string& name) {
  if (name == "ring") return distribute::CommunicationImplementation::kRing;
  if (name == "nccl") return distribute::CommunicationImplementation::kNccl;
  return distribute::CommunicationImplementation::kAuto;
}

}  // namespace

distribute::TPUClusterResolver make_tpu_resolver(const KerasObject& strategy) {
  return distribute::TPUClusterResolver(text_argument(strategy, "tpu", "sim://v4-8"));
}

std::unique_ptr<distribute::ClusterResolver> make_cluster_resolver(const KerasObject& resolver) {
  if (resolver.name == "tf_config") return std::make_unique<distribute::TFConfigClusterResolver>();
  if (resolver.name == "slurm") {
    distribute::SlurmClusterOptions options;
    if (const Value* port = resolver.argument("port_base"); port && port->is_set()) {
      options.port_base = static_cast<int>(port->as_int());
    }
    if (const Value* tasks = resolver.argument("tasks_per_node"); tasks && tasks->is_set() && !tasks->defaulted) {
      options.tasks_per_node = static_cast<int>(tasks->as_int());
    }
    return std::make_unique<distribute::SlurmClusterResolver>(options);
  }
  if (resolver.name == "simple") {
    const Value* workers = resolver.argument("workers");
    const Value* task = resolver.argument("task_id");
    distribute::ClusterSpec cluster({{"worker", workers ? workers->as_texts() : std::vector<std::string>{}}});
    return std::make_unique<distribute::SimpleClusterResolver>(
        std::move(cluster), "worker", task && task->is_set() ? static_cast<int>(task->as_int()) : 0);
  }
  throw InvalidArgumentError(fmt::format("unknown cluster resolver '{}'", resolver.name));
}

bool runs_as_chief(const RunConfig& run) {
  if (!run.strategy || run.strategy->name != "multi_worker_mirrored" || !run.cluster_resolver) return true;
  const std::unique_ptr<distribute::ClusterResolver> resolver = make_cluster_resolver(*run.cluster_resolver);
  const distribute::ClusterSpec cluster = resolver->cluster_spec();
  if (cluster.empty()) return true;  // one worker outside any cluster
  // TensorFlow's chief: the "chief" task, else worker 0.
  if (cluster.has_job("chief")) return resolver->task_type() == "chief";
  return resolver->task_type() == "worker" && resolver->task_id() == 0;
}

std::unique_ptr<distribute::Strategy> make_strategy(const RunConfig& run, std::vector<std::string>& notes) {
  if (!run.strategy) return nullptr;
  const KerasObject& strategy = *run.strategy;
  if (strategy.name == "one_device") {
    const Value* device = strategy.argument("device");
    const std::string name = device && device->is_set() ? device->as_text() : run.device.value_or("/CPU:0");
    return std::make_unique<distribute::OneDeviceStrategy>(name);
  }
  if (strategy.name == "mirrored") {
    const Value* devices = strategy.argument("devices");
    return std::make_unique<distribute::MirroredStrategy>(
        devices && devices->is_set() ? devices->as_texts() : std::vector<std::string>{},
        make_cross_device_ops(text_argument(strategy, "cross_device_ops", "auto")));
  }
  if (strategy.name == "tpu") {
    // apply_device_settings initialized the TPU system before the devices started.
    return std::make_unique<distribute::TPUStrategy>(make_tpu_resolver(strategy));
  }
  if (strategy.name == "multi_worker_mirrored") {
    if (!run.cluster_resolver) throw InvalidArgumentError("multi_worker_mirrored needs a resolver");
    const std::unique_ptr<distribute::ClusterResolver> resolver = make_cluster_resolver(*run.cluster_resolver);
    distribute::CommunicationOptions options;
    options.implementation = communication_of(text_argument(strategy, "communication", "auto"));
    if (const Value* timeout = strategy.argument("timeout_seconds"); timeout && timeout->is_set()) {
      options.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout->as_number() * 1000));
    }
    auto made = std::make_unique<distribute::MultiWorkerMirroredStrategy>(*resolver, options);
    if (options.implementation == distribute::CommunicationImplementation::kNccl &&
        made->communication() != distribute::CommunicationImplementation::kNccl) {
      notes.push_back("communication: nccl cannot run on these replicas (not GPUs NCCL can drive); "
                      "the Gloo ring through host memory was used");
    }
    return made;
  }
  throw InvalidArgumentError(fmt::format("unknown strategy '{}'", strategy.name));
}

DistributionResult describe_strategy(const distribute::Strategy& strategy) {
  DistributionResult result;
  result.strategy = strategy.name();
  result.replicas_in_sync = strategy.num_replicas_in_sync();
  result.workers = strategy.num_workers();
  result.worker_index = strategy.worker_index();
  for (const Device& device : strategy.replica_devices()) result.replica_devices.push_back(device.short_name());
  result.cross_device_ops = strategy.cross_device_ops().name();
  return result;
}

}  // namespace accel::experiment
