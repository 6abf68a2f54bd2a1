// MirroredStrategy (tf.distribute.MirroredStrategy): synchronous data
// parallelism in one process, one replica per device: logical CPU devices
// (split the CPU with config::set_logical_device_configuration first), GPUs,
// or emulated TPU cores. Variables made in scope() are mirrored (a copy per
// device); each step's gradients are SUM-all-reduced by the CrossDeviceOps
// before the identical update of every copy.
#pragma once

#include <accel/distribute/strategy.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel::distribute {

class MirroredStrategy : public Strategy {
 public:
  // No devices: every GPU, else /CPU:0 (as TensorFlow). No cross_device_ops:
  // select_cross_device_ops (NcclAllReduce on several GPUs NCCL can drive,
  // else ReductionToOneDevice). Duplicate or unknown devices are errors.
  explicit MirroredStrategy(const std::vector<std::string>& devices = {},
                            std::shared_ptr<CrossDeviceOps> cross_device_ops = nullptr);
  std::string name() const override { return "MirroredStrategy"; }

 protected:
  MirroredStrategy(std::vector<Device> devices, std::shared_ptr<CrossDeviceOps> cross_device_ops);
};

}  // namespace accel::distribute
