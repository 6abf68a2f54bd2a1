// One opened logical CUDA device: its stream, cuBLAS and cuDNN handles
// (created by the first op that needs them), caching allocator, pinned staging
// buffers for host copies, op timer, the cuDNN algorithm cache and the
// recording being captured, if any. Every entry
// point takes `mutex`, makes the device current on the calling thread, and runs
// its work on `stream`.
#pragma once

#include "caching_allocator.hpp"
#include "device_discovery.hpp"
#include "op_timer.hpp"

#include <accel/plugin/accel_plugin.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// A device allocation (opaque to the host).
struct AccelBuffer {
  void* pointer = nullptr;
  uint64_t bytes = 0;
};

namespace accel::cuda {

// A cuDNN algorithm chosen for one convolution shape.
struct ConvChoice {
  int algorithm = 0;
  cudnnMathType_t math_type = CUDNN_DEFAULT_MATH;
  size_t workspace_bytes = 0;
};
using ConvKey = std::array<int64_t, 20>;

// A pinned host buffer with the event of its last queued copy.
struct StagingBuffer {
  void* host = nullptr;
  cudaEvent_t done = nullptr;
  bool pending = false;
};

constexpr uint64_t kStagingBytes = uint64_t{8} << 20;

// Scratch device memory from the device's allocator, returned on scope exit
// (stream-ordered reuse makes that safe while queued work still reads it).
class Scratch {
 public:
  Scratch(CachingAllocator& allocator, uint64_t bytes)
      : allocator_(allocator), pointer_(bytes > 0 ? allocator.allocate(bytes) : nullptr) {}
  ~Scratch() { allocator_.deallocate(pointer_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* get() const { return pointer_; }

 private:
  CachingAllocator& allocator_;
  void* pointer_;
};

}  // namespace accel::cuda

struct AccelDevice {
  AccelPluginContext* context = nullptr;
  const AccelHostApi* host = nullptr;
  void* host_context = nullptr;
  int ordinal = 0;
  std::string name;  // "GPU:<physical>/<logical>"
  bool allow_tf32 = false;
  bool cudnn_autotune = true;  // time cuDNN's convolution algorithms (conv_algorithm_choice.hpp)

  std::mutex mutex;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;  // null until the first cuBLAS op (cublas_handle)
  cudnnHandle_t cudnn = nullptr;    // null until the first cuDNN op (cudnn_handle)
  std::unique_ptr<accel::cuda::CachingAllocator> allocator;
  accel::cuda::StagingBuffer staging[2];
  unsigned next_staging = 0;
  accel::cuda::OpTimer timer;
  std::map<accel::cuda::ConvKey, accel::cuda::ConvChoice> conv_choices;
  // Non-null while the stream is captured into a CUDA graph (recording.hpp):
  // ops are captured, not run, and not timed.
  AccelRecording* recording = nullptr;
  bool recording_failed = false;  // a call failed while capturing

  ~AccelDevice();  // synchronizes and releases everything; never throws
};

namespace accel::cuda {

// Makes the device current on this thread.
void make_current(const AccelDevice& device);

// The device's cuBLAS / cuDNN handle, bound to its stream; the first call loads
// the library (math_libraries.hpp) and creates the handle. Device mutex held,
// device current. Throws PluginError (UNAVAILABLE when the library cannot be
// loaded).
cublasHandle_t cublas_handle(AccelDevice& device);
cudnnHandle_t cudnn_handle(AccelDevice& device);

// Opens a logical device (throws PluginError).
std::unique_ptr<AccelDevice> open_device(AccelPluginContext& context,
                                         const AccelDeviceOptions& options);

// Reports finished ops; call without holding the device mutex.
void report_profiles(AccelDevice& device, const std::vector<AccelOpProfile>& profiles);

// copies.cpp (device mutex held, device current)
void copy_host_to_device(AccelDevice& device, const void* source, AccelBuffer& destination,
                         uint64_t offset, uint64_t bytes);
void copy_device_to_host(AccelDevice& device, const AccelBuffer& source, uint64_t offset,
                         void* destination, uint64_t bytes);
void copy_device_to_device(AccelDevice& device, const AccelBuffer& source,
                           uint64_t source_offset, AccelBuffer& destination,
                           uint64_t destination_offset, uint64_t bytes);

}  // namespace accel::cuda
