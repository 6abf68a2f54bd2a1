// NcclCommunicator: NCCL all-reduces over GPU tensors, through the
// "accel.nccl.v1" extension (accel/plugin/nccl_extension.h) of the plugin that
// owns the devices (the CUDA plugin). One object holds this process's ranks of
// one clique, one communicator per local device. The distribution strategies
// use it: NcclAllReduce across the GPUs of one process, and
// MultiWorkerMirroredStrategy for GPU tensors across workers. A failed call is
// a typed accel::Error.
#pragma once

#include <accel/device.hpp>
#include <accel/tensor.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace accel {

enum class NcclReduction { kSum, kMax, kMin, kAverage };

class NcclCommunicator {
 public:
  using UniqueId = std::array<uint8_t, 128>;

  // Empty when NCCL can run over `devices`; otherwise why not: no devices, a
  // device whose plugin offers no NCCL extension, two devices on one physical
  // GPU (NCCL takes one rank per GPU), devices of different plugins.
  static std::string unavailable_reason(const std::vector<Device>& devices);
  // The NCCL version code (22803 = 2.28.3) loaded by `device`'s plugin; loads NCCL.
  static int version(const Device& device);
  // A new clique id, made by `device`'s plugin (rank 0's process makes it).
  static UniqueId make_unique_id(const Device& device);

  // A clique of exactly `devices`, all in this process (ranks in their order).
  explicit NcclCommunicator(std::vector<Device> devices);
  // This process's ranks first_rank .. first_rank + devices.size() - 1 of a
  // clique of `world_size` ranks made from `id`. Blocks until all ranks joined.
  NcclCommunicator(std::vector<Device> devices, const UniqueId& id, int first_rank, int world_size);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  const std::vector<Device>& devices() const noexcept;
  int world_size() const noexcept;

  // In place: tensors[i] (on devices()[i]; one shape and dtype) becomes the
  // reduction over every rank of the clique. Queued on the devices' streams:
  // later ops on them see the result. Copies of a tensor share its storage,
  // so pass tensors nothing else holds.
  void all_reduce(NcclReduction reduction, const std::vector<Tensor>& tensors) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace accel
