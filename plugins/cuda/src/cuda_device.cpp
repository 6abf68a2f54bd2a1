// Opening and closing a logical CUDA device: stream, allocator mode and limit,
// pinned staging buffers, precision options; the cuBLAS / cuDNN handles on
// first use.
#include "cuda_device.hpp"

#include "conv_algorithm_choice.hpp"
#include "cuda_check.hpp"
#include "math_libraries.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

namespace accel::cuda {
namespace {

// True when "key=value;key=value" holds `key` with value "1" / "true".
bool option_enabled(const char* options, std::string_view key) {
  if (options == nullptr) return false;
  std::string_view text(options);
  while (!text.empty()) {
    size_t end = text.find(';');
    std::string_view item = text.substr(0, end);
    size_t equals = item.find('=');
    if (equals != std::string_view::npos && item.substr(0, equals) == key) {
      std::string_view value = item.substr(equals + 1);
      return value == "1" || value == "true";
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return false;
}

const char* host_setting(const AccelHostApi* host, const char* key) {
  if (host == nullptr || !ACCEL_STRUCT_HOLDS(host, AccelHostApi, get_setting) || host->get_setting == nullptr) {
    return nullptr;
  }
  return host->get_setting(key);
}

void log(const AccelHostApi* host, AccelLogLevel level, const std::string& message) {
  if (host != nullptr && host->log != nullptr) host->log(level, "cuda", message.c_str());
}

}  // namespace

void make_current(const AccelDevice& device) {
  ACCEL_CUDA_CHECK(cudaSetDevice(device.ordinal));
}

cublasHandle_t cublas_handle(AccelDevice& device) {
  if (device.cublas != nullptr) return device.cublas;
  const CublasLibrary& cublas = cublas_library(device.host);
  cublasHandle_t handle = nullptr;
  if (cublasStatus_t status = cublas.cublasCreate_v2(&handle); status != CUBLAS_STATUS_SUCCESS) {
    throw sdk::PluginError(status == CUBLAS_STATUS_ALLOC_FAILED ? ACCEL_STATUS_RESOURCE_EXHAUSTED
                                                                : ACCEL_STATUS_INTERNAL,
                           device.name + ": cublasCreate failed: " +
                               cublas.cublasGetStatusString(status));
  }
  if (cublas.cublasSetStream_v2(handle, device.stream) != CUBLAS_STATUS_SUCCESS ||
      cublas.cublasSetMathMode(
          handle, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                            CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) !=
          CUBLAS_STATUS_SUCCESS) {
    (void)cublas.cublasDestroy_v2(handle);
    throw sdk::PluginError(ACCEL_STATUS_INTERNAL, device.name + ": cuBLAS stream / math mode setup failed");
  }
  device.cublas = handle;
  return handle;
}

cudnnHandle_t cudnn_handle(AccelDevice& device) {
  if (device.cudnn != nullptr) return device.cudnn;
  const CudnnLibrary& cudnn = cudnn_library(device.host);
  cudnnHandle_t handle = nullptr;
  if (cudnnStatus_t status = cudnn.cudnnCreate(&handle); status != CUDNN_STATUS_SUCCESS) {
    throw sdk::PluginError(status == CUDNN_STATUS_ALLOC_FAILED ? ACCEL_STATUS_RESOURCE_EXHAUSTED
                                                               : ACCEL_STATUS_UNAVAILABLE,
                           device.name + ": cudnnCreate failed: " + cudnn.cudnnGetErrorString(status));
  }
  if (cudnn.cudnnSetStream(handle, device.stream) != CUDNN_STATUS_SUCCESS) {
    (void)cudnn.cudnnDestroy(handle);
    throw sdk::PluginError(ACCEL_STATUS_INTERNAL, device.name + ": cudnnSetStream failed");
  }
  device.cudnn = handle;
  return handle;
}

std::unique_ptr<AccelDevice> open_device(AccelPluginContext& context,
                                         const AccelDeviceOptions& options) {
  if (options.struct_size < sizeof(AccelDeviceOptions)) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "AccelDeviceOptions too small");
  }
  if (options.physical_index < 0 ||
      static_cast<size_t>(options.physical_index) >= context.gpus.size()) {
    throw sdk::PluginError(ACCEL_STATUS_NOT_FOUND,
                           "no CUDA device with physical index " +
                               std::to_string(options.physical_index) + " (found " +
                               std::to_string(context.gpus.size()) + ")");
  }
  const int32_t logical_count = std::max<int32_t>(options.logical_count, 1);
  if (options.logical_index < 0 || options.logical_index >= logical_count) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                           "logical index " + std::to_string(options.logical_index) +
                               " outside [0, " + std::to_string(logical_count) + ")");
  }
  const PhysicalGpu& gpu = context.gpus[static_cast<size_t>(options.physical_index)];

  auto device = std::make_unique<AccelDevice>();
  device->context = &context;
  device->host = context.host;
  device->host_context = options.host_context;
  device->ordinal = gpu.ordinal;
  device->name = "GPU:" + std::to_string(options.physical_index);
  if (logical_count > 1) device->name += "/" + std::to_string(options.logical_index);
  const char* tf32_setting = host_setting(context.host, "cuda.allow_tf32");
  device->allow_tf32 = option_enabled(options.options, "tf32") ||
                       (tf32_setting != nullptr && std::strcmp(tf32_setting, "1") == 0);
  device->cudnn_autotune = cudnn_autotune_enabled(host_setting(context.host, "cuda.cudnn_autotune"));

  make_current(*device);
  ACCEL_CUDA_CHECK(cudaStreamCreateWithFlags(&device->stream, cudaStreamNonBlocking));

  // cuBLAS and cuDNN handles are created by the first op that needs them
  // (cublas_handle / cudnn_handle): opening a device loads neither library.

  // Memory: an explicit limit wins; otherwise growth may use this device's share
  // of the GPU, and a reservation takes ~90% of free memory (TensorFlow's rule).
  CachingAllocator::Options allocator_options;
  allocator_options.ordinal = gpu.ordinal;
  allocator_options.growth = options.memory_growth != 0;
  allocator_options.stream = device->stream;
  allocator_options.device_name = device->name;
  const uint64_t share = gpu.memory_bytes / static_cast<uint64_t>(logical_count);
  if (options.memory_limit_bytes > 0) {
    allocator_options.limit_bytes = options.memory_limit_bytes;
  } else if (allocator_options.growth) {
    allocator_options.limit_bytes = share;
  } else {
    size_t free_bytes = 0, total_bytes = 0;
    ACCEL_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const uint64_t reserve = std::min<uint64_t>(free_bytes / 10 * 9, share / 10 * 9);
    allocator_options.limit_bytes = reserve / (uint64_t{2} << 20) * (uint64_t{2} << 20);
  }
  device->allocator = std::make_unique<CachingAllocator>(allocator_options);

  for (StagingBuffer& staging : device->staging) {
    ACCEL_CUDA_CHECK(cudaMallocHost(&staging.host, kStagingBytes));
    ACCEL_CUDA_CHECK(cudaEventCreateWithFlags(&staging.done, cudaEventDisableTiming));
  }
  device->timer.start(device->stream);
  log(context.host, ACCEL_LOG_INFO,
      device->name + " opened on " + gpu.description + ": " +
          (allocator_options.growth ? "memory growth, limit " : "reserved ") +
          std::to_string(device->allocator->limit_bytes()) + " bytes, fp32 matmul " +
          (device->allow_tf32 ? "TF32 allowed" : "exact (no TF32)"));
  return device;
}

