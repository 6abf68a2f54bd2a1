// DeviceRecording: ops a device recorded once and runs again on the same
// buffers with one call (plugin API 1.5; a CUDA graph on the GPU). Owns the
// plugin's AccelRecording and releases it. Compiled steps use it to replay
// runs of nodes without dispatching them one by one (graph_executor.cpp).
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <memory>

namespace accel::detail {

class LogicalDevice;

class DeviceRecording {
 public:
  // Whether the device's plugin records (all four 1.5 functions present).
  static bool supported(const LogicalDevice& device);

  // From here on the device records the ops it is given instead of running
  // them. Throws the plugin's error.
  static void begin(LogicalDevice& device);
  // Stops recording and returns what was recorded. Throws the plugin's error
  // (an op it could not record); the device has stopped recording either way.
  static std::unique_ptr<DeviceRecording> end(LogicalDevice& device);

  ~DeviceRecording();
  DeviceRecording(const DeviceRecording&) = delete;
  DeviceRecording& operator=(const DeviceRecording&) = delete;

  // Runs the recorded ops again. Throws the plugin's error.
  void replay();

 private:
  DeviceRecording(LogicalDevice& device, AccelRecording* recording) : device_(device), recording_(recording) {}

  LogicalDevice& device_;
  AccelRecording* recording_;
};

}  // namespace accel::detail
