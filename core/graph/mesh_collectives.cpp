#include "graph/mesh_collectives.hpp"

#include <accel/error.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace accel::graph {
namespace {

// A value's bytes seen as [outer, size of `dimension`, inner] blocks.
struct Blocks {
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t inner_bytes = 1;
};

Blocks blocks_of(const Shape& shape, int32_t dimension, size_t element_bytes) {
  Blocks blocks;
  blocks.inner_bytes = static_cast<int64_t>(element_bytes);
  for (int32_t d = 0; d < shape.rank(); ++d) {
    if (d < dimension) blocks.outer *= shape[d];
    if (d == dimension) blocks.extent = shape[d];
    if (d > dimension) blocks.inner_bytes *= shape[d];
  }
  return blocks;
}

// Slice `index` of `count` equal slices of `bytes` along `dimension`.
std::vector<std::byte> slice_of(const std::vector<std::byte>& bytes, const Shape& shape, int32_t dimension, size_t index,
                                size_t count, size_t element_bytes) {
  const Blocks blocks = blocks_of(shape, dimension, element_bytes);
  const int64_t part = blocks.extent / static_cast<int64_t>(count);
  const size_t part_bytes = static_cast<size_t>(part * blocks.inner_bytes);
  std::vector<std::byte> out(static_cast<size_t>(blocks.outer) * part_bytes);
  for (int64_t o = 0; o < blocks.outer; ++o) {
    const size_t from = static_cast<size_t>((o * blocks.extent + static_cast<int64_t>(index) * part) * blocks.inner_bytes);
    std::memcpy(out.data() + static_cast<size_t>(o) * part_bytes, bytes.data() + from, part_bytes);
  }
  return out;
}

// The pieces (each of `piece_shape`) put side by side along `dimension`.
std::vector<std::byte> concatenated(const std::vector<const std::vector<std::byte>*>& pieces, const Shape& piece_shape,
                                    int32_t dimension, size_t element_bytes) {
  const Blocks blocks = blocks_of(piece_shape, dimension, element_bytes);
  const size_t piece_block = static_cast<size_t>(blocks.extent * blocks.inner_bytes);
  std::vector<std::byte> out(static_cast<size_t>(blocks.outer) * piece_block * pieces.size());
  size_t at = 0;
  for (int64_t o = 0; o < blocks.outer; ++o) {
    for (const std::vector<std::byte>* piece : pieces) {
      std::memcpy(out.data() + at, piece->data() + static_cast<size_t>(o) * piece_block, piece_block);
      at += piece_block;
    }
  }
  return out;
}

double load(const std::byte* at, DType dtype) {
  switch (dtype) {
    case DType::kFloat32: { float v; std::memcpy(&v, at, 4); return v; }
    case DType::kBFloat16: { uint16_t v; std::memcpy(&v, at, 2); return sdk::bf16_to_float(v); }
    case DType::kFloat16: { uint16_t v; std::memcpy(&v, at, 2); return sdk::f16_to_float(v); }
    case DType::kInt32: { int32_t v; std::memcpy(&v, at, 4); return v; }
    case DType::kInt64: { int64_t v; std::memcpy(&v, at, 8); return static_cast<double>(v); }
    case DType::kUInt8:
    case DType::kBool: return static_cast<double>(static_cast<uint8_t>(*at));
  }
  return 0;
}

void store(std::byte* at, DType dtype, double value) {
  switch (dtype) {
    case DType::kFloat32: { const float v = static_cast<float>(value); std::memcpy(at, &v, 4); return; }
    case DType::kBFloat16: { const uint16_t v = sdk::float_to_bf16(static_cast<float>(value)); std::memcpy(at, &v, 2); return; }
    case DType::kFloat16: { const uint16_t v = sdk::float_to_f16(static_cast<float>(value)); std::memcpy(at, &v, 2); return; }
    case DType::kInt32: { const auto v = static_cast<int32_t>(value); std::memcpy(at, &v, 4); return; }
    case DType::kInt64: { const auto v = static_cast<int64_t>(value); std::memcpy(at, &v, 8); return; }
    case DType::kUInt8:
    case DType::kBool: *at = static_cast<std::byte>(static_cast<uint8_t>(value)); return;
  }
}

// The members' operands combined element by element, in member order (the
// same order on every device: every device gets the same bits).
std::vector<std::byte> reduced(const std::vector<const std::vector<std::byte>*>& operands, DType dtype,
                               PartialReduction reduction) {
  const size_t element_bytes = dtype_size(dtype);
  const size_t count = operands.front()->size() / element_bytes;
  std::vector<std::byte> out(operands.front()->size());
  for (size_t element = 0; element < count; ++element) {
    double total = load(operands.front()->data() + element * element_bytes, dtype);
    for (size_t member = 1; member < operands.size(); ++member) {
      const double value = load(operands[member]->data() + element * element_bytes, dtype);
      switch (reduction) {
        case PartialReduction::kMax: total = std::max(total, value); break;
        case PartialReduction::kMin: total = std::min(total, value); break;
        default: total += value;
      }
    }
    if (reduction == PartialReduction::kMean) total /= static_cast<double>(operands.size());
    store(out.data() + element * element_bytes, dtype, total);
  }
  return out;
}

// Copies the box of `box_shape` at `offsets` of a whole value between the
// whole and a packed shard, row by row of the last dimension.
void copy_box(std::byte* whole, const Shape& whole_shape, std::byte* shard, const Shape& box_shape,
              const std::vector<int64_t>& offsets, size_t element_bytes, bool into_shard) {
  const int32_t rank = whole_shape.rank();
  if (rank == 0) {
    if (into_shard) std::memcpy(shard, whole, element_bytes); else std::memcpy(whole, shard, element_bytes);
    return;
  }
  const size_t row_bytes = static_cast<size_t>(box_shape[rank - 1]) * element_bytes;
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);  // within the box, last dimension left at 0
  const int64_t rows = box_shape.element_count() / std::max<int64_t>(box_shape[rank - 1], 1);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t whole_offset = 0;
    for (int32_t d = 0; d < rank; ++d) whole_offset = whole_offset * whole_shape[d] + index[static_cast<size_t>(d)] + offsets[static_cast<size_t>(d)];
    std::byte* at_whole = whole + static_cast<size_t>(whole_offset) * element_bytes;
    std::byte* at_shard = shard + static_cast<size_t>(row) * row_bytes;
    if (into_shard) std::memcpy(at_shard, at_whole, row_bytes); else std::memcpy(at_whole, at_shard, row_bytes);
    for (int32_t d = rank - 2; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < box_shape[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

// The box a device's shard is in the whole value: its shape and offsets.
std::pair<Shape, std::vector<int64_t>> shard_box(const Shape& whole_shape, const ValueSharding& sharding,
                                                 const MeshShape& mesh, size_t device) {
  Shape box = local_shape(whole_shape, sharding, mesh, "a sharded value");
  std::vector<int64_t> offsets(static_cast<size_t>(box.rank()), 0);
  for (int32_t d = 0; d < box.rank(); ++d) {
    const int32_t axis = static_cast<size_t>(d) < sharding.dimension_axes.size() ? sharding.dimension_axes[static_cast<size_t>(d)] : kReplicated;
    if (axis != kReplicated) offsets[static_cast<size_t>(d)] = box[d] * static_cast<int64_t>(mesh_coordinate(mesh, device, axis));
  }
  return {std::move(box), std::move(offsets)};
}

}  // namespace

size_t mesh_coordinate(const MeshShape& mesh, size_t device, int32_t axis) {
  size_t stride = 1;
  for (int32_t later = axis + 1; later < mesh.rank(); ++later) stride *= static_cast<size_t>(mesh.axis_sizes[static_cast<size_t>(later)]);
  return (device / stride) % static_cast<size_t>(mesh.axis_sizes[static_cast<size_t>(axis)]);
}

std::vector<std::byte> cut_shard(const std::vector<std::byte>& whole, const Shape& whole_shape,
                                 const ValueSharding& sharding, const MeshShape& mesh, size_t device, size_t element_bytes) {
  const auto [box, offsets] = shard_box(whole_shape, sharding, mesh, device);
  std::vector<std::byte> shard(static_cast<size_t>(box.element_count()) * element_bytes);
  copy_box(const_cast<std::byte*>(whole.data()), whole_shape, shard.data(), box, offsets, element_bytes, true);
  return shard;
}

void place_shard(std::vector<std::byte>& whole, const Shape& whole_shape, const std::vector<std::byte>& shard,
                 const ValueSharding& sharding, const MeshShape& mesh, size_t device, size_t element_bytes) {
  const auto [box, offsets] = shard_box(whole_shape, sharding, mesh, device);
  copy_box(whole.data(), whole_shape, const_cast<std::byte*>(shard.data()), box, offsets, element_bytes, false);
}

MeshCollectives::MeshCollectives(MeshShape mesh) : mesh_(std::move(mesh)) {
  devices_ = static_cast<size_t>(mesh_.device_count());
  local_devices_ = devices_;
}

MeshCollectives::MeshCollectives(MeshShape mesh, size_t local_devices, ProcessExchange* exchange)
    : mesh_(std::move(mesh)), local_devices_(local_devices), exchange_(exchange) {
  devices_ = static_cast<size_t>(mesh_.device_count());
  const size_t processes = exchange_ ? static_cast<size_t>(exchange_->num_processes()) : 1;
  if (local_devices_ == 0 || local_devices_ * processes != devices_) {
    throw InvalidArgumentError(fmt::format(
        "SPMD collectives: a mesh of {} devices cannot be {} processes x {} devices each; every process must hold "
        "as many of the mesh's devices",
        devices_, processes, local_devices_));
  }
  if (exchange_) first_local_ = static_cast<size_t>(exchange_->process_id()) * local_devices_;
  if (processes == 1) exchange_ = nullptr;  // nothing to exchange
}

std::vector<size_t> MeshCollectives::group_of(size_t device, uint32_t mesh_axes) const {
  auto coordinate = [&](size_t of, int32_t axis) { return mesh_coordinate(mesh_, of, axis); };
  std::vector<size_t> group;
  for (size_t other = 0; other < devices_; ++other) {
    bool same = true;
    for (int32_t axis = 0; axis < mesh_.rank() && same; ++axis) {
      if (((mesh_axes >> axis) & 1u) == 0) same = coordinate(other, axis) == coordinate(device, axis);
    }
    if (same) group.push_back(other);
  }
  return group;
}

std::vector<std::byte> MeshCollectives::run(size_t key, size_t device, const CollectiveAttributes& attributes, DType dtype,
                                            const Shape& operand_shape, const Shape& output_shape,
                                            std::vector<std::byte> operand) {
  const std::vector<size_t> group = group_of(device, attributes.mesh_axes);
  const size_t position = static_cast<size_t>(std::find(group.begin(), group.end(), device) - group.begin());
  const size_t element_bytes = dtype_size(dtype);
  if (attributes.kind == CollectiveKind::kLocalSlice) {
    return slice_of(operand, operand_shape, attributes.dimension, position, group.size(), element_bytes);
  }

  if (device < first_local_ || device >= first_local_ + local_devices_) {
    throw InternalError(fmt::format("SPMD collective: device {} is not one of this process's devices {} to {}", device,
                                    first_local_, first_local_ + local_devices_ - 1));
  }
  std::unique_lock<std::mutex> lock(mutex_);
  Meeting& meeting = meetings_[key];  // std::map: stays where it is while others are added
  if (meeting.operands.empty()) meeting.operands.resize(devices_);
  meeting.operands[device] = std::move(operand);
  if (++meeting.arrived == local_devices_ && abort_reason_.empty()) {
    if (exchange_ && crosses_processes(attributes.mesh_axes)) {
      // The other local devices wait for `complete`: only this thread touches the operands now.
      lock.unlock();
      try {
        exchange_operands(meeting);
      } catch (const std::exception& error) {
        abort(fmt::format("the exchange with the other processes failed: {}", error.what()));
        throw UnavailableError(
            fmt::format("SPMD collective {} (node {}): the exchange with the other processes failed: {}",
                        collective_name(attributes.kind), key, error.what()));
      }
      lock.lock();
    }
    meeting.complete = true;
    changed_.notify_all();
  }
  changed_.wait(lock, [&] { return meeting.complete || !abort_reason_.empty(); });
  if (!abort_reason_.empty()) throw UnavailableError("SPMD collective abandoned: " + abort_reason_);
  std::vector<const std::vector<std::byte>*> members;
  for (size_t member : group) members.push_back(&meeting.operands[member]);
  lock.unlock();

  std::vector<std::byte> output;
  switch (attributes.kind) {
    case CollectiveKind::kAllGather:
      output = concatenated(members, operand_shape, attributes.dimension, element_bytes);
      break;
    case CollectiveKind::kAllReduce:
      output = reduced(members, dtype, attributes.reduction);
      break;
    case CollectiveKind::kReduceScatter:
      output = slice_of(reduced(members, dtype, attributes.reduction), operand_shape, attributes.dimension, position,
                        group.size(), element_bytes);
      break;
    case CollectiveKind::kAllToAll: {
      std::vector<std::vector<std::byte>> pieces;
      for (const std::vector<std::byte>* member : members) {
        pieces.push_back(slice_of(*member, operand_shape, attributes.dimension, position, group.size(), element_bytes));
      }
      std::vector<int64_t> piece_dims = operand_shape.dims();
      piece_dims[static_cast<size_t>(attributes.dimension)] /= static_cast<int64_t>(group.size());
      std::vector<const std::vector<std::byte>*> parts;
      for (const std::vector<std::byte>& piece : pieces) parts.push_back(&piece);
      output = concatenated(parts, Shape(piece_dims), attributes.source_dimension, element_bytes);
      break;
    }
    case CollectiveKind::kLocalSlice: break;
  }
  if (output.size() != static_cast<size_t>(output_shape.element_count()) * element_bytes) {
    throw InternalError(fmt::format("SPMD collective {}: made {} bytes for an output of shape {}",
                                    collective_name(attributes.kind), output.size(), output_shape.to_string()));
  }

  lock.lock();
  if (++meeting.departed == local_devices_) meetings_.erase(key);
  return output;
}

bool MeshCollectives::crosses_processes(uint32_t mesh_axes) {
  auto found = crosses_processes_.find(mesh_axes);
  if (found != crosses_processes_.end()) return found->second;
  bool crosses = false;
  for (size_t device = 0; device < devices_ && !crosses; ++device) {
    for (size_t member : group_of(device, mesh_axes)) {
      crosses = crosses || member / local_devices_ != device / local_devices_;
    }
  }
  crosses_processes_[mesh_axes] = crosses;
  return crosses;
}

void MeshCollectives::exchange_operands(Meeting& meeting) {
  // Every device's operand has one size (the program is the same on every
  // device), so a process's bytes are its devices' operands back to back.
  const size_t operand_bytes = meeting.operands[first_local_].size();
  std::vector<std::byte> local(operand_bytes * local_devices_);
  for (size_t device = 0; device < local_devices_; ++device) {
    const std::vector<std::byte>& operand = meeting.operands[first_local_ + device];
    if (operand.size() != operand_bytes) {
      throw InternalError(fmt::format("SPMD collective: device {}'s operand has {} bytes, device {}'s {}",
                                      first_local_ + device, operand.size(), first_local_, operand_bytes));
    }
    if (operand_bytes > 0) std::memcpy(local.data() + device * operand_bytes, operand.data(), operand_bytes);
  }
  const std::vector<std::vector<std::byte>> gathered = exchange_->all_gather(local);
  if (gathered.size() * local_devices_ != devices_) {
    throw InternalError(fmt::format("SPMD collective: the exchange returned {} processes' operands; expected {}",
                                    gathered.size(), devices_ / local_devices_));
  }
  for (size_t process = 0; process < gathered.size(); ++process) {
    if (process * local_devices_ == first_local_) continue;  // our own
    if (gathered[process].size() != local.size()) {
      throw InternalError(fmt::format("SPMD collective: process {} sent {} bytes of operands, this process {}; the "
                                      "processes do not run the same program",
                                      process, gathered[process].size(), local.size()));
    }
    for (size_t device = 0; device < local_devices_; ++device) {
      const std::byte* from = gathered[process].data() + device * operand_bytes;
      meeting.operands[process * local_devices_ + device].assign(from, from + operand_bytes);
    }
  }
}

void MeshCollectives::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (abort_reason_.empty()) abort_reason_ = reason.empty() ? "a device failed" : reason;
  changed_.notify_all();
}

void MeshCollectives::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  abort_reason_.clear();
  meetings_.clear();
}

}  // namespace accel::graph
