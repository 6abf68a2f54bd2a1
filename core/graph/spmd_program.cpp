#include "graph/spmd_program.hpp"

#include "graph/compiler.hpp"
#include "graph/mesh_collectives.hpp"

#include <accel/device.hpp>
#include <accel/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <thread>

namespace accel::graph {
namespace {

std::vector<std::byte> host_bytes(const Tensor& tensor) {
  std::vector<std::byte> bytes(static_cast<size_t>(tensor.byte_size()));
  if (!bytes.empty()) tensor.copy_to_host(bytes.data());
  return bytes;
}

}  // namespace

SpmdProgram::SpmdProgram(const Graph& partitioned, const SpmdPartition& partition, std::vector<Device> devices,
                         ProcessExchange* exchange, const std::optional<FunctionOptions>& passes)
    : partition_(partition), devices_(std::move(devices)), exchange_(exchange) {
  if (!exchange_ && static_cast<int64_t>(devices_.size()) != partition_.mesh.device_count()) {
    throw InvalidArgumentError(fmt::format("SPMD program: the mesh has {} devices; {} given",
                                           partition_.mesh.device_count(), devices_.size()));
  }
  collectives_ = std::make_unique<MeshCollectives>(partition_.mesh, devices_.size(), exchange_);
  if (exchange_ && exchange_->num_processes() == 1) exchange_ = nullptr;

  Graph program = partitioned;
  if (passes) {
    // Placed on the first device: fusion asks it what it runs (the mesh's
    // devices are of one kind).
    for (Node& node : program.nodes) node.device = devices_.front().internal();
    for (Value& value : program.values) value.device = devices_.front().internal();
    statistics_ = optimize_graph(program, *passes);
  }
  // The captures the program still reads, found again by their tensors.
  std::map<uint64_t, ValueId> capture_by_tensor;
  for (size_t id = 0; id < program.values.size(); ++id) {
    if (program.values[id].kind == ValueKind::kCapture) {
      capture_by_tensor.emplace(program.values[id].tensor.id(), static_cast<ValueId>(id));
    }
  }
  for (size_t id = 0; id < partitioned.values.size(); ++id) {
    const Value& value = partitioned.values[id];
    if (value.kind != ValueKind::kCapture) continue;
    const auto found = capture_by_tensor.find(value.tensor.id());
    if (found == capture_by_tensor.end()) continue;  // pruned: nothing reads or writes it
    captures_.push_back(Capture{found->second, sharding(static_cast<ValueId>(id)), value.tensor});
  }
  for (size_t index = 0; index < program.nodes.size(); ++index) {
    const Node& node = program.nodes[index];
    if (node.refresh) refreshed_.push_back(Refreshed{index, node.op, node.refresh});
  }
  shards_.resize(devices_.size());
  for (size_t device = 0; device < devices_.size(); ++device) {
    detail::LogicalDevice* target = devices_[device].internal();
    Graph graph = program;
    for (Node& node : graph.nodes) {
      node.device = target;
      if (node.op == kHostNode && device != 0) node.host_work = [] {};
      if (node.refresh) node.refresh = [](int32_t, void*) {};  // refreshed by run(), before the devices start
    }
    for (size_t id = 0; id < graph.values.size(); ++id) {
      Value& value = graph.values[id];
      value.device = target;
      if (value.kind == ValueKind::kConstant) value.tensor = value.tensor.to(devices_[device]);
    }
    for (const Capture& capture : captures_) {
      Tensor shard = cut(capture.whole, capture.sharding, device, capture.id);
      graph.values[static_cast<size_t>(capture.id)].tensor = shard;
      shards_[device].push_back(std::move(shard));
    }
    BufferPlan plan = plan_buffers(graph);
    if (device == 0) record_plan(plan, statistics_);
    auto executor = std::make_unique<GraphExecutor>(std::move(graph), std::move(plan));
    executor->set_collective_handler([this, device](size_t index, const Node& node, const Tensor& operand,
                                                    const Tensor& output) {
      std::vector<std::byte> result =
          collectives_->run(index, mesh_device(device), node.attributes_as<CollectiveAttributes>(), operand.dtype(),
                            operand.shape(), output.shape(), host_bytes(operand));
      Tensor written = output;
      written.assign(Tensor::from_host(result.data(), output.shape(), output.dtype(), devices_[device]));
    });
    executors_.push_back(std::move(executor));
  }
}

SpmdProgram::~SpmdProgram() = default;

size_t SpmdProgram::mesh_device(size_t device) const { return collectives_->first_local_device() + device; }

Tensor SpmdProgram::shard_of(const Tensor& whole, ValueId id, size_t device) const {
  return cut(whole, sharding(id), device, id);
}

Tensor SpmdProgram::cut(const Tensor& whole, const ValueSharding& layout, size_t device, ValueId id) const {
  const size_t element_bytes = dtype_size(whole.dtype());
  const std::vector<std::byte> shard =
      cut_shard(host_bytes(whole), whole.shape(), layout, partition_.mesh, mesh_device(device), element_bytes);
  const Shape shard_shape = local_shape(whole.shape(), layout, partition_.mesh, fmt::format("value {}", id));
  return Tensor::from_host(shard.data(), shard_shape, whole.dtype(), devices_[device]);
}

std::vector<std::vector<Tensor>> SpmdProgram::run(const std::vector<std::vector<Tensor>>& arguments) {
  if (arguments.size() != devices_.size()) {
    throw InvalidArgumentError(fmt::format("SPMD program: arguments for {} devices; the mesh has {}", arguments.size(),
                                           devices_.size()));
  }
  collectives_->reset();
  for (const Refreshed& node : refreshed_) {
    std::vector<std::byte>& first = executors_.front()->node_attributes(node.node);
    node.refresh(node.op, first.data());
    for (size_t device = 1; device < executors_.size(); ++device) executors_[device]->node_attributes(node.node) = first;
  }
  std::vector<std::vector<Tensor>> results(devices_.size());
  std::vector<std::exception_ptr> errors(devices_.size());
  std::vector<std::thread> threads;
  for (size_t device = 0; device < devices_.size(); ++device) {
    threads.emplace_back([&, device] {
      try {
        results[device] = executors_[device]->run(arguments[device]);
      } catch (const std::exception& error) {
        errors[device] = std::current_exception();
        collectives_->abort(fmt::format("device {} failed: {}", mesh_device(device), error.what()));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  // The first error that is not another device's abandonment.
  std::exception_ptr first;
  for (const std::exception_ptr& error : errors) {
    if (!error) continue;
    try {
      std::rethrow_exception(error);
    } catch (const UnavailableError&) {
      if (!first) first = error;
    } catch (...) {
      std::rethrow_exception(error);
    }
  }
  if (first) std::rethrow_exception(first);
  return results;
}

std::vector<std::vector<std::vector<std::byte>>> SpmdProgram::exchange_capture_shards() {
  const size_t mesh_devices = static_cast<size_t>(partition_.mesh.device_count());
  std::vector<std::vector<std::vector<std::byte>>> shards(mesh_devices,
                                                          std::vector<std::vector<std::byte>>(captures_.size()));
  const bool any_sharded = std::any_of(captures_.begin(), captures_.end(),
                                       [](const Capture& capture) { return !capture.sharding.is_replicated(); });
  if (!exchange_ || !any_sharded) return shards;  // every process holds the whole values already
  // Every process holds the same captures with the same shard shapes, so one
  // exchange carries them all: device by device, capture by capture.
  std::vector<size_t> shard_bytes(captures_.size(), 0);
  std::vector<std::byte> local;
  for (size_t device = 0; device < devices_.size(); ++device) {
    for (size_t capture = 0; capture < captures_.size(); ++capture) {
      if (captures_[capture].sharding.is_replicated()) continue;  // whole on every device already
      const std::vector<std::byte> bytes = host_bytes(shards_[device][capture]);
      shard_bytes[capture] = bytes.size();
      local.insert(local.end(), bytes.begin(), bytes.end());
    }
  }
  const std::vector<std::vector<std::byte>> gathered = exchange_->all_gather(local);
  for (size_t process = 0; process < gathered.size(); ++process) {
    if (process == static_cast<size_t>(exchange_->process_id())) continue;
    if (gathered[process].size() != local.size()) {
      throw InternalError(fmt::format("SPMD program: process {} sent {} bytes of shards, this process {}; the "
                                      "processes do not run the same program",
                                      process, gathered[process].size(), local.size()));
    }
    size_t at = 0;
    for (size_t device = 0; device < devices_.size(); ++device) {
      for (size_t capture = 0; capture < captures_.size(); ++capture) {
        if (captures_[capture].sharding.is_replicated()) continue;
        const std::byte* from = gathered[process].data() + at;
        shards[process * devices_.size() + device][capture].assign(from, from + shard_bytes[capture]);
        at += shard_bytes[capture];
      }
    }
  }
  return shards;
}

void SpmdProgram::scatter_captures() {
  for (size_t device = 0; device < devices_.size(); ++device) {
    for (size_t capture = 0; capture < captures_.size(); ++capture) {
      // In place: the device's program holds this tensor's buffer.
      shards_[device][capture].assign(cut(captures_[capture].whole, captures_[capture].sharding, device, captures_[capture].id));
    }
  }
}

void SpmdProgram::gather_captures() {
  std::vector<std::vector<std::vector<std::byte>>> remote = exchange_capture_shards();
  for (size_t capture = 0; capture < captures_.size(); ++capture) {
    Tensor& whole = captures_[capture].whole;
    std::vector<std::byte> bytes(static_cast<size_t>(whole.byte_size()));
    const size_t element_bytes = dtype_size(whole.dtype());
    const ValueSharding& layout = captures_[capture].sharding;
    for (size_t device = 0; device < devices_.size(); ++device) {
      place_shard(bytes, whole.shape(), host_bytes(shards_[device][capture]), layout, partition_.mesh,
                  mesh_device(device), element_bytes);
    }
    if (!layout.is_replicated()) {
      for (size_t device = 0; device < remote.size(); ++device) {
        if (!remote[device][capture].empty()) {
          place_shard(bytes, whole.shape(), remote[device][capture], layout, partition_.mesh, device, element_bytes);
        }
      }
    }
    whole.assign(Tensor::from_host(bytes.data(), whole.shape(), whole.dtype(), whole.device()));
  }
}

}  // namespace accel::graph
