// HostTensor views over a benchmark's own buffers, for the CPU benchmarks
// that call host_kernels::execute (or the kernels behind it) directly, and
// the uniform random values they fill them with.
#pragma once

#include <accel/plugin/host_kernels.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace accel::bench {

inline host_kernels::HostTensor tensor(AccelDType dtype, const std::vector<int64_t>& shape, void* data) {
  host_kernels::HostTensor result;
  result.dtype = dtype;
  result.rank = static_cast<int32_t>(shape.size());
  for (size_t axis = 0; axis < shape.size(); ++axis) result.shape[axis] = shape[axis];
  result.data = data;
  return result;
}

// `count` floats uniform in [-1, 1), the same on every run.
inline std::vector<float> random_values(int64_t count) {
  std::vector<float> values(static_cast<size_t>(count));
  std::mt19937 engine(3);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& v : values) v = uniform(engine);
  return values;
}

}  // namespace accel::bench
