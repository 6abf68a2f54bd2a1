// The smallest useful accel backend: one device of type "EXAMPLE" that runs
// float32 MATMUL itself and leaves every other op to the runtime, which runs
// it on the CPU plugin. Copy this file to start a new backend; docs/plugin-guide.md
// walks through it. Buffers live in host memory to keep the example short; a
// real accelerator would allocate device memory in buffer_allocate and copy in
// copy_host_to_device / copy_device_to_host.
#include <accel/plugin/accel_plugin.h>
#include <accel/plugin/plugin_sdk.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {

const AccelHostApi* host = nullptr;

// Our device: it only needs to remember where to report op timings.
struct ExampleDevice {
  void* host_context;
};

AccelStatus* initialize(const AccelHostApi* host_api, AccelPluginContext** context) {
  host = host_api;
  *context = nullptr;  // no plugin-wide state
  return nullptr;
}

AccelStatus* physical_device_count(AccelPluginContext*, int32_t* count) {
  *count = 1;
  return nullptr;
}

AccelStatus* physical_device_info(AccelPluginContext*, int32_t, AccelDeviceInfo* info) {
  // peak_flops and hbm_bandwidth from the start (docs/plugin-guide.md section 5),
  // so that the experiment runner reads the roofline's roof instead of
  // measuring it: the naive loop's order of magnitude on one core of a
  // current x86 CPU (one multiply-add per cycle at ~2 GHz), and the host
  // memory it works in (one DDR4/DDR5 channel, ~20 GB/s).
  static const AccelProperty properties[] = {
      {"kernels", "naive float32 matmul"}, {"peak_flops", "4e9"}, {"hbm_bandwidth", "2e10"}};
  info->type = "EXAMPLE";
  info->description = "accel example backend (host memory)";
  info->memory_bytes = 1ull << 30;
  info->num_properties = sizeof properties / sizeof properties[0];
  info->properties = properties;
  return nullptr;
}

AccelStatus* device_open(AccelPluginContext*, const AccelDeviceOptions* options, AccelDevice** device) {
  return accel::sdk::guard(host, [&] {
    *device = reinterpret_cast<AccelDevice*>(new ExampleDevice{options->host_context});
  });
}

void device_close(AccelDevice* device) { delete reinterpret_cast<ExampleDevice*>(device); }

// The one op this backend implements.
int32_t supports_op(AccelDevice*, AccelOp op, AccelDType dtype) {
  return op == ACCEL_OP_MATMUL && dtype == ACCEL_DTYPE_F32;
}

AccelStatus* buffer_allocate(AccelDevice*, uint64_t bytes, AccelBuffer** buffer) {
  void* memory = std::malloc(bytes);
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

// C[b] = op(A[b]) x op(B[b]) over the batch; B may be shared by every batch entry.
void matmul(const AccelOpCall& call) {
  const auto& attributes = accel::sdk::attributes_of<AccelMatmulAttributes>(call);
  const AccelTensor& a = call.inputs[0];
  const AccelTensor& b = call.inputs[1];
  const AccelTensor& c = call.outputs[0];
  const int64_t m = c.shape[c.rank - 2], n = c.shape[c.rank - 1];
  const int64_t k = attributes.transpose_a ? a.shape[a.rank - 2] : a.shape[a.rank - 1];
  const int64_t batches = accel::sdk::element_count(c) / (m * n == 0 ? 1 : m * n);
  const auto* a_data = reinterpret_cast<const float*>(address(a.buffer, a.byte_offset));
  const auto* b_data = reinterpret_cast<const float*>(address(b.buffer, b.byte_offset));
  auto* c_data = reinterpret_cast<float*>(address(c.buffer, c.byte_offset));
  for (int64_t batch = 0; batch < batches; ++batch) {
    const float* a_batch = a_data + batch * m * k;
    const float* b_batch = b.rank > 2 ? b_data + batch * k * n : b_data;
    float* c_batch = c_data + batch * m * n;
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t column = 0; column < n; ++column) {
        float sum = 0.0f;
        for (int64_t inner = 0; inner < k; ++inner) {
          float left = attributes.transpose_a ? a_batch[inner * m + row] : a_batch[row * k + inner];
          float right = attributes.transpose_b ? b_batch[column * k + inner] : b_batch[inner * n + column];
          sum += left * right;
        }
        c_batch[row * n + column] = sum;
      }
    }
  }
}

AccelStatus* execute(AccelDevice* device, const AccelOpCall* call) {
  return accel::sdk::guard(host, [&] {
    if (call->op != ACCEL_OP_MATMUL) {
      throw accel::sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED, "the example backend only runs MATMUL");
    }
    auto start = std::chrono::steady_clock::now();
    matmul(*call);
    AccelOpProfile profile{};
    profile.struct_size = sizeof(profile);
    profile.sequence = call->sequence;
    profile.op = call->op;
    profile.time_source = ACCEL_TIME_WALL;
    profile.duration_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    host->report_op(reinterpret_cast<ExampleDevice*>(device)->host_context, &profile);
  });
}

AccelStatus* synchronize(AccelDevice*) { return nullptr; }

const AccelPluginApi plugin_api = {
    sizeof(AccelPluginApi), ACCEL_PLUGIN_API_MAJOR, ACCEL_PLUGIN_API_MINOR, "example", "0.1.0",
    &initialize, &physical_device_count, &physical_device_info,
    /*no_device_reason=*/nullptr, &device_open, &device_close, &supports_op,
    &buffer_allocate, &buffer_free, &copy_host_to_device, &copy_device_to_host, &copy_device_to_device,
    &execute, &synchronize, /*memory_info=*/nullptr, /*get_extension=*/nullptr,
    /*supports_epilogue=*/nullptr,
};

}  // namespace

extern "C" ACCEL_PLUGIN_EXPORT const AccelPluginApi* ACCEL_PLUGIN_ENTRY_POINT(void) { return &plugin_api; }
