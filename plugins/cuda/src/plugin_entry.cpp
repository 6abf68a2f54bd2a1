// Entry point and C function table of the CUDA plugin. Each entry point runs
// inside sdk::guard, so no exception crosses the C boundary; device entry
// points take the device mutex, make the device current on the calling thread,
// and report finished ops' CUDA-event timings to the host outside the lock.
#include "cuda_check.hpp"
#include "cuda_device.hpp"
#include "device_discovery.hpp"
#include "epilogue.hpp"
#include "nccl_collectives.hpp"
#include "op_dispatch.hpp"
#include "plugin_host.hpp"
#include "recording.hpp"

#include <accel/plugin/accel_plugin.h>
#include <accel/plugin/plugin_sdk.hpp>

#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace accel::cuda {
namespace {

// Pending timings are drained when this many ops are in flight.
constexpr size_t kMaxPendingOps = 4096;

const AccelHostApi* g_host = nullptr;  // set by initialize; used by entries that only see a device

AccelStatus* make_status(AccelStatusCode code, const char* message) {
  return g_host != nullptr ? g_host->status_create(code, message) : nullptr;
}

AccelStatus* initialize(const AccelHostApi* host, AccelPluginContext** context) {
  if (host == nullptr || host->status_create == nullptr) return nullptr;  // cannot report anything
  if (!ACCEL_STRUCT_HOLDS(host, AccelHostApi, status_create)) return nullptr;
  g_host = host;
  return sdk::guard(host, [&] {
    if (context == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null context");
    if (host->api_major != ACCEL_PLUGIN_API_MAJOR) {
      throw sdk::PluginError(ACCEL_STATUS_FAILED_PRECONDITION,
                             "host plugin API major " + std::to_string(host->api_major) +
                                 ", cuda plugin built for " + std::to_string(ACCEL_PLUGIN_API_MAJOR));
    }
    auto created = std::make_unique<AccelPluginContext>();
    created->host = host;
    created->no_device_reason = discover_gpus(created->gpus);
    if (host->log != nullptr) {
      std::string message = created->gpus.empty()
                                ? "no GPU: " + created->no_device_reason
                                : std::to_string(created->gpus.size()) + " CUDA device(s) found";
      host->log(ACCEL_LOG_INFO, "cuda", message.c_str());
    }
    *context = created.release();
  });
}

AccelStatus* physical_device_count(AccelPluginContext* context, int32_t* count) {
  return sdk::guard(g_host, [&] {
    if (context == nullptr || count == nullptr) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null argument");
    }
    *count = static_cast<int32_t>(context->gpus.size());
  });
}

AccelStatus* physical_device_info(AccelPluginContext* context, int32_t index, AccelDeviceInfo* info) {
  return sdk::guard(g_host, [&] {
    if (context == nullptr || info == nullptr) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null argument");
    }
    if (index < 0 || static_cast<size_t>(index) >= context->gpus.size()) {
      throw sdk::PluginError(ACCEL_STATUS_NOT_FOUND, "no CUDA device " + std::to_string(index));
    }
    if (info->struct_size != 0 && info->struct_size < sizeof(AccelDeviceInfo)) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "AccelDeviceInfo too small");
    }
    const PhysicalGpu& gpu = context->gpus[static_cast<size_t>(index)];
    info->struct_size = sizeof(AccelDeviceInfo);
    info->type = "GPU";
    info->description = gpu.description.c_str();
    info->memory_bytes = gpu.memory_bytes;
    info->num_properties = static_cast<int32_t>(gpu.properties.size());
    info->properties = gpu.properties.data();
  });
}

const char* no_device_reason(AccelPluginContext* context) {
  if (context == nullptr || context->no_device_reason.empty()) return nullptr;
  return context->no_device_reason.c_str();
}

AccelStatus* device_open(AccelPluginContext* context, const AccelDeviceOptions* options,
                         AccelDevice** device) {
  return sdk::guard(g_host, [&] {
    if (context == nullptr || options == nullptr || device == nullptr) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null argument");
    }
    *device = open_device(*context, *options).release();
  });
}

void device_close(AccelDevice* device) {
  if (device == nullptr) return;
  std::vector<AccelOpProfile> profiles;
  try {
    std::lock_guard<std::mutex> lock(device->mutex);
    (void)cudaSetDevice(device->ordinal);
    device->timer.collect(true, profiles);
  } catch (...) {
  }
  try {
    report_profiles(*device, profiles);
  } catch (...) {
  }
  delete device;  // the destructor synchronizes and never throws
}

int32_t supports_op(AccelDevice* device, AccelOp op, AccelDType dtype) {
  if (device == nullptr) return 0;
  return supports(*device, op, dtype);
}

// Since 1.2: every epilogue wherever the plain op runs (epilogue.hpp).
int32_t supports_epilogue(AccelDevice* device, AccelOp op, AccelDType dtype, int32_t epilogue_flags,
                          AccelOp activation) {
  if (device == nullptr) return 0;
  return epilogue_supported(*device, op, dtype, epilogue_flags, activation) ? 1 : 0;
}

AccelStatus* buffer_allocate(AccelDevice* device, uint64_t bytes, AccelBuffer** buffer) {
  return sdk::guard(g_host, [&] {
    if (device == nullptr || buffer == nullptr) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null argument");
    }
    auto created = std::make_unique<AccelBuffer>();
    std::lock_guard<std::mutex> lock(device->mutex);
    make_current(*device);
    created->pointer = device->allocator->allocate(bytes);
    created->bytes = bytes;
    *buffer = created.release();
  });
}

void buffer_free(AccelDevice* device, AccelBuffer* buffer) {
  if (device == nullptr || buffer == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(device->mutex);
    device->allocator->deallocate(buffer->pointer);
  }
  delete buffer;
}

