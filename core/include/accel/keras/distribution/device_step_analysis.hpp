// One device's share of a train step under keras.distribution, run alone:
// what a cost model of a whole mesh needs. An SPMD program is the same on
// every device of the mesh (the shards differ, not the work), so a pod of
// 256 chips is timed by running one chip's program once, with collectives
// that move nothing, and reading the device's clock after every op; the
// caller times the collectives on its interconnect and schedules them
// against the ops (experiment::estimate_tpu_pod_step does, on the emulated
// TPU). JAX's `jit(...).lower(...).compile().cost_analysis()` answers the
// same question for one device.
#pragma once

#include <accel/device.hpp>
#include <accel/tensor.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace accel::keras {
class Model;
}

namespace accel::keras::distribution {

// The devices of a collective along one mesh axis: `size` devices `stride`
// apart in the mesh's row-major device order (the last axis has stride 1).
struct MeshSpan {
  std::string axis;
  int64_t size = 1;
  int64_t stride = 1;
};

struct StepCollective {
  std::string kind;              // "all_gather", "reduce_scatter", "all_reduce" or "all_to_all"
  std::vector<MeshSpan> spans;   // the mesh axes it runs along
  // The whole array each device takes part with: what an all-gather
  // gathers, what a reduce-scatter or an all-reduce reduces, the buffer an
  // all-to-all exchanges.
  double bytes = 0;
  std::string consumer;          // the op that needed it ("MatMul", "AdamUpdate")
};

// One node of the device's program, in the order it ran.
struct StepEvent {
  enum class Kind { kOp, kCollective, kFree };  // kFree: a reshape or host work, no device time
  Kind kind = Kind::kOp;
  double seconds = 0;          // kOp: the device clock's advance over it
  int32_t collective = -1;     // kCollective: index into DeviceStepAnalysis::collectives
  // The events whose outputs it reads; values that exist from the step's
  // start (variables, optimizer slots, the batch, constants) add none.
  std::vector<int32_t> inputs_from;
  bool reads_batch = false;    // reads the step's batch (a parameter) itself
  std::string label;           // the op ("MatMul+bias_add", "all_gather")
  // The call of a block of layers (keras::CompileOptions::remat_blocks: a
  // decoder layer) that made it, -1 for none, and whether it is that call's
  // backward pass (its gradient, and what remat recomputes for it). A
  // collective belongs to the call of the op that needed it, else to that of
  // the op that made its operand (a gradient's reduce-scatter).
  int32_t block = -1;
  bool backward = false;
};

struct DeviceStepAnalysis {
  int64_t mesh_devices = 1;
  std::vector<StepEvent> events;
  std::vector<StepCollective> collectives;
  // Memory the device holds over the step: its shards of the variables and
  // optimizer slots, its shard of the batch, and the step's own values as
  // the compiled program's buffer plan holds them at its peak.
  uint64_t state_bytes = 0;
  uint64_t batch_bytes = 0;
  uint64_t planned_peak_bytes = 0;
  int64_t ops_recomputed = 0;  // by rematerialization (compile's remat)
  int64_t compiled_ops = 0;
};

// The device's clock: `start` is called once, right before the program runs
// (after tracing and compiling, which may run ops of their own), `seconds`
// after each node.
struct DeviceClock {
  std::function<void()> start;
  std::function<double()> seconds;
};

// Traces `model`'s train step on the global batch (x, y), partitions it with
// the Distribution set before `model` was compiled (set_distribution, then
// compile with jit_compile; its remat applies), compiles the first device's
// program and runs it once on `device`, every value of it (weights, slots,
// batch) a tensor of that device's shard shape, its collectives moving
// nothing, reading `clock` after each node. The traced run's update stays
// in the model's weights (the model is for analysis only).
// Meant for a timing-only device (the emulated TPU with tpu_sim.values=none),
// where no value is computed and a model of any size runs; on another
// device the values are whatever the empty tensors hold. Throws
// FailedPreconditionError when the model was not compiled under a
// distribution with jit_compile.
DeviceStepAnalysis analyze_device_step(Model& model, const Tensor& x, const Tensor& y, const Device& device,
                                       const DeviceClock& clock);

}  // namespace accel::keras::distribution
