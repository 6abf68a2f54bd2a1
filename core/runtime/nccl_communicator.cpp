// NcclCommunicator (see accel/nccl_communicator.hpp): the host side of a
// plugin's accel.nccl.v1 extension, and why NCCL cannot run on some devices.
#include <accel/nccl_communicator.hpp>

#include <accel/error.hpp>
#include <accel/plugin/nccl_extension.h>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <map>
#include <optional>

#include "runtime/logical_device.hpp"
#include "runtime/status.hpp"

namespace accel {
namespace {

// The NCCL extension of `device`'s plugin, or nullopt when it offers none.
std::optional<runtime::PluginExtension> extension_of(const Device& device) {
  std::optional<runtime::PluginExtension> found =
      runtime::plugin_extension(device.plugin_name(), ACCEL_NCCL_EXTENSION_NAME);
  if (!found || found->table == nullptr) return std::nullopt;
  const auto* table = static_cast<const AccelNcclExtension*>(found->table);
  if (!ACCEL_STRUCT_HOLDS(table, AccelNcclExtension, all_reduce)) return std::nullopt;
  return found;
}

const AccelNcclExtension& table_of(const runtime::PluginExtension& extension) {
  return *static_cast<const AccelNcclExtension*>(extension.table);
}

runtime::PluginExtension require_extension(const std::vector<Device>& devices) {
  const std::string reason = NcclCommunicator::unavailable_reason(devices);
  if (!reason.empty()) throw FailedPreconditionError("NCCL cannot run here: " + reason);
  return *extension_of(devices.front());
}

AccelNcclReduction to_c(NcclReduction reduction) {
  switch (reduction) {
    case NcclReduction::kSum: return ACCEL_NCCL_SUM;
    case NcclReduction::kMax: return ACCEL_NCCL_MAX;
    case NcclReduction::kMin: return ACCEL_NCCL_MIN;
    case NcclReduction::kAverage: return ACCEL_NCCL_AVERAGE;
  }
  return ACCEL_NCCL_SUM;
}

// A fresh id for a clique of exactly `devices` (all in this process).
NcclCommunicator::UniqueId local_clique_id(const std::vector<Device>& devices) {
  require_extension(devices);
  return NcclCommunicator::make_unique_id(devices.front());
}

}  // namespace

struct NcclCommunicator::State {
  std::vector<Device> devices;
  runtime::PluginExtension extension;
  std::vector<AccelNcclCommunicator*> ranks;  // ranks[i] drives devices[i]
  int world_size = 0;
};

std::string NcclCommunicator::unavailable_reason(const std::vector<Device>& devices) {
  if (devices.empty()) return "no devices";
  std::map<std::string, std::string> physical_owner;  // physical device -> first logical device on it
  for (const Device& device : devices) {
    if (!device.valid()) return "an invalid device";
    if (device.plugin_name() != devices.front().plugin_name()) {
      return fmt::format("{} and {} belong to different plugins ({} and {})", devices.front().short_name(),
                         device.short_name(), devices.front().plugin_name(), device.plugin_name());
    }
    const std::string& physical = device.internal()->physical_name();
    auto [owner, inserted] = physical_owner.emplace(physical, device.short_name());
    if (!inserted) {
      return fmt::format("{} and {} are both on physical device {} (NCCL takes one rank per GPU)", owner->second,
                         device.short_name(), physical);
    }
  }
  if (!extension_of(devices.front())) {
    return fmt::format("the {} plugin of {} offers no NCCL collectives ({})", devices.front().plugin_name(),
                       devices.front().short_name(), ACCEL_NCCL_EXTENSION_NAME);
  }
  return "";
}

int NcclCommunicator::version(const Device& device) {
  const runtime::PluginExtension extension = require_extension({device});
  int32_t code = 0;
  detail::check_status(table_of(extension).version(extension.context, &code), "NCCL version");
  return code;
}

NcclCommunicator::UniqueId NcclCommunicator::make_unique_id(const Device& device) {
  const runtime::PluginExtension extension = require_extension({device});
  UniqueId id{};
  detail::check_status(table_of(extension).unique_id(extension.context, id.data()), "NCCL unique id");
  return id;
}

NcclCommunicator::NcclCommunicator(std::vector<Device> devices)
    : NcclCommunicator(devices, local_clique_id(devices), 0, static_cast<int>(devices.size())) {}

NcclCommunicator::NcclCommunicator(std::vector<Device> devices, const UniqueId& id, int first_rank, int world_size)
    : state_(std::make_unique<State>()) {
  state_->extension = require_extension(devices);
  state_->devices = std::move(devices);
  state_->world_size = world_size;
  std::vector<AccelDevice*> handles;
  for (const Device& device : state_->devices) handles.push_back(device.internal()->handle());
  state_->ranks.assign(handles.size(), nullptr);
  detail::check_status(table_of(state_->extension)
                           .communicators_create(state_->extension.context, handles.data(),
                                                 static_cast<int32_t>(handles.size()), id.data(), first_rank,
                                                 world_size, state_->ranks.data()),
                       fmt::format("NCCL communicators for ranks {}..{} of {}", first_rank,
                                   first_rank + static_cast<int>(handles.size()) - 1, world_size));
}

NcclCommunicator::~NcclCommunicator() {
  if (!state_) return;
  for (AccelNcclCommunicator* rank : state_->ranks) table_of(state_->extension).communicator_destroy(rank);
}

const std::vector<Device>& NcclCommunicator::devices() const noexcept { return state_->devices; }
int NcclCommunicator::world_size() const noexcept { return state_->world_size; }

void NcclCommunicator::all_reduce(NcclReduction reduction, const std::vector<Tensor>& tensors) const {
  if (tensors.size() != state_->devices.size()) {
    throw InvalidArgumentError(fmt::format("NCCL all-reduce: {} tensors for {} devices", tensors.size(),
                                           state_->devices.size()));
  }
  std::vector<AccelBuffer*> buffers;
  std::vector<uint64_t> offsets;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& tensor = tensors[i];
    if (!tensor.defined()) throw InvalidArgumentError("NCCL all-reduce: an undefined tensor");
    if (tensor.device() != state_->devices[i]) {
      throw InvalidArgumentError(fmt::format("NCCL all-reduce: tensor {} is on {}, its rank drives {}", i,
                                             tensor.device().short_name(), state_->devices[i].short_name()));
    }
    if (tensor.shape() != tensors.front().shape() || tensor.dtype() != tensors.front().dtype()) {
      throw InvalidArgumentError(fmt::format("NCCL all-reduce: tensors differ in shape or dtype ({} vs {})",
                                             tensors.front().shape().to_string(), tensor.shape().to_string()));
    }
    buffers.push_back(tensor.storage()->buffer);
    offsets.push_back(tensor.byte_offset());
  }
  const Tensor& first = tensors.front();
  detail::check_status(
      table_of(state_->extension)
          .all_reduce(state_->ranks.data(), static_cast<int32_t>(state_->ranks.size()), buffers.data(),
                      offsets.data(), static_cast<uint64_t>(first.element_count()),
                      static_cast<AccelDType>(first.dtype()), to_c(reduction)),
      fmt::format("NCCL all-reduce of {} {}", first.shape().to_string(), dtype_name(first.dtype())));
}

}  // namespace accel
