// NCCL collectives of the CUDA plugin (see nccl_collectives.hpp).
#include "nccl_collectives.hpp"

#include "cuda_check.hpp"
#include "cuda_device.hpp"
#include "math_libraries.hpp"
#include "plugin_host.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

// One rank: the NCCL communicator and the opened device whose stream it uses.
struct AccelNcclCommunicator {
  AccelDevice* device = nullptr;
  ncclComm_t comm = nullptr;
  int rank = 0;
  int world_size = 0;
};

namespace accel::cuda {
namespace {

AccelStatusCode status_code_for(ncclResult_t result) {
  switch (result) {
    case ncclInvalidArgument:
    case ncclInvalidUsage: return ACCEL_STATUS_INVALID_ARGUMENT;
    case ncclSystemError:
    case ncclRemoteError: return ACCEL_STATUS_UNAVAILABLE;
    default: return ACCEL_STATUS_INTERNAL;
  }
}

// Throws for a failed NCCL call, with NCCL's own text and its last detailed error.
void check_nccl(const NcclLibrary& nccl, ncclResult_t result, const std::string& what,
                ncclComm_t comm = nullptr) {
  if (result == ncclSuccess) return;
  std::string message = "NCCL error in " + what + ": " + nccl.ncclGetErrorString(result);
  const char* detail = nccl.ncclGetLastError(comm);
  if (detail != nullptr && detail[0] != '\0') message += " (" + std::string(detail) + ")";
  throw sdk::PluginError(status_code_for(result), message);
}

ncclDataType_t nccl_type(AccelDType dtype) {
  switch (dtype) {
    case ACCEL_DTYPE_F32: return ncclFloat32;
    case ACCEL_DTYPE_BF16: return ncclBfloat16;
    case ACCEL_DTYPE_F16: return ncclFloat16;
    case ACCEL_DTYPE_I32: return ncclInt32;
    case ACCEL_DTYPE_I64: return ncclInt64;
    case ACCEL_DTYPE_U8: return ncclUint8;
    default:
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                             std::string("NCCL all-reduce: unsupported dtype ") + sdk::dtype_name(dtype) +
                                 " (float32, bfloat16, float16, int32, int64 or uint8)");
  }
}

ncclRedOp_t nccl_op(AccelNcclReduction reduction) {
  switch (reduction) {
    case ACCEL_NCCL_SUM: return ncclSum;
    case ACCEL_NCCL_MAX: return ncclMax;
    case ACCEL_NCCL_MIN: return ncclMin;
    case ACCEL_NCCL_AVERAGE: return ncclAvg;
  }
  throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                         "NCCL all-reduce: unknown reduction " + std::to_string(static_cast<int>(reduction)));
}

// The devices' mutexes, taken in address order (a fixed order: two calls over
// overlapping devices cannot deadlock) and held while NCCL queues work on their
// streams, so no op of another thread slips in between.
class DeviceLocks {
 public:
  explicit DeviceLocks(std::vector<AccelDevice*> devices) {
    std::sort(devices.begin(), devices.end());
    devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
    for (AccelDevice* device : devices) locks_.emplace_back(device->mutex);
  }

 private:
  std::vector<std::unique_lock<std::mutex>> locks_;
};

// Ends an NCCL group on every exit path (a group left open would swallow the
// next calls of this thread).
class NcclGroup {
 public:
  explicit NcclGroup(const NcclLibrary& nccl) : nccl_(nccl) {
    check_nccl(nccl_, nccl_.ncclGroupStart(), "ncclGroupStart");
  }
  void end() {
    open_ = false;
    check_nccl(nccl_, nccl_.ncclGroupEnd(), "ncclGroupEnd");
  }
  ~NcclGroup() {
    if (open_) (void)nccl_.ncclGroupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;

 private:
  const NcclLibrary& nccl_;
  bool open_ = true;
};

// The device time of one collective on each rank's stream, for the trace: an
// event pair around the NCCL group, reported as "AllReduce" / "collective"
// with the device's op profiles. Marks of a collective that was not queued
// are given back unrecorded.
class CollectiveTiming {
 public:
  explicit CollectiveTiming(std::vector<AccelDevice*> devices) : devices_(std::move(devices)) {
    try {
      for (AccelDevice* device : devices_) {
        ACCEL_CUDA_CHECK(cudaSetDevice(device->ordinal));  // an event belongs to the current device
        marks_.push_back(device->timer.begin(device->stream));
      }
    } catch (...) {
      give_back();
      throw;
    }
  }
  // The collective is queued on every stream: records the end events.
  void finish(double bytes_per_rank) {
    for (size_t i = 0; i < marks_.size(); ++i) {
      AccelDevice& device = *devices_[i];
      ACCEL_CUDA_CHECK(cudaSetDevice(device.ordinal));
      const OpTimer::Mark mark = std::exchange(marks_[i], OpTimer::Mark{});
      device.timer.end_named(device.stream, mark, "AllReduce", "collective", OpCost{0.0, bytes_per_rank});
    }
  }
  ~CollectiveTiming() { give_back(); }
  CollectiveTiming(const CollectiveTiming&) = delete;
  CollectiveTiming& operator=(const CollectiveTiming&) = delete;

