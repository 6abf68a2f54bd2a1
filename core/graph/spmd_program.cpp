#include "graph/spmd_program.hpp"

#include "graph/mesh_collectives.hpp"

#include <accel/device.hpp>
#include <accel/error.hpp>

#include <fmt/format.h>

#include <exception>
#include <thread>

namespace accel::graph {
namespace {

std::vector<std::byte> host_bytes(const Tensor& tensor) {
  std::vector<std::byte> bytes(static_cast<size_t>(tensor.byte_size()));
  if (!bytes.empty()) tensor.copy_to_host(bytes.data());
  return bytes;
}

}  // namespace

SpmdProgram::SpmdProgram(const Graph& partitioned, const SpmdPartition& partition, std::vector<Device> devices)
    : partition_(partition), devices_(std::move(devices)),
      collectives_(std::make_unique<MeshCollectives>(partition.mesh)) {
  if (static_cast<int64_t>(devices_.size()) != partition_.mesh.device_count()) {
    throw InvalidArgumentError(fmt::format("SPMD program: the mesh has {} devices; {} given",
                                           partition_.mesh.device_count(), devices_.size()));
  }
  for (size_t id = 0; id < partitioned.values.size(); ++id) {
    if (partitioned.values[id].kind != ValueKind::kCapture) continue;
    captures_.push_back(static_cast<ValueId>(id));
    whole_.push_back(partitioned.values[id].tensor);
  }
  for (size_t index = 0; index < partitioned.nodes.size(); ++index) {
    const Node& node = partitioned.nodes[index];
    if (node.refresh) refreshed_.push_back(Refreshed{index, node.op, node.refresh});
  }
  shards_.resize(devices_.size());
  for (size_t device = 0; device < devices_.size(); ++device) {
    detail::LogicalDevice* target = devices_[device].internal();
    Graph graph = partitioned;
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
    for (size_t capture = 0; capture < captures_.size(); ++capture) {
      Tensor shard = shard_of(whole_[capture], captures_[capture], device);
      graph.values[static_cast<size_t>(captures_[capture])].tensor = shard;
      shards_[device].push_back(std::move(shard));
    }
    BufferPlan plan = plan_buffers(graph);
    auto executor = std::make_unique<GraphExecutor>(std::move(graph), std::move(plan));
    executor->set_collective_handler([this, device](size_t index, const Node& node, const Tensor& operand,
                                                    const Tensor& output) {
      std::vector<std::byte> result =
          collectives_->run(index, device, node.attributes_as<CollectiveAttributes>(), operand.dtype(), operand.shape(),
                            output.shape(), host_bytes(operand));
      Tensor written = output;
      written.assign(Tensor::from_host(result.data(), output.shape(), output.dtype(), devices_[device]));
    });
    executors_.push_back(std::move(executor));
  }
}

SpmdProgram::~SpmdProgram() = default;

Tensor SpmdProgram::shard_of(const Tensor& whole, ValueId id, size_t device) const {
  const size_t element_bytes = dtype_size(whole.dtype());
  const std::vector<std::byte> shard =
      cut_shard(host_bytes(whole), whole.shape(), sharding(id), partition_.mesh, device, element_bytes);
  const Shape shard_shape = local_shape(whole.shape(), sharding(id), partition_.mesh, fmt::format("value {}", id));
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
        collectives_->abort(fmt::format("device {} failed: {}", device, error.what()));
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

void SpmdProgram::gather_captures() {
  for (size_t capture = 0; capture < captures_.size(); ++capture) {
    Tensor& whole = whole_[capture];
    std::vector<std::byte> bytes(static_cast<size_t>(whole.byte_size()));
    const size_t element_bytes = dtype_size(whole.dtype());
    for (size_t device = 0; device < devices_.size(); ++device) {
      place_shard(bytes, whole.shape(), host_bytes(shards_[device][capture]), sharding(captures_[capture]),
                  partition_.mesh, device, element_bytes);
    }
    whole.assign(Tensor::from_host(bytes.data(), whole.shape(), whole.dtype(), whole.device()));
  }
}

}  // namespace accel::graph
