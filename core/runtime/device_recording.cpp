// DeviceRecording: the plugin's recording functions behind one small class.
#include "runtime/device_recording.hpp"

#include "runtime/loaded_plugin.hpp"
#include "runtime/logical_device.hpp"
#include "runtime/status.hpp"

#include <accel/error.hpp>

namespace accel::detail {

bool DeviceRecording::supported(const LogicalDevice& device) {
  const PluginLibrary& plugin = device.plugin();
  return plugin.has(&AccelPluginApi::recording_begin) && plugin.has(&AccelPluginApi::recording_end) &&
         plugin.has(&AccelPluginApi::recording_replay) && plugin.has(&AccelPluginApi::recording_release);
}

void DeviceRecording::begin(LogicalDevice& device) {
  check_status(device.api().recording_begin(device.handle()), "starting a recording on " + device.name());
}

std::unique_ptr<DeviceRecording> DeviceRecording::end(LogicalDevice& device) {
  AccelRecording* recording = nullptr;
  check_status(device.api().recording_end(device.handle(), &recording), "ending a recording on " + device.name());
  if (recording == nullptr) {
    throw InternalError("plugin '" + device.plugin().name + "' ended a recording on " + device.name() +
                        " without error but gave no recording");
  }
  return std::unique_ptr<DeviceRecording>(new DeviceRecording(device, recording));
}

DeviceRecording::~DeviceRecording() { device_.api().recording_release(device_.handle(), recording_); }

void DeviceRecording::replay() {
  check_status(device_.api().recording_replay(device_.handle(), recording_), "replaying a recording on " + device_.name());
}

}  // namespace accel::detail