void report_profiles(AccelDevice& device, const std::vector<AccelOpProfile>& profiles) {
  if (device.host == nullptr || device.host->report_op == nullptr) return;
  for (const AccelOpProfile& profile : profiles) {
    // A 1.0 host reads no name: it would record a collective as an unknown op.
    if (profile.name != nullptr && device.host->api_minor < 1) continue;
    device.host->report_op(device.host_context, &profile);
  }
}

}  // namespace accel::cuda

AccelDevice::~AccelDevice() {
  // Best effort, never throws: wait for queued work, then release in reverse order.
  (void)cudaSetDevice(ordinal);
  if (stream != nullptr) (void)cudaStreamSynchronize(stream);
  allocator.reset();
  // A non-null handle means its library was loaded (the table call cannot throw then).
  try {
    if (cudnn != nullptr) (void)accel::cuda::cudnn_library(host).cudnnDestroy(cudnn);
    if (cublas != nullptr) (void)accel::cuda::cublas_library(host).cublasDestroy_v2(cublas);
  } catch (...) {
  }
  for (accel::cuda::StagingBuffer& buffer : staging) {
    if (buffer.done != nullptr) (void)cudaEventDestroy(buffer.done);
    if (buffer.host != nullptr) (void)cudaFreeHost(buffer.host);
  }
  if (stream != nullptr) (void)cudaStreamDestroy(stream);
  (void)cudaGetLastError();
}
