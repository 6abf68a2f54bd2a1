// The engine, streams and scratchpads of onednn_support.hpp.
#include "onednn_support.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <new>

namespace accel::host_kernels::detail {

const dnnl::engine& onednn_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

bool onednn_has_avx512() {
  static const bool has = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  return has;
}

bool onednn_has_bf16() {
  static const bool has = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_bf16;
  return has;
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

dnnl::memory onednn_thread_memory(const dnnl::memory::desc& description, ThreadBuffer buffer) {
  constexpr size_t kAlignment = 64;
  struct Buffer {
    std::unique_ptr<void, decltype(&std::free)> data{nullptr, &std::free};
    size_t size = 0;
  };
  thread_local std::array<Buffer, static_cast<size_t>(ThreadBuffer::kCount)> buffers;
  Buffer& chosen = buffers[static_cast<size_t>(buffer)];
  const size_t wanted = std::max<size_t>(description.get_size(), 1);
  if (chosen.size < wanted) {
    const size_t size = (wanted + kAlignment - 1) / kAlignment * kAlignment;
    chosen.data.reset(std::aligned_alloc(kAlignment, size));
    if (!chosen.data) throw std::bad_alloc();
    chosen.size = size;
  }
  return dnnl::memory(description, onednn_engine(), chosen.data.get());
}

}  // namespace accel::host_kernels::detail
