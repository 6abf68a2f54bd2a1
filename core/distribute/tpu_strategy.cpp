// TPUStrategy: one replica per emulated TensorCore; its cross-replica sum
// adds on the host and charges each batch of all-reduces to the cores'
// simulated timelines as one interconnect collective; the simulated time of
// every run is split into compute and all-reduce.
#include <accel/distribute/tpu_strategy.hpp>

#include <accel/error.hpp>
#include <accel/placement.hpp>
#include <accel/profiler.hpp>
#include <accel/tpu_emulator.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <mutex>
#include <utility>

#include "collective_profile.hpp"

namespace accel::distribute {
namespace {

double bytes_of(const Tensor& tensor) {
  return static_cast<double>(tensor.shape().element_count()) * static_cast<double>(dtype_size(tensor.dtype()));
}

std::vector<Tensor> fresh_buffers_like(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> buffers;
  for (const Tensor& tensor : tensors) buffers.push_back(Tensor::empty(tensor.shape(), tensor.dtype(), tensor.device()));
  return buffers;
}

// The TPU's CrossReplicaSum: exact fp32 sums on the host in replica order
// (every replica gets bit-identical values), and one simulated all-reduce of
// all the batch's bytes over the replicas' cores, as XLA combines a step's
// gradient all-reduces into one.
class TpuCrossReplicaSum final : public CrossDeviceOps {
 public:
  TpuCrossReplicaSum(std::vector<Device> replica_devices, TpuEmulator emulator)
      : replica_devices_(std::move(replica_devices)),
        emulator_(emulator),
        timing_only_(emulator.timing_only()),
        host_sum_(find_device("/CPU:0")) {
    for (const Device& device : replica_devices_) cores_.push_back(device.plugin_device_index());
  }
  std::string name() const override { return "TpuCrossReplicaSum"; }

  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) override {
    return batch_all_reduce(op, {per_replica}).front();
  }

  std::vector<std::vector<Tensor>> batch_all_reduce(ReduceOp op,
                                                    const std::vector<std::vector<Tensor>>& values) override {
    std::vector<std::vector<Tensor>> results;
    double bytes = 0;
    for (const std::vector<Tensor>& per_replica : values) {
      // A timing-only emulator's tensors hold no values: nothing to add up
      // (the collective's time below is all there is to it). Each replica
      // still gets a new buffer, as the sum copied back would be, so that
      // what the cores' VMEM holds, and so the timing, stays the same.
      results.push_back(timing_only_ ? fresh_buffers_like(per_replica) : host_sum_.all_reduce(op, per_replica));
      if (!per_replica.empty()) bytes += bytes_of(per_replica.front());
    }
    if (values.empty() || replica_devices_.size() < 2) return results;
    const TpuAllReduceTiming timing = emulator_.run_all_reduce(bytes, cores_);
    record_in_profile(timing, bytes);
    std::lock_guard lock(mutex_);
    bytes_since_taken_ += bytes;
    return results;
  }

  // The bytes all-reduced since the last call.
  double take_bytes() {
    std::lock_guard lock(mutex_);
    return std::exchange(bytes_since_taken_, 0.0);
  }

 private:
  // "AllReduce" on every replica's device track of the trace.
  void record_in_profile(const TpuAllReduceTiming& timing, double bytes) const {
    if (!profiler::is_recording()) return;
    const double clock_hz = emulator_.totals(cores_.front()).clock_hz;
    const std::string detail = nlohmann::json{{"link_seconds", timing.link_seconds},
                                              {"latency_seconds", timing.latency_seconds},
                                              {"on_chip_seconds", timing.on_chip_seconds},
                                              {"chips", timing.chips},
                                              {"steps", timing.steps},
                                              {"replicas", replica_devices_.size()}}
                                   .dump();
    profiler::OpRecord record;
    record.op = "AllReduce";
    record.category = "collective";
    record.time_source = profiler::TimeSource::kSimulated;
    record.start_seconds = timing.start_seconds;
    record.duration_seconds = timing.seconds;
    record.cycles = static_cast<uint64_t>(timing.seconds * clock_hz + 0.5);
    record.clock_hz = clock_hz;
    record.bytes_accessed = bytes;
    record.bound = "memory";
    record.detail_json = detail;
    detail::record_collective(record, replica_devices_);
  }

  std::vector<Device> replica_devices_;
  std::vector<int32_t> cores_;
  TpuEmulator emulator_;
  bool timing_only_;
  ReductionToOneDevice host_sum_;
  std::mutex mutex_;
  double bytes_since_taken_ = 0;
};

TpuTopology initialized_topology(const TPUClusterResolver& resolver) {
  // Once per process, as TensorFlow initializes a TPU system once.
  static std::mutex mutex;
  static std::optional<std::pair<std::string, TpuTopology>> initialized;
  std::lock_guard lock(mutex);
  if (!initialized || initialized->first != resolver.tpu()) {
    initialized.emplace(resolver.tpu(), initialize_tpu_system(resolver));
  }
  return initialized->second;
}

std::vector<Device> tensor_core_devices(const TpuTopology& topology) {
  std::vector<Device> devices;
  for (int core = 0; core < topology.num_tpus_per_task; ++core) devices.push_back(find_device(fmt::format("/TPU:{}", core)));
  return devices;
}

TpuEmulator require_emulator() {
  std::optional<TpuEmulator> emulator = TpuEmulator::find();
  if (!emulator) throw NotFoundError("TPUStrategy: the TPU emulator plugin is not loaded");
  return *emulator;
}

// The latest end of the cores' timelines, and the all-reduce time so far (the same on each).
struct TimelineSnapshot {
  double end_seconds = 0;
  double collective_seconds = 0;
};
TimelineSnapshot snapshot(const TpuEmulator& emulator, const std::vector<Device>& devices) {
  TimelineSnapshot result;
  for (const Device& device : devices) {
    const TpuCoreTotals totals = emulator.totals(device.plugin_device_index());
    result.end_seconds = std::max(result.end_seconds, totals.seconds);
    result.collective_seconds =
        std::max(result.collective_seconds, static_cast<double>(totals.collective_cycles) / totals.clock_hz);
  }
  return result;
}

}  // namespace

TPUStrategy::TPUStrategy(const TPUClusterResolver& resolver) : TPUStrategy(initialized_topology(resolver)) {}

TPUStrategy::TPUStrategy(TpuTopology topology) : TPUStrategy(topology, tensor_core_devices(topology)) {}

TPUStrategy::TPUStrategy(TpuTopology topology, std::vector<Device> tensor_cores)
    : Strategy(tensor_cores, std::make_shared<TpuCrossReplicaSum>(tensor_cores, require_emulator())),
      topology_(std::move(topology)) {}

void TPUStrategy::run_each_replica(const std::function<void(ReplicaContext&)>& body) {
  const TpuEmulator emulator = require_emulator();
  const TimelineSnapshot before = snapshot(emulator, replica_devices());
  Strategy::run_each_replica(body);
  const TimelineSnapshot after = snapshot(emulator, replica_devices());
  TpuStepTime step;
  step.total_seconds = after.end_seconds - before.end_seconds;
  step.all_reduce_seconds = after.collective_seconds - before.collective_seconds;
  step.compute_seconds = step.total_seconds - step.all_reduce_seconds;
  step.all_reduce_bytes = static_cast<TpuCrossReplicaSum&>(cross_device_ops()).take_bytes();
  step_times_.push_back(step);
}

}  // namespace accel::distribute
