// What one train step of an experiment's model costs on an emulated TPU pod
// when its weights are sharded over a device mesh laid on the slice
// (`accel tpu estimate --model FILE --slice v5e-256 --mesh fsdp=256`): the
// step traced at the global batch, partitioned by the SPMD pass
// (keras::distribution::analyze_device_step), one chip's program timed by
// the emulator op by op (an SPMD program is the same on every chip), each
// of its collectives timed on the slice's torus, and the two scheduled
// together: asynchronous collectives overlap the ops that do not need them
// (docs/tpu-emulator.md, "Pods"). Also: the model FLOP/s per chip and MFU by
// MaxText's formula, the hardware FLOPs (with remat's recomputation) apart,
// the HBM each chip needs against its capacity, and the energy.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/experiment/tpu_step_estimate.hpp>
#include <accel/function.hpp>
#include <accel/keras/distribution/device_step_analysis.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace accel::experiment {

// The kinds of collective a sharded step has (StepCollective::kind):
// all_gather, reduce_scatter, all_reduce and all_to_all.
const std::set<std::string>& collective_kinds();

struct TpuPodOptions {
  // The mesh's axes, row-major over the slice's chips (the last fastest):
  // "fsdp" (the batch split over it, and every weight and its optimizer
  // slots split along the largest dimension the axis divides, gathered
  // before use) or "data" (the batch split, the weights whole on every
  // chip), and optionally "tensor" (each weight split along its first
  // dimension other than the model's width that the axis divides: heads,
  // MLP units, vocabulary; Megatron's tensor parallelism). Their product is
  // the slice's chip count.
  std::vector<std::pair<std::string, int64_t>> mesh;
  int64_t batch = 0;                  // global, over every slice; 0: the run's data.batch
  // Slices joined by the data-center network (multislice): data parallel
  // across them, each slice running the mesh; each gradient, once reduced
  // in its slice, is all-reduced over the DCN among its counterpart chips.
  int slices = 1;
  std::optional<RematPolicy> remat;   // unset: the run's training.remat
  // The kinds of collective ("all_gather", "reduce_scatter", "all_reduce",
  // "all_to_all") that run asynchronously on the slice's links, overlapping
  // the ops that do not read them, as XLA's flags make them; the others
  // block the chip where the program has them. The default is what
  // MaxText's published runs set (--xla_enable_async_all_gather and the
  // async collective fusion of all-gathers): the all-gathers alone.
  std::set<std::string> async_collectives = {"all_gather"};
  // The model's blocks (training.remat_blocks: its decoder layers) run as a
  // loop, one block per iteration, as MaxText's scan_layers (its default)
  // compiles them; false: one straight program, as with scan_layers=false.
  bool scan_layers = true;
};

// --- The schedule of one chip's step (pure: unit-tested on its own) ------

// The chip runs one op at a time: of the ops whose inputs exist by the time
// it is free, the first in program order (else the one whose inputs come
// first), as a static schedule that XLA's scheduler would make. Ops that read
// only what exists from the step's start (a weight's cast, not the batch)
// come first, so the gathers they feed start early. Collectives share their
// network's links, one at a time. Asynchronous, a collective starts once its
// operand exists and the links are free, and only the ops that read its
// result wait for it; synchronous, it runs on the chip like an op, blocking
// it and the links. Collectives between slices are synchronous: the hosts
// move them over the data-center network while the chip waits (XLA's
// asynchronous collective flags are the ICI's).
//
// With `scan_layers`, the calls of the model's blocks (StepEvent::block)
// are the iterations of two loops, the forward calls' and the backward
// calls', as XLA compiles a scan: a loop's body is scheduled on its own, so
// an iteration starts once the one before it has ended, collectives
// included (the first once every value the loop reads exists), a
// collective overlaps only the ops of its own iteration, what reads a
// loop's values from outside waits for the whole loop, and while a loop
// runs the chip runs nothing else.
struct PodSchedule {
  double step_seconds = 0;
  double compute_seconds = 0;             // the ops' own time
  double exposed_collective_seconds = 0;  // what the ops waited for collectives
  double link_busy_seconds = 0;           // the collectives' own time
};
// Per collective of the analysis: its time on the links, the links it runs
// on (0: the slice's ICI, 1: the data-center network between slices; each
// network runs one collective at a time, the two at once), and whether it
// runs asynchronously.
struct ScheduledCollective {
  double seconds = 0;
  int network = 0;
  bool asynchronous = true;
};
PodSchedule schedule_device_step(const keras::distribution::DeviceStepAnalysis& analysis,
                                 const std::vector<ScheduledCollective>& collectives, bool scan_layers = false);

