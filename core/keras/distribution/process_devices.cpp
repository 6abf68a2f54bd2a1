#include "process_devices.hpp"

#include <accel/error.hpp>
#include <accel/placement.hpp>

#include <fmt/format.h>

namespace accel::keras::distribution {

std::vector<Device> process_devices(const DeviceMesh& mesh, int process_id, int num_processes) {
  std::vector<Device> devices;
  if (num_processes <= 1) {
    for (const std::string& name : mesh.devices()) devices.push_back(find_device(name));
    return devices;
  }
  const int64_t count = mesh.device_count();
  if (count % num_processes != 0) {
    throw InvalidArgumentError(fmt::format(
        "a mesh of {} devices across {} processes: every process must hold as many of its devices (a multiple of {})",
        count, num_processes, num_processes));
  }
  const int64_t per_process = count / num_processes;
  for (int64_t index = 0; index < count; ++index) {
    const std::string& text = mesh.devices()[static_cast<size_t>(index)];
    const DeviceName name = DeviceName::parse(text);
    if (name.task < 0) {
      throw InvalidArgumentError(fmt::format(
          "mesh device {} ({}) names no task; a mesh across {} processes names each device's task, as "
          "keras::distribution::list_devices does (\"/job:worker/replica:0/task:1/device:CPU:0\")",
          index, text, num_processes));
    }
    if (name.task >= num_processes) {
      throw InvalidArgumentError(fmt::format(
          "mesh device {} ({}) names task {}, but the mesh spans {} processes: tasks 0 to {} "
          "(keras::distribution::list_devices names them)",
          index, text, name.task, num_processes, num_processes - 1));
    }
    const int64_t expected_task = index / per_process;
    if (name.task != expected_task) {
      throw InvalidArgumentError(fmt::format(
          "mesh device {} ({}) is on task {}; a mesh across {} processes holds {} devices of each, task by task, so "
          "device {} must be on task {}",
          index, text, name.task, num_processes, per_process, index, expected_task));
    }
    if (name.task != process_id) continue;
    devices.push_back(find_device(fmt::format("/device:{}:{}", name.type, name.index < 0 ? 0 : name.index)));
  }
  return devices;
}

}  // namespace accel::keras::distribution
