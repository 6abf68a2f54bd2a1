// The floor under `accel devices` on a GPU machine: a process that does only
// what any CUDA program must before it can list or use a GPU, and nothing of
// accel's. bench/cuda/gpu_startup.sh times it beside `accel devices`.
//
//   cuda_startup_floor init      cudaGetDeviceCount + the properties of each
//                                device: driver and runtime initialised, no
//                                context (what the CUDA plugin's discovery does)
//   cuda_startup_floor context   the same, then cudaFree(0) on device 0: the
//                                primary context created (what the first op
//                                placed on /GPU:0 pays)
// Prints the device count (a wrong-looking count is a setup problem, not a
// timing one); exits 1 when the runtime reports an error.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  const bool make_context = argc > 1 && std::strcmp(argv[1], "context") == 0;
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  for (int ordinal = 0; error == cudaSuccess && ordinal < count; ++ordinal) {
    cudaDeviceProp properties{};
    error = cudaGetDeviceProperties(&properties, ordinal);
  }
  if (error == cudaSuccess && make_context && count > 0) error = cudaFree(nullptr);
  if (error != cudaSuccess) {
    std::fprintf(stderr, "cuda_startup_floor: %s\n", cudaGetErrorString(error));
    return 1;
  }
  std::printf("%d device(s)%s\n", count, make_context ? ", context on device 0" : "");
  return 0;
}