// HBM one chip needs over the step: its shards of the weights and optimizer
// state, its shard of the batch and the step's own values at the buffer
// plan's peak, against its capacity. When it does not fit, `advice` says
// what would make it fit: the largest per-chip batch that does (the step's
// values scale with the batch), and how many chips the weights and state
// would need sharded over.
struct PodMemoryFit {
  double capacity_bytes = 0;
  double state_bytes = 0;
  double batch_bytes = 0;
  double activation_bytes = 0;
  double total_bytes = 0;
  bool fits = true;
  std::string advice;  // empty when it fits
};
PodMemoryFit memory_fit(const keras::distribution::DeviceStepAnalysis& analysis, double capacity_bytes,
                        int64_t batch_per_chip, int64_t chips_sharding_state);

// --- The estimate ---------------------------------------------------------

// MaxText's model FLOPs per step (train.py, October 2023):
// 6 N S B + 12 H L hd S^2 B, for a model whose input is a sequence of token ids.
struct ModelFlopsFormula {
  double parameters = 0;  // N: trainable parameters, shared ones once
  int64_t sequence = 0;   // S
  int64_t batch = 0;      // B: sequences per step, globally
  int64_t heads = 0;      // H (of the first attention layer)
  int64_t layers = 0;     // L: attention layers
  int64_t head_dim = 0;   // hd: key_dim
  double flops() const;
};

struct TpuCollectiveCost {
  std::string kind;
  std::string axes;   // "fsdp"; "slices (DCN)" for the all-reduces between slices
  int64_t count = 0;
  double bytes = 0;   // summed (whole arrays)
  double seconds = 0;       // on the links
  double chip_seconds = 0;  // their sums on the chip (reductions)
};

struct TpuPodEstimate {
  std::string model;
  std::string system_json;
  std::string mesh;              // "fsdp=256"
  int64_t chips = 0;             // every slice's
  int slices = 1;
  int64_t batch = 0;             // global
  int64_t batch_per_chip = 0;   // the global batch over every chip (MaxText's per_device_batch_size)
  std::string remat;             // none | full | minimal
  std::set<std::string> async_collectives;
  bool scan_layers = true;
  double step_seconds = 0;
  PodSchedule schedule;
  // Of the step: the MXU's, the vector unit's and the HBM stalls' shares of
  // the ops' time, the reductions' sums on the chip, and the collectives'
  // exposed time.
  struct Shares {
    double mxu = 0;
    double vector = 0;
    double hbm_stalls = 0;
    double reduction_sums = 0;
    double exposed_collectives = 0;
  } shares;
  // The chip's time summing what reductions bring (TPUs reduce on the
  // TensorCore): part of the schedule's compute_seconds.
  double summing_seconds = 0;
  std::vector<TpuCollectiveCost> collectives;
  // Per chip: the emulator's totals over its program.
  int64_t cycles = 0;
  int64_t stall_cycles = 0;
  int64_t mxu_cycles = 0;
  int64_t vector_cycles = 0;
  double hardware_flops_per_chip = 0;  // what the chip executes, recomputation included
  double hbm_bytes_per_chip = 0;
  double peak_flops_per_chip = 0;
  std::optional<ModelFlopsFormula> formula;  // none: the model's input is not a token sequence
  double model_flops = 0;                    // per step, all chips (the formula)
  double model_flops_per_chip_per_second = 0;
  double mfu = 0;                            // of the chip's peak
  double hardware_flops_per_chip_per_second = 0;
  PodMemoryFit memory;
  int64_t ops_recomputed = 0;
  int64_t compiled_ops = 0;
  // Energy per step, every chip: the ops' (from the preset's figures), the
  // links', and the chips' idle power over the step. nullopt: no figures.
  std::optional<double> energy_j;
  std::string energy_note;
  double average_power_w = 0;  // per chip
  std::vector<TpuOpCost> by_op;  // one chip's, most time first
  double wall_seconds = 0;
};

// Throws InvalidArgumentError for a mesh that does not cover the slice's
// chips, names an axis other than fsdp, data and tensor, or has no batch
// axis or two, or a batch the mesh does not split; FailedPreconditionError without an emulator in
// timing-only mode (tpu_sim.values=none: the chip's program runs on shard
// shapes alone).
TpuPodEstimate estimate_tpu_pod_step(const RunConfig& run, const TpuPodOptions& options);

std::string tpu_pod_estimate_json(const TpuPodEstimate& estimate);

}  // namespace accel::experiment
