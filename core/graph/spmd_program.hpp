// SpmdProgram: a step partitioned by partition_spmd, run for real on the
// devices of a mesh within one process. Each device runs its own copy of the
// per-device program (the same program on every device: only the shards it
// reads differ) on a thread of its own; the collective nodes meet in host
// memory (mesh_collectives.hpp). The program owns each device's shard of
// every captured value (variables and optimizer slots, updated in place
// step after step) and writes them back whole on request.
//
// Across processes (a ProcessExchange given), each process runs this
// program on its own block of the mesh's devices (process_id() x their
// count onwards, as many in each); the collectives exchange operands with
// the other processes (mesh_collectives.hpp), and gather_captures() gathers
// the other processes' shards, so that every process ends with whole values.
//
// Host state is touched by one thread only: host nodes (an optimizer's
// iteration count) run on the first device's thread, and the attributes that
// are refreshed from host state (a learning rate, an optimizer step, a random
// stream's position) are refreshed once per step on the calling thread, before
// the devices start, and copied into every device's program.
//
// Given FunctionOptions, the compiler's passes (compiler.hpp: pruning,
// rematerialization, fusion) run once on the partitioned step, placed on the
// first device, and every device runs that one optimized program: the
// collectives (remat's recomputed all-gathers among them) stay at the same
// node indices and in the same order on every device and in every process,
// as MeshCollectives matches them.
#pragma once

#include "graph/graph.hpp"
#include "graph/graph_executor.hpp"
#include "graph/passes/passes.hpp"
#include "graph/process_exchange.hpp"

#include <accel/function.hpp>
#include <accel/tensor.hpp>

#include <memory>
#include <optional>
#include <vector>

namespace accel::graph {

class MeshCollectives;

class SpmdProgram {
 public:
  // `partitioned` and `partition` as partition_spmd left them; `devices`
  // this process's devices of the mesh, row-major (all of the mesh's
  // without `exchange`); `exchange` (borrowed, outliving the program) joins
  // the other processes; `passes`, the compiler's passes to run on the
  // program first (none: the partitioned step as it is). Cuts every captured
  // value into its devices' shards (copied to them). Throws
  // InvalidArgumentError when the mesh's devices are not the processes x
  // `devices`.
  SpmdProgram(const Graph& partitioned, const SpmdPartition& partition, std::vector<Device> devices,
              ProcessExchange* exchange = nullptr, const std::optional<FunctionOptions>& passes = std::nullopt);
  ~SpmdProgram();

  // Device indices below are this process's (0 to device_count() - 1).
  // `arguments[d]` holds device d's shard of each parameter. Returns each
  // device's results (whole: partition_spmd makes results replicated).
  std::vector<std::vector<Tensor>> run(const std::vector<std::vector<Tensor>>& arguments);

  // Writes every captured value's shards back into its whole tensor (the
  // variable the step was traced with). Across processes a collective: every
  // process calls it after the same run.
  void gather_captures();
  // The other way: cuts every captured value's shards again from its whole
  // tensor, for wholes assigned from outside since the last run (weights
  // loaded between two fits). Each process cuts its own devices' shards.
  void scatter_captures();

  // The shard of value `id` (a capture or parameter of the partitioned
  // graph as given) that `device` holds, cut from `whole`.
  Tensor shard_of(const Tensor& whole, ValueId id, size_t device) const;

  size_t device_count() const noexcept { return devices_.size(); }
  // What the passes did to the per-device program (ops_recomputed,
  // compiled_ops...) and its buffer plan's figures (planned_peak_bytes: one
  // device's). Without passes, the plan's figures alone.
  const FunctionStatistics& statistics() const noexcept { return statistics_; }

 private:
  const ValueSharding& sharding(ValueId id) const { return partition_.shardings[static_cast<size_t>(id)]; }
  // The mesh index of this process's device `device`.
  size_t mesh_device(size_t device) const;
  Tensor cut(const Tensor& whole, const ValueSharding& layout, size_t device, ValueId id) const;
  // The other processes' shards of the sharded captures: [mesh device][capture]
  // bytes, this process's own devices left empty.
  std::vector<std::vector<std::vector<std::byte>>> exchange_capture_shards();

  SpmdPartition partition_;
  std::vector<Device> devices_;
  // The captured values, in id order: each one's id in the per-device
  // program (the passes renumber values), its layout and the tensor the step
  // was traced with.
  struct Capture {
    ValueId id = kNoValue;
    ValueSharding sharding;
    Tensor whole;
  };
  std::vector<Capture> captures_;
  std::vector<std::vector<Tensor>> shards_;          // [device][capture]
  std::vector<std::unique_ptr<GraphExecutor>> executors_;  // per device
  // The refreshed nodes: index, op and how to refresh them (taken out of the
  // per-device programs, which keep a no-op so that they stay unrecorded).
  struct Refreshed {
    size_t node = 0;
    int32_t op = 0;
    AttributeRefresh refresh;
  };
  std::vector<Refreshed> refreshed_;
  ProcessExchange* exchange_ = nullptr;  // null in one process
  std::unique_ptr<MeshCollectives> collectives_;
  FunctionStatistics statistics_;
};

}  // namespace accel::graph
