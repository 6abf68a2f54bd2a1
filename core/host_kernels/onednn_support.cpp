// The engine, streams and scratchpads of onednn_support.hpp.
#include "onednn_support.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace accel::host_kernels::detail {

const dnnl::engine& onednn_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& onednn_stream() {
  thread_local dnnl::stream stream(onednn_engine());
  return stream;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attributes;
}

dnnl::memory onednn_scratchpad(const dnnl::memory::desc& description) {
  thread_local std::vector<uint8_t> bytes;
  bytes.resize(std::max<size_t>(description.get_size(), 1));
  return dnnl::memory(description, onednn_engine(), bytes.data());
}

}  // namespace accel::host_kernels::detail
