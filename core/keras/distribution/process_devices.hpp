// The devices of a mesh that this process runs: all of them in one process;
// across processes, the block its task names ("/job:worker/replica:0/task:T/
// device:CPU:i" with T this process's id), resolved to its own devices.
#pragma once

#include <accel/device.hpp>
#include <accel/keras/distribution/device_mesh.hpp>

#include <vector>

namespace accel::keras::distribution {

// Throws InvalidArgumentError when the mesh's devices do not split into
// `num_processes` equal blocks, one per task in task order, or a device
// names a task out of range; NotFoundError when a device of this process's
// block does not exist here.
std::vector<Device> process_devices(const DeviceMesh& mesh, int process_id, int num_processes);

}  // namespace accel::keras::distribution
