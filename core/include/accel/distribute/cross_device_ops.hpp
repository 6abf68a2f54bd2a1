// CrossDeviceOps (tf.distribute.CrossDeviceOps): how a strategy combines the
// replicas' values within one process. Three implementations:
//
//   ReductionToOneDevice   copies every replica's value to one device (the
//                          first replica's unless given), adds them there in
//                          replica order, and copies the result back to each
//                          replica's device. TensorFlow's default off GPUs.
//   HostRingAllReduce      a ring all-reduce for devices whose memory is host
//                          memory (logical CPU devices): the N buffers are cut
//                          into N chunks; N-1 reduce-scatter steps (replica r
//                          passes chunk (r - s) mod N to replica r+1, which adds
//                          it to its own) leave replica r with the full sum of
//                          chunk (r+1) mod N; N-1 all-gather steps pass the
//                          summed chunks around the ring, copying. Each
//                          replica sends 2(N-1)/N of the buffer, none sends
//                          all of it, and every replica ends with bit-identical
//                          values. The steps run in this process on host
//                          buffers; float32 only.
//   NcclAllReduce          NCCL's all-reduce over GPUs (one rank per physical
//                          GPU), queued on the devices' streams: no copy
//                          through the host. TensorFlow's default for
//                          MirroredStrategy on several GPUs, and this
//                          runtime's too (select_cross_device_ops). Made with
//                          a communicator spanning several processes, it
//                          reduces over all of them (MultiWorkerMirrored).
//
// MEAN is SUM divided by the number of replicas; MAX and MIN are not supported
// here (UnimplementedError), as in TensorFlow.
#pragma once

#include <accel/device.hpp>
#include <accel/distribute/collective_group.hpp>
#include <accel/nccl_communicator.hpp>
#include <accel/tensor.hpp>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace accel::distribute {

class CrossDeviceOps {
 public:
  virtual ~CrossDeviceOps() = default;
  virtual std::string name() const = 0;

  // `per_replica[r]` lives on replica r's device; all have one shape and
  // dtype. Returns the reduction once per replica, result r on the device of
  // per_replica[r].
  virtual std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) = 0;

  // Several all-reduces at once (TensorFlow's batch_reduce): values[v] is
  // value v's PerReplica tensors; returns result[v][r]. The default reduces
  // them one after another; an implementation may pack them into one
  // collective (the TPU strategy times one interconnect all-reduce).
  virtual std::vector<std::vector<Tensor>> batch_all_reduce(ReduceOp op,
                                                            const std::vector<std::vector<Tensor>>& values);

  // The reduction on `destination` (Strategy::reduce): added in replica order
  // (across workers: every worker's, so all of them get the same result).
  virtual Tensor reduce_to(ReduceOp op, const std::vector<Tensor>& per_replica, const Device& destination);
};

class ReductionToOneDevice final : public CrossDeviceOps {
 public:
  // Unset: the first replica's device.
  explicit ReductionToOneDevice(std::optional<Device> reduce_to_device = {})
      : reduce_to_device_(reduce_to_device) {}
  std::string name() const override { return "ReductionToOneDevice"; }
  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) override;

 private:
  std::optional<Device> reduce_to_device_;
};

class HostRingAllReduce final : public CrossDeviceOps {
 public:
  std::string name() const override { return "HostRingAllReduce"; }
  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) override;
};

class NcclAllReduce final : public CrossDeviceOps {
 public:
  // A clique of the replicas' devices, made by the first all-reduce.
  NcclAllReduce() = default;
  // This process's ranks of an existing clique (every worker's GPUs): results
  // are reduced over the whole clique.
  explicit NcclAllReduce(std::shared_ptr<NcclCommunicator> communicator) : communicator_(std::move(communicator)) {}
  std::string name() const override { return "NcclAllReduce"; }
  std::vector<Tensor> all_reduce(ReduceOp op, const std::vector<Tensor>& per_replica) override;
  // Over the whole clique (every worker's replicas), then to `destination`.
  Tensor reduce_to(ReduceOp op, const std::vector<Tensor>& per_replica, const Device& destination) override;

 private:
  const NcclCommunicator& communicator_for(const std::vector<Tensor>& per_replica);
  std::mutex mutex_;  // guards the lazily made communicator_
  std::shared_ptr<NcclCommunicator> communicator_;
};

// TensorFlow's choice for MirroredStrategy: NcclAllReduce when the devices
// are two or more GPUs NCCL can drive (one per physical GPU), else
// ReductionToOneDevice.
std::shared_ptr<CrossDeviceOps> select_cross_device_ops(const std::vector<Device>& devices);

}  // namespace accel::distribute