 private:
  void give_back() noexcept {
    for (size_t i = 0; i < marks_.size(); ++i) {
      if (marks_[i].begin == nullptr) continue;
      try {
        devices_[i]->timer.discard(marks_[i]);
      } catch (...) {  // out of host memory: the two events leak, nothing else does
      }
      marks_[i] = OpTimer::Mark{};
    }
  }

  std::vector<AccelDevice*> devices_;
  std::vector<OpTimer::Mark> marks_;
};

AccelStatus* version(AccelPluginContext* context, int32_t* version) {
  return sdk::guard(plugin_host(), [&] {
    if (context == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null plugin context");
    if (version == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null version");
    const NcclLibrary& nccl = nccl_library(context->host);
    int code = 0;
    check_nccl(nccl, nccl.ncclGetVersion(&code), "ncclGetVersion");
    *version = code;
  });
}

AccelStatus* unique_id(AccelPluginContext* context, uint8_t id[ACCEL_NCCL_UNIQUE_ID_BYTES]) {
  return sdk::guard(plugin_host(), [&] {
    if (context == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null plugin context");
    if (id == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null id");
    const NcclLibrary& nccl = nccl_library(context->host);
    static_assert(sizeof(ncclUniqueId) == ACCEL_NCCL_UNIQUE_ID_BYTES);
    ncclUniqueId made;
    check_nccl(nccl, nccl.ncclGetUniqueId(&made), "ncclGetUniqueId");
    std::memcpy(id, &made, sizeof(made));
  });
}

AccelStatus* communicators_create(AccelPluginContext* context, AccelDevice* const* devices, int32_t count,
                                  const uint8_t id[ACCEL_NCCL_UNIQUE_ID_BYTES], int32_t first_rank,
                                  int32_t world_size, AccelNcclCommunicator** communicators) {
  return sdk::guard(plugin_host(), [&] {
    if (context == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null plugin context");
    if (devices == nullptr || id == nullptr || communicators == nullptr || count < 1) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "NCCL communicators: no devices");
    }
    if (first_rank < 0 || world_size < 1 || first_rank + count > world_size) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                             "NCCL communicators: ranks " + std::to_string(first_rank) + ".." +
                                 std::to_string(first_rank + count - 1) + " do not fit a clique of " +
                                 std::to_string(world_size));
    }
    const NcclLibrary& nccl = nccl_library(context->host);
    ncclUniqueId clique;
    std::memcpy(&clique, id, sizeof(clique));
    std::vector<std::unique_ptr<AccelNcclCommunicator>> made;
    for (int32_t i = 0; i < count; ++i) {
      if (devices[i] == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null device");
      auto communicator = std::make_unique<AccelNcclCommunicator>();
      communicator->device = devices[i];
      communicator->rank = first_rank + i;
      communicator->world_size = world_size;
      made.push_back(std::move(communicator));
    }
    // Every device must be settable before the group opens: a throw between the
    // group's ncclCommInitRank calls would leave the ranks already queued waiting
    // for the rest.
    for (auto& communicator : made) check_cuda(cudaSetDevice(communicator->device->ordinal), "cudaSetDevice");
    try {
      NcclGroup group(nccl);  // several ranks of one thread must join in one group
      for (auto& communicator : made) {
        check_cuda(cudaSetDevice(communicator->device->ordinal), "cudaSetDevice");
        check_nccl(nccl,
                   nccl.ncclCommInitRank(&communicator->comm, world_size, clique, communicator->rank),
                   "ncclCommInitRank (rank " + std::to_string(communicator->rank) + " of " +
                       std::to_string(world_size) + " on " + communicator->device->name + ")");
      }
      group.end();
    } catch (...) {
      // The group has ended (NcclGroup's destructor); whatever it created is aborted.
      for (auto& communicator : made) {
        if (communicator->comm != nullptr) (void)nccl.ncclCommAbort(communicator->comm);
      }
      throw;
    }
    for (int32_t i = 0; i < count; ++i) communicators[i] = made[static_cast<size_t>(i)].release();
  });
}

void communicator_destroy(AccelNcclCommunicator* communicator) {
  if (communicator == nullptr) return;
  if (communicator->comm != nullptr) {
    try {
      const NcclLibrary& nccl = nccl_library(communicator->device->host);
      std::lock_guard<std::mutex> lock(communicator->device->mutex);
      (void)cudaSetDevice(communicator->device->ordinal);
      // Queued collectives finish first (ncclCommDestroy waits for them).
      (void)nccl.ncclCommDestroy(communicator->comm);
    } catch (...) {
    }
  }
  delete communicator;
}

AccelStatus* all_reduce(AccelNcclCommunicator* const* communicators, int32_t count, AccelBuffer* const* buffers,
                        const uint64_t* byte_offsets, uint64_t element_count, AccelDType dtype,
                        AccelNcclReduction reduction) {
  return sdk::guard(plugin_host(), [&] {
    if (communicators == nullptr || count < 1 || buffers == nullptr || byte_offsets == nullptr) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "NCCL all-reduce: null argument");
    }
    const ncclDataType_t type = nccl_type(dtype);
    const ncclRedOp_t op = nccl_op(reduction);
    if (element_count > std::numeric_limits<uint64_t>::max() / sdk::dtype_size(dtype)) {
      // The byte count would wrap and pass the bounds checks below.
      throw sdk::PluginError(ACCEL_STATUS_OUT_OF_RANGE, "NCCL all-reduce: " + std::to_string(element_count) +
                                                            " elements do not fit any buffer");
    }
    const uint64_t bytes = element_count * sdk::dtype_size(dtype);
    std::vector<AccelDevice*> devices;
    for (int32_t i = 0; i < count; ++i) {
      if (communicators[i] == nullptr || buffers[i] == nullptr) {
        throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "NCCL all-reduce: null communicator or buffer");
      }
      if (byte_offsets[i] > buffers[i]->bytes || bytes > buffers[i]->bytes - byte_offsets[i]) {
        throw sdk::PluginError(ACCEL_STATUS_OUT_OF_RANGE,
                               "NCCL all-reduce: " + std::to_string(bytes) + " bytes at offset " +
                                   std::to_string(byte_offsets[i]) + " pass the end of a buffer of " +
                                   std::to_string(buffers[i]->bytes) + " bytes");
      }
      devices.push_back(communicators[i]->device);
    }
    if (element_count == 0) return;
    const NcclLibrary& nccl = nccl_library(plugin_host());
    DeviceLocks locks(devices);
    CollectiveTiming timing(devices);  // begin events before the group, end events after it
    // Nothing but NCCL calls inside the group: NCCL cancels the whole group
    // when one of its own calls fails, but a non-NCCL failure thrown between
    // them would make the group's end launch the ranks queued so far, which
    // would wait forever for the others. NCCL makes each communicator's device
    // current itself (NCCL's single-thread, multi-device example sets none).
    NcclGroup group(nccl);
    for (int32_t i = 0; i < count; ++i) {
      AccelNcclCommunicator& rank = *communicators[i];
      void* data = static_cast<char*>(buffers[i]->pointer) + byte_offsets[i];
      check_nccl(nccl, nccl.ncclAllReduce(data, data, element_count, type, op, rank.comm, rank.device->stream),
                 "ncclAllReduce on " + rank.device->name, rank.comm);
    }
    group.end();
    timing.finish(static_cast<double>(bytes));
  });
}

const AccelNcclExtension kExtension = {
    sizeof(AccelNcclExtension), version, unique_id, communicators_create, communicator_destroy, all_reduce,
};

}  // namespace

const AccelNcclExtension& nccl_extension() { return kExtension; }

}  // namespace accel::cuda
