// What one compiled step of an experiment's model costs on the emulated TPU:
// the model is built on /TPU:0 (or under the run's TPUStrategy, one replica
// per TensorCore of the slice, with the gradient all-reduce on the
// interconnect), compiled (jit_compile), and its step run twice (the first
// traces, the second replays the compiled graph); the second is the one
// reported, from the emulator's simulated timeline and the ops it reported
// (the first replica's core for the breakdown). Run with the emulator in timing-only mode
// (tpu_sim.values=none) it computes no tensor values, so a step of any size
// is estimated in the time its op calls take; with values it is exactly the
// step `accel run` trains. `accel tpu estimate --model FILE.yaml` prints it.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/tpu_emulator.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace accel::experiment {

struct TpuStepEstimateOptions {
  int64_t batch = 0;     // 0: the run's data.batch
  bool training = true;  // false: a compiled predict step
};

// The ops of one name in the step: "Conv2D", a fusion by its instructions
// ("Fusion(MUL+ADD+RELU)"), an MXU op with its epilogue ("MatMul+bias_add+relu").
struct TpuOpCost {
  std::string op;
  int64_t count = 0;
  double seconds = 0;
  int64_t cycles = 0;
  int64_t compute_cycles = 0;  // the MXU's or the vector unit's
  int64_t stall_cycles = 0;    // waiting on HBM beyond the compute
  bool on_mxu = false;         // an MXU kernel (its vector epilogue overlapped), else the vector unit's
  double flops = 0;
  double hbm_bytes = 0;
  double compute_bound_share = 0;  // of its seconds, the share in compute-bound calls
};

// A weight gradient's bytes and when its producing kernel ended on the
// step's timeline: what an all-reduce overlapped with the backward pass can
// start on.
struct TpuGradientReady {
  double seconds = 0;
  double bytes = 0;
};

struct TpuStepEstimate {
  std::string model;
  std::string system_json;  // the emulated system (preset, chips, cores, ...)
  int64_t batch = 0;       // global
  bool training = true;
  int replicas = 1;         // TensorCores the step runs on (a TPUStrategy's)
  double step_seconds = 0;  // simulated: the slowest core, plus the all-reduce
  double all_reduce_seconds = 0;  // the gradient all-reduce (TPUStrategy)
  double all_reduce_bytes = 0;
  double gradient_bytes = 0;      // the trainable variables' bytes: what a data-parallel step all-reduces
  double gradient_elements = 0;
  // A slice timed as one replica plus the slice's all-reduce (every replica
  // runs the same program), not by running a device per replica.
  bool one_replica_timed = false;
  // For overlapping the gradient all-reduce with the backward pass: the
  // filter gradients as their kernels finish (the other gradients, dense and
  // normalization ones, counted ready when the backward pass ends), and when
  // it ends (the first optimizer update, which needs every gradient).
  std::vector<TpuGradientReady> gradients_ready;
  double backward_end_seconds = 0;
  double all_reduce_exposed_seconds = 0;  // of all_reduce_seconds, what the step waits for
  int64_t cycles = 0;
  int64_t ops = 0;          // op calls of the compiled step
  double flops = 0;
  double hbm_bytes = 0;
  int64_t stall_cycles = 0;     // waiting on HBM
  int64_t mxu_cycles = 0;       // compute cycles of the MXU kernels
  int64_t vector_cycles = 0;    // compute cycles of the vector unit's kernels
  double mxu_utilization = 0;   // the core's cycle-weighted MXU utilization over the step
  double peak_flops = 0;        // per second, the core's (device property)
  double hbm_bandwidth = 0;     // bytes per second, the core's
  double achieved_flops = 0;    // flops / step_seconds
  double arithmetic_intensity = 0;  // flops per HBM byte: the roofline's x
  double roofline_flops = 0;        // min(peak, intensity x bandwidth): the roofline's y at x
  // The step's energy on every core of the system (joules), when the
  // preset has per-operation energies (docs/tpu-emulator.md "Energy").
  std::optional<TpuEnergy> energy;
  double average_power_w = 0;  // per chip over the step: energy / step time / chips (static power included)
  std::vector<TpuOpCost> by_op;     // most simulated time first
  double wall_seconds = 0;          // host time the estimate took (both steps)
};

// Throws accel::Error when the model cannot be built or stepped, and
// FailedPreconditionError when there is no TPU emulator. A run with a tpu
// strategy initializes its slice (initialize_tpu_system), so the runtime must
// not have listed devices before.
TpuStepEstimate estimate_tpu_step(const RunConfig& run, const TpuStepEstimateOptions& options = {});

// The estimate as one JSON object (the keys of TpuStepEstimate).
std::string tpu_step_estimate_json(const TpuStepEstimate& estimate);

}  // namespace accel::experiment
