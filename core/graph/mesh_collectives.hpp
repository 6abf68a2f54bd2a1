// MeshCollectives: the collective nodes of an SPMD program met in host
// memory by the threads that run it, one per device of the mesh. Every device
// runs the same program, so every device reaches every collective node: each
// deposits its operand, waits for all, and computes its own output from the
// operands of its group (the devices that share its coordinates on the mesh
// axes the collective does not span), ordered by their coordinates on the
// axes it does span (the order of the shards).
//
// Across processes (a ProcessExchange given), this process holds a
// contiguous block of the mesh's devices: its devices meet as above, and the
// last to arrive exchanges their operands with every other process, so that
// each device then sees the operands of all the mesh's devices and computes
// its output exactly as in one process (the same bits). A collective whose
// groups all stay within processes (over an axis inside each) exchanges
// nothing.
#pragma once

#include "graph/process_exchange.hpp"
#include "graph/sharding.hpp"

#include <accel/dtype.hpp>
#include <accel/shape.hpp>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace accel::graph {

// Device `device`'s coordinate on mesh axis `axis` (devices row-major over the mesh).
size_t mesh_coordinate(const MeshShape& mesh, size_t device, int32_t axis);

// The shard of a whole value (`whole`, bytes of `whole_shape`) that `device`
// holds under `sharding`, and the inverse: a device's shard written into its
// place in the whole value.
std::vector<std::byte> cut_shard(const std::vector<std::byte>& whole, const Shape& whole_shape,
                                 const ValueSharding& sharding, const MeshShape& mesh, size_t device, size_t element_bytes);
void place_shard(std::vector<std::byte>& whole, const Shape& whole_shape, const std::vector<std::byte>& shard,
                 const ValueSharding& sharding, const MeshShape& mesh, size_t device, size_t element_bytes);

class MeshCollectives {
 public:
  // Every device of `mesh` in this process.
  explicit MeshCollectives(MeshShape mesh);
  // This process's `local_devices` of `mesh` (devices process_id() x
  // local_devices onwards) and the other processes' through `exchange`
  // (borrowed; null: one process). Throws InvalidArgumentError when the
  // mesh's devices are not num_processes() x `local_devices`.
  MeshCollectives(MeshShape mesh, size_t local_devices, ProcessExchange* exchange);

  // The mesh index of this process's first device.
  size_t first_local_device() const noexcept { return first_local_; }
  size_t local_device_count() const noexcept { return local_devices_; }

  // Device `device`'s output of collective `key` (a node index), whose
  // operand there is `operand` (bytes of `operand_shape`, `dtype`) and whose
  // output has `output_shape`. Blocks until every device has called it for
  // `key`. Throws UnavailableError once abort() was called.
  std::vector<std::byte> run(size_t key, size_t device, const CollectiveAttributes& attributes, DType dtype,
                             const Shape& operand_shape, const Shape& output_shape, std::vector<std::byte> operand);

  // Wakes every waiting device with an error: one device failed, the
  // others must not wait for it.
  void abort(const std::string& reason);
  void reset();  // before a run, after an abort

 private:
  struct Meeting {
    std::vector<std::vector<std::byte>> operands;
    size_t arrived = 0;   // of this process's devices
    size_t departed = 0;
    bool complete = false;  // every device's operand is in
  };
  // The other processes' operands of `meeting` put in; this process's own
  // sent to them. Run by the last local device to arrive, without the lock
  // (the others wait for `complete`).
  void exchange_operands(Meeting& meeting);
  // Device `device`'s group for `mesh_axes`, in shard order.
  std::vector<size_t> group_of(size_t device, uint32_t mesh_axes) const;
  // Whether some group for `mesh_axes` holds devices of two processes: the
  // same answer in every process, so all exchange or none. Under the lock.
  bool crosses_processes(uint32_t mesh_axes);

  MeshShape mesh_;
  size_t devices_ = 0;  // in the whole mesh
  size_t first_local_ = 0;
  size_t local_devices_ = 0;
  ProcessExchange* exchange_ = nullptr;
  std::map<uint32_t, bool> crosses_processes_;  // by mesh_axes
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<size_t, Meeting> meetings_;
  std::string abort_reason_;
};

}  // namespace accel::graph
