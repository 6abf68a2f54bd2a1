// CUDA-graph recordings of the device's stream: capture, instantiate, launch.
#include "recording.hpp"

#include "cuda_check.hpp"
#include "cuda_device.hpp"

#include <memory>
#include <string>

namespace accel::cuda {

void begin_recording(AccelDevice& device) {
  if (device.recording != nullptr) throw sdk::PluginError(ACCEL_STATUS_FAILED_PRECONDITION, "already recording");
  // Relaxed: an op may still cudaMalloc (a cache miss of the allocator) while
  // its kernels are captured; what no graph can hold (a stream synchronize)
  // fails the capture instead.
  ACCEL_CUDA_CHECK(cudaStreamBeginCapture(device.stream, cudaStreamCaptureModeRelaxed));
  device.recording = new AccelRecording;
  device.recording_failed = false;
  device.allocator->hold_frees();
}

AccelRecording* end_recording(AccelDevice& device) {
  if (device.recording == nullptr) throw sdk::PluginError(ACCEL_STATUS_FAILED_PRECONDITION, "not recording");
  std::unique_ptr<AccelRecording> recording(device.recording);
  device.recording = nullptr;
  recording->scratch = device.allocator->held_frees();
  const cudaError_t captured = cudaStreamEndCapture(device.stream, &recording->graph);
  std::string failure;
  if (device.recording_failed) {
    failure = "a call could not be captured into the CUDA graph";
  } else if (captured != cudaSuccess || recording->graph == nullptr) {
    failure = "cudaStreamEndCapture: " + cuda_error_text(captured);
  } else {
    const cudaError_t instantiated = cudaGraphInstantiate(&recording->executable, recording->graph, 0);
    if (instantiated != cudaSuccess) {
      failure = "cudaGraphInstantiate: " + cuda_error_text(instantiated);
    }
  }
  if (failure.empty()) return recording.release();
  (void)cudaGetLastError();
  release_recording(device, recording.release());  // nothing captured ran: the scratch is free at once
  throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED, failure);
}

void replay_recording(AccelDevice& device, AccelRecording& recording) {
  if (device.recording != nullptr) {
    throw sdk::PluginError(ACCEL_STATUS_FAILED_PRECONDITION, "cannot replay a recording while recording");
  }
  ACCEL_CUDA_CHECK(cudaGraphLaunch(recording.executable, device.stream));
}

void release_recording(AccelDevice& device, AccelRecording* recording) noexcept {
  if (recording == nullptr) return;
  if (recording->executable != nullptr) (void)cudaGraphExecDestroy(recording->executable);
  if (recording->graph != nullptr) (void)cudaGraphDestroy(recording->graph);
  device.allocator->release_held(recording->scratch);
  delete recording;
}

}  // namespace accel::cuda
