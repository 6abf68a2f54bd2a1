// TPUStrategy (tf.distribute.TPUStrategy) on the TPU emulator, with
// initialize_tpu_system (tf.tpu.experimental.initialize_tpu_system):
//
//   TPUClusterResolver resolver("sim://v4-8");          // 4 chips, 8 TensorCores
//   TpuTopology topology = initialize_tpu_system(resolver);   // before any device use
//   TPUStrategy strategy(resolver);                     // one replica per TensorCore
//   { auto scope = strategy.scope(); model = make_model(); model->compile(...); }
//   model->fit(x, y, {.batch_size = 1024});
//   for (const TpuStepTime& step : strategy.step_times()) ...   // simulated compute + all-reduce
//
// The replicas are the emulated TensorCores TPU:0 .. TPU:N-1, each running
// its ops with the MXU's numerics on its own simulated timeline. Gradients
// are summed across replicas on the host (fp32, replica order) and every
// step's gradient all-reduce is charged to the cores' timelines as one
// collective over the slice's interconnect: its time comes from the preset's
// topology (ring / torus dimensions) and link bandwidth and latency, it starts
// when the slowest core is ready, and it is added to the simulated step time.
#pragma once

#include <accel/distribute/strategy.hpp>
#include <accel/distribute/tpu_cluster_resolver.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace accel::distribute {

// The emulated TPU system (tf.tpu.experimental.Topology).
struct TpuTopology {
  std::string preset;                    // "tpu_v4"
  int chips = 0;
  int cores_per_chip = 0;
  // Chips along x, y, z, then TensorCores per chip: v4-8 is {2, 2, 1, 2}.
  std::array<int, 4> mesh_shape{};
  int num_tasks = 1;                     // the emulated slice runs in this process
  int num_tpus_per_task = 0;             // TensorCores (TPU devices)
  // Per TensorCore TPU:i: its chip's x, y, z and its core within the chip.
  std::vector<std::array<int, 4>> device_coordinates;
  std::string topology_name;             // "torus_3d", "mesh_2d", "none", ...
};

// Configures the TPU emulator for the resolver's slice (preset and chips)
// and returns its topology. Call it before anything lists devices or makes
// tensors, as TensorFlow requires: once the emulator runs another system,
// FailedPreconditionError says which. NotFoundError without the tpu_sim plugin.
TpuTopology initialize_tpu_system(const TPUClusterResolver& resolver);

// The simulated time of one run of the replicas (one training step).
struct TpuStepTime {
  double compute_seconds = 0;     // ops on the slowest core, and waiting for it
  double all_reduce_seconds = 0;  // the gradient all-reduce over the interconnect
  double total_seconds = 0;       // compute + all-reduce
  double all_reduce_bytes = 0;
};

class TPUStrategy final : public Strategy {
 public:
  // Initializes the TPU system for `resolver` first when this process has not.
  explicit TPUStrategy(const TPUClusterResolver& resolver);
  std::string name() const override { return "TPUStrategy"; }

  const TpuTopology& topology() const noexcept { return topology_; }
  // One entry per run of the replicas since construction or reset_step_times()
  // (fit: per training step, then evaluate's steps).
  const std::vector<TpuStepTime>& step_times() const noexcept { return step_times_; }
  void reset_step_times() { step_times_.clear(); }

 protected:
  void run_each_replica(const std::function<void(ReplicaContext&)>& body) override;

 private:
  explicit TPUStrategy(TpuTopology topology);
  TPUStrategy(TpuTopology topology, std::vector<Device> tensor_cores);
  TpuTopology topology_;
  std::vector<TpuStepTime> step_times_;
};

}  // namespace accel::distribute
