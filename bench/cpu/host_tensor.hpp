// HostTensor views over a benchmark's own buffers, for the CPU benchmarks
// that call host_kernels::execute (or the kernels behind it) directly.
#pragma once

#include <accel/plugin/host_kernels.hpp>

#include <cstdint>
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

}  // namespace accel::bench
