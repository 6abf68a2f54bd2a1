#include <accel/distribute/mirrored_strategy.hpp>

#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/placement.hpp>

namespace accel::distribute {
namespace {

// TensorFlow's choice when no devices are given: every GPU, else the CPU.
std::vector<Device> default_mirrored_devices() {
  std::vector<Device> devices;
  for (const config::LogicalDevice& gpu : config::list_logical_devices("GPU")) devices.push_back(find_device(gpu.name));
  if (devices.empty()) devices.push_back(find_device("/CPU:0"));
  return devices;
}

std::vector<Device> find_devices(const std::vector<std::string>& names) {
  if (names.empty()) return default_mirrored_devices();
  std::vector<Device> devices;
  for (const std::string& name : names) devices.push_back(find_device(name));
  return devices;
}

}  // namespace

MirroredStrategy::MirroredStrategy(const std::vector<std::string>& devices,
                                   std::shared_ptr<CrossDeviceOps> cross_device_ops)
    : MirroredStrategy(find_devices(devices), std::move(cross_device_ops)) {}

MirroredStrategy::MirroredStrategy(std::vector<Device> devices, std::shared_ptr<CrossDeviceOps> cross_device_ops)
    : Strategy(devices, cross_device_ops ? std::move(cross_device_ops) : select_cross_device_ops(devices)) {
  // NCCL's requirements are known now; TensorFlow would only fail at the first step.
  if (dynamic_cast<const NcclAllReduce*>(&this->cross_device_ops()) != nullptr) {
    const std::string reason = NcclCommunicator::unavailable_reason(replica_devices());
    if (!reason.empty()) throw InvalidArgumentError("MirroredStrategy: NcclAllReduce cannot run: " + reason);
  }
}

}  // namespace accel::distribute
