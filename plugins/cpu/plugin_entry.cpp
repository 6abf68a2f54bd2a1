// The CPU plugin's entry point and its AccelPluginApi table: thin C functions
// that check arguments, run the work inside sdk::guard (no exception crosses
// the boundary) and forward to cpu_device.cpp and host_buffers.cpp.
#include "cpu_plugin.hpp"

#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace accel::cpu_plugin {
namespace {

// The host API given to initialize(); guard() needs it to create statuses.
const AccelHostApi* g_host = nullptr;

template <typename Body>
AccelStatus* guarded(Body&& body) noexcept {
  return sdk::guard(g_host, std::forward<Body>(body));
}

AccelStatus* initialize(const AccelHostApi* host, AccelPluginContext** context) noexcept {
  if (host == nullptr) return nullptr;  // cannot even make a status; the host checks its own pointer
  if (context == nullptr) return host->status_create(ACCEL_STATUS_INVALID_ARGUMENT, "null context pointer");
  g_host = host;
  return guarded([&] {
    apply_thread_environment();
    auto created = std::make_unique<AccelPluginContext>();
    created->host = host;
    describe_machine(*created);
    *context = created.release();  // lives as long as the process: plugins are never unloaded
  });
}

AccelStatus* physical_device_count(AccelPluginContext*, int32_t* count) noexcept {
  return guarded([&] {
    sdk::require_argument(count != nullptr, "null count");
    *count = 1;
  });
}

AccelStatus* physical_device_info(AccelPluginContext* context, int32_t index, AccelDeviceInfo* info) noexcept {
  return guarded([&] {
    sdk::require_argument(context != nullptr && info != nullptr, "null argument");
    if (index != 0) throw sdk::PluginError(ACCEL_STATUS_NOT_FOUND, "the cpu plugin has one device, index 0");
    sdk::require_argument(info->struct_size >= sizeof(AccelDeviceInfo), "AccelDeviceInfo struct too small");
    info->type = "CPU";
    info->description = context->description.c_str();
    info->memory_bytes = context->memory_bytes;
    info->num_properties = static_cast<int32_t>(context->properties.size());
    info->properties = context->properties.data();
  });
}

const char* no_device_reason(AccelPluginContext*) noexcept { return nullptr; }

AccelStatus* device_open(AccelPluginContext* context, const AccelDeviceOptions* options,
                         AccelDevice** device) noexcept {
  return guarded([&] {
    sdk::require_argument(context != nullptr && options != nullptr && device != nullptr, "null argument");
    sdk::require_argument(options->struct_size >= sizeof(AccelDeviceOptions), "AccelDeviceOptions struct too small");
    if (options->physical_index != 0) {
      throw sdk::PluginError(ACCEL_STATUS_NOT_FOUND, "the cpu plugin has one device, index 0");
    }
    apply_thread_option(options->options);  // process-wide: all CPU devices share the cores
    *device = new AccelDevice{context, options->host_context};
  });
}

void device_close(AccelDevice* device) noexcept { delete device; }

// ACCEL_CPU_POOL_FILTER_GRADIENT=0 declines MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER
// (1.4), so that compiled steps run the two ops it stands for: what the
// fusion saves can be measured in the same build (docs/PERFORMANCE.md).
bool pool_filter_gradient_declined() {
  const char* setting = std::getenv("ACCEL_CPU_POOL_FILTER_GRADIENT");
  return setting != nullptr && std::string_view(setting) == "0";
}

// Every op of the op set, FUSED_ELEMENTWISE (1.2) included, for the dtypes the
// host kernels define (docs/op-set.md).
int32_t supports_op(AccelDevice*, AccelOp op, AccelDType dtype) noexcept {
  if (op == ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER && pool_filter_gradient_declined()) return 0;
  return host_kernels::supports(op, dtype) ? 1 : 0;
}

// Since 1.2: every epilogue of MATMUL, CONV2D and CONV2D_BACKWARD_INPUT.
int32_t supports_epilogue(AccelDevice*, AccelOp op, AccelDType dtype, int32_t epilogue_flags,
                          AccelOp activation) noexcept {
  return host_kernels::supports_epilogue(op, dtype, epilogue_flags, activation) ? 1 : 0;
}

AccelStatus* buffer_allocate(AccelDevice*, uint64_t bytes, AccelBuffer** buffer) noexcept {
  return guarded([&] {
    sdk::require_argument(buffer != nullptr, "null buffer");
    *buffer = allocate_buffer(bytes);
  });
}

void buffer_free(AccelDevice*, AccelBuffer* buffer) noexcept { free_buffer(buffer); }

AccelStatus* copy_host_to_device(AccelDevice*, const void* source, AccelBuffer* destination, uint64_t offset,
                                 uint64_t bytes) noexcept {
  return guarded([&] {
    sdk::require_argument(destination != nullptr && (source != nullptr || bytes == 0), "null argument");
    copy_in(source, *destination, offset, bytes);
  });
}

AccelStatus* copy_device_to_host(AccelDevice*, AccelBuffer* source, uint64_t offset, void* destination,
                                 uint64_t bytes) noexcept {
  return guarded([&] {
    sdk::require_argument(source != nullptr && (destination != nullptr || bytes == 0), "null argument");
    copy_out(*source, offset, destination, bytes);
  });
}

AccelStatus* copy_device_to_device(AccelDevice*, AccelBuffer* source, uint64_t source_offset,
                                   AccelBuffer* destination, uint64_t destination_offset,
                                   uint64_t bytes) noexcept {
  return guarded([&] {
    sdk::require_argument(source != nullptr && destination != nullptr, "null buffer");
    copy_between(*source, source_offset, *destination, destination_offset, bytes);
  });
}

AccelStatus* execute(AccelDevice* device, const AccelOpCall* call) noexcept {
  return guarded([&] {
    sdk::require_argument(device != nullptr && call != nullptr, "null argument");
    execute_call(*device, *call);
  });
}

AccelStatus* synchronize(AccelDevice*) noexcept { return nullptr; }  // execution is synchronous

constexpr AccelPluginApi kApi = {
    sizeof(AccelPluginApi),
    ACCEL_PLUGIN_API_MAJOR,
    ACCEL_PLUGIN_API_MINOR,
    kPluginName,
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
    nullptr,  // memory_info: the core accounts memory
    nullptr,  // get_extension: none
    supports_epilogue,
    nullptr,  // recording_begin .. recording_release: no recording: ops run as they are called, there is no launch to save
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace
}  // namespace accel::cpu_plugin

extern "C" ACCEL_PLUGIN_EXPORT const AccelPluginApi* ACCEL_PLUGIN_ENTRY_POINT(void) {
  return &accel::cpu_plugin::kApi;
}
