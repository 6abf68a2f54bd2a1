// A plugin with a plausible broadcasting bug, for the test that the
// conformance suite catches it: one device of type NAIVE_BROADCAST that runs
// float32 ADD itself, reading each operand at (output index mod operand size).
// That is right for equal shapes, rank-0 operands and a broadcast trailing row
// ([4,5] + [5]), and wrong for a size-1 axis anywhere else ([4,5] + [4,1],
// [3,1,5] + [1,4,1]). Every other op falls back to the CPU plugin.
#include <accel/plugin/accel_plugin.h>
#include <accel/plugin/plugin_sdk.hpp>

#include <cstdlib>
#include <cstring>

namespace {

const AccelHostApi* host = nullptr;

AccelStatus* initialize(const AccelHostApi* host_api, AccelPluginContext** context) {
  host = host_api;
  *context = nullptr;
  return nullptr;
}

AccelStatus* physical_device_count(AccelPluginContext*, int32_t* count) {
  *count = 1;
  return nullptr;
}

AccelStatus* physical_device_info(AccelPluginContext*, int32_t, AccelDeviceInfo* info) {
  info->type = "NAIVE_BROADCAST";
  info->description = "float32 ADD with modulo broadcasting (a deliberate bug)";
  info->memory_bytes = 1ull << 30;
  info->num_properties = 0;
  info->properties = nullptr;
  return nullptr;
}

AccelStatus* device_open(AccelPluginContext*, const AccelDeviceOptions*, AccelDevice** device) {
  static int only_device = 0;
  *device = reinterpret_cast<AccelDevice*>(&only_device);
  return nullptr;
}

void device_close(AccelDevice*) {}

int32_t supports_op(AccelDevice*, AccelOp op, AccelDType dtype) {
  return op == ACCEL_OP_ADD && dtype == ACCEL_DTYPE_F32;
}

AccelStatus* buffer_allocate(AccelDevice*, uint64_t bytes, AccelBuffer** buffer) {
  void* memory = std::malloc(bytes == 0 ? 1 : bytes);
  if (memory == nullptr) return host->status_create(ACCEL_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  *buffer = static_cast<AccelBuffer*>(memory);
  return nullptr;
}

void buffer_free(AccelDevice*, AccelBuffer* buffer) { std::free(buffer); }

char* address(AccelBuffer* buffer, uint64_t offset) { return reinterpret_cast<char*>(buffer) + offset; }

AccelStatus* copy_host_to_device(AccelDevice*, const void* source, AccelBuffer* destination, uint64_t offset,
                                 uint64_t bytes) {
  std::memcpy(address(destination, offset), source, bytes);
  return nullptr;
}

AccelStatus* copy_device_to_host(AccelDevice*, AccelBuffer* source, uint64_t offset, void* destination,
                                 uint64_t bytes) {
  std::memcpy(destination, address(source, offset), bytes);
  return nullptr;
}

AccelStatus* copy_device_to_device(AccelDevice*, AccelBuffer* source, uint64_t source_offset,
                                   AccelBuffer* destination, uint64_t destination_offset, uint64_t bytes) {
  std::memmove(address(destination, destination_offset), address(source, source_offset), bytes);
  return nullptr;
}

const float* floats(const AccelTensor& tensor) {
  return reinterpret_cast<const float*>(address(tensor.buffer, tensor.byte_offset));
}

AccelStatus* execute(AccelDevice*, const AccelOpCall* call) {
  return accel::sdk::guard(host, [&] {
    if (call->op != ACCEL_OP_ADD) throw accel::sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED, "only ADD runs here");
    const AccelTensor& a = call->inputs[0];
    const AccelTensor& b = call->inputs[1];
    const AccelTensor& y = call->outputs[0];
    const int64_t count = accel::sdk::element_count(y);
    const int64_t a_count = accel::sdk::element_count(a), b_count = accel::sdk::element_count(b);
    auto* out = reinterpret_cast<float*>(address(y.buffer, y.byte_offset));
    for (int64_t index = 0; index < count; ++index) {
      out[index] = floats(a)[index % a_count] + floats(b)[index % b_count];  // the bug: not NumPy's rule
    }
  });
}

AccelStatus* synchronize(AccelDevice*) { return nullptr; }

const AccelPluginApi plugin_api = {
    sizeof(AccelPluginApi), ACCEL_PLUGIN_API_MAJOR, ACCEL_PLUGIN_API_MINOR, "naive_broadcast", "0.1.0",
    &initialize, &physical_device_count, &physical_device_info,
    /*no_device_reason=*/nullptr, &device_open, &device_close, &supports_op,
    &buffer_allocate, &buffer_free, &copy_host_to_device, &copy_device_to_host, &copy_device_to_device,
    &execute, &synchronize, /*memory_info=*/nullptr, /*get_extension=*/nullptr,
    /*supports_epilogue=*/nullptr,
};

}  // namespace

extern "C" ACCEL_PLUGIN_EXPORT const AccelPluginApi* ACCEL_PLUGIN_ENTRY_POINT(void) { return &plugin_api; }
