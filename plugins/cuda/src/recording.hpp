// Recordings (plugin API 1.5) as CUDA graphs: the device's stream is
// captured (cudaStreamBeginCapture, relaxed mode) while the host issues a run
// of a compiled step's ops, and the instantiated graph is launched at each
// replay, one launch instead of one per op. Owns each recording's graph, its
// executable form and the scratch memory its kernels use again at every
// launch (held by the allocator until the recording is released).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

struct AccelDevice;

struct AccelRecording {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t executable = nullptr;
  std::vector<void*> scratch;  // freed by captured ops; reused by every launch
};

namespace accel::cuda {

// Device mutex held, device current (throw PluginError).
void begin_recording(AccelDevice& device);
// Ends the capture; throws when a call could not be captured or the graph
// does not instantiate, and then gives no recording.
AccelRecording* end_recording(AccelDevice& device);
void replay_recording(AccelDevice& device, AccelRecording& recording);
// Device mutex held, device current. Queued launches may still run: the
// scratch goes back to the allocator in stream order.
void release_recording(AccelDevice& device, AccelRecording* recording) noexcept;

}  // namespace accel::cuda