template <typename Body> AccelStatus* with_device(AccelDevice* device, Body&& body) {
  if (device == nullptr) return make_status(ACCEL_STATUS_INVALID_ARGUMENT, "null device");
  std::vector<AccelOpProfile> profiles;
  AccelStatus* status = sdk::guard(device->host, [&] {
    std::lock_guard<std::mutex> lock(device->mutex);
    make_current(*device);
    body(profiles);
  });
  report_profiles(*device, profiles);
  return status;
}

AccelStatus* copy_host_to_device(AccelDevice* device, const void* source, AccelBuffer* destination,
                                 uint64_t offset, uint64_t bytes) {
  return with_device(device, [&](std::vector<AccelOpProfile>&) {
    if (destination == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null buffer");
    accel::cuda::copy_host_to_device(*device, source, *destination, offset, bytes);
  });
}

AccelStatus* copy_device_to_host(AccelDevice* device, AccelBuffer* source, uint64_t offset,
                                 void* destination, uint64_t bytes) {
  return with_device(device, [&](std::vector<AccelOpProfile>& profiles) {
    if (source == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null buffer");
    accel::cuda::copy_device_to_host(*device, *source, offset, destination, bytes);
    device->timer.collect(false, profiles);
  });
}

AccelStatus* copy_device_to_device(AccelDevice* device, AccelBuffer* source, uint64_t source_offset,
                                   AccelBuffer* destination, uint64_t destination_offset,
                                   uint64_t bytes) {
  return with_device(device, [&](std::vector<AccelOpProfile>&) {
    if (source == nullptr || destination == nullptr) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null buffer");
    }
    accel::cuda::copy_device_to_device(*device, *source, source_offset, *destination,
                                       destination_offset, bytes);
  });
}

AccelStatus* execute(AccelDevice* device, const AccelOpCall* call) {
  return with_device(device, [&](std::vector<AccelOpProfile>& profiles) {
    if (call == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null op call");
    if (device->recording != nullptr) {
      // Captured, not run: nothing to time (a replay is one graph launch).
      try {
        execute_op(*device, *call);
      } catch (...) {
        device->recording_failed = true;
        throw;
      }
      return;
    }
    device->timer.collect(device->timer.pending() >= kMaxPendingOps, profiles);
    OpTimer::Mark mark = device->timer.begin(device->stream);
    OpCost cost;
    try {
      cost = execute_op(*device, *call);
    } catch (...) {
      device->timer.discard(mark);
      throw;
    }
    device->timer.end(device->stream, mark, call->sequence, call->op, cost);
  });
}

// Since 1.5: recordings as CUDA graphs (recording.hpp).
AccelStatus* recording_begin(AccelDevice* device) {
  return with_device(device, [&](std::vector<AccelOpProfile>&) { accel::cuda::begin_recording(*device); });
}

AccelStatus* recording_end(AccelDevice* device, AccelRecording** recording) {
  return with_device(device, [&](std::vector<AccelOpProfile>&) {
    if (recording == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null recording pointer");
    *recording = nullptr;
    *recording = accel::cuda::end_recording(*device);
  });
}

AccelStatus* recording_replay(AccelDevice* device, AccelRecording* recording) {
  return with_device(device, [&](std::vector<AccelOpProfile>&) {
    if (recording == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null recording");
    accel::cuda::replay_recording(*device, *recording);
  });
}

void recording_release(AccelDevice* device, AccelRecording* recording) {
  if (device == nullptr || recording == nullptr) return;
  std::lock_guard<std::mutex> lock(device->mutex);
  try {
    make_current(*device);
  } catch (...) {
  }
  accel::cuda::release_recording(*device, recording);
}

AccelStatus* synchronize(AccelDevice* device) {
  return with_device(device, [&](std::vector<AccelOpProfile>& profiles) {
    ACCEL_CUDA_CHECK(cudaStreamSynchronize(device->stream));
    device->timer.collect(true, profiles);
  });
}

AccelStatus* memory_info(AccelDevice* device, AccelMemoryInfo* info) {
  return with_device(device, [&](std::vector<AccelOpProfile>&) {
    if (info == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null info");
    if (info->struct_size != 0 && info->struct_size < sizeof(AccelMemoryInfo)) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "AccelMemoryInfo too small");
    }
    info->struct_size = sizeof(AccelMemoryInfo);
    info->current_bytes = device->allocator->current_bytes();
    info->peak_bytes = device->allocator->peak_bytes();
    info->limit_bytes = device->allocator->limit_bytes();
  });
}

const void* get_extension(AccelPluginContext*, const char* name) {
  if (name != nullptr && std::string_view(name) == ACCEL_NCCL_EXTENSION_NAME) return &nccl_extension();
  return nullptr;
}

const AccelPluginApi kApi = {
    sizeof(AccelPluginApi),
    ACCEL_PLUGIN_API_MAJOR,
    ACCEL_PLUGIN_API_MINOR,
    "cuda",
    "0.1.0",
    initialize,
    physical_device_count,
    physical_device_info,
    no_device_reason,
    device_open,
    device_close,
    supports_op,
    buffer_allocate,
    buffer_free,
    copy_host_to_device,
    copy_device_to_host,
    copy_device_to_device,
    execute,
    synchronize,
    memory_info,
    get_extension,
    supports_epilogue,
    recording_begin,
    recording_end,
    recording_replay,
    recording_release,
};

}  // namespace

const AccelHostApi* plugin_host() { return g_host; }

}  // namespace accel::cuda

extern "C" ACCEL_PLUGIN_EXPORT const AccelPluginApi* ACCEL_PLUGIN_ENTRY_POINT(void) {
  return &accel::cuda::kApi;
}
