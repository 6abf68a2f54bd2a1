// Applies a run's device configuration to the runtime before it initializes:
// the TPU emulator's settings (preset, what-ifs, timing mode, and the slice of
// a tpu strategy, initialized here), which physical
// devices are visible (the CPU plus the run's device type), memory growth,
// memory limits and logical-device splits. The runtime reads all of these
// once per process, which is why every run executes in its own process.
#pragma once

#include <accel/experiment/experiment.hpp>

#include <string>

namespace accel::experiment {

// The device type a run places its ops on: "CPU", "GPU", "TPU" (or a plugin's type).
std::string run_device_type(const RunConfig& run);
// The device the run's ops are pinned to: "/CPU:0", "/TPU:0", ...
std::string run_device_name(const RunConfig& run);

// A device named as runs and reports name it:
// "/job:localhost/replica:0/task:0/device:TPU:0" -> "/TPU:0" (a short name stays).
std::string short_device_name(const std::string& device);

// Call before the first tensor, op or logical-device listing.
void apply_device_settings(const RunConfig& run);

}  // namespace accel::experiment
