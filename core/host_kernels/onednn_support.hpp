// What the host kernels' oneDNN primitives share (convolution.cpp,
// matmul_primitive.cpp): the CPU engine, each thread's stream, primitive
// attributes that make the caller bring the scratchpad, and each thread's
// scratchpad and operand buffers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace accel::host_kernels::detail {

const dnnl::engine& onednn_engine();

// The calling thread's stream on onednn_engine().
dnnl::stream& onednn_stream();

// Every primitive takes its scratchpad from the caller: with oneDNN's default
// (a library scratchpad shared by primitives), the same cached primitive run
// at once from several threads (a MirroredStrategy's replicas) corrupts its
// results, e.g. the per-thread partial sums of the filter gradient.
dnnl::primitive_attr user_scratchpad();

// The calling thread's buffers for a primitive's operands in oneDNN's own
// layouts, and for its scratchpad.
enum class ThreadBuffer { kScratchpad, kFilter, kSource, kDestination, kCount };

// `description` over the calling thread's `buffer`: 64-byte aligned (the
// jit kernels, Winograd's among them, use aligned vector loads on their own
// layouts), grown as needed and kept for the next primitive this thread runs.
dnnl::memory onednn_thread_memory(const dnnl::memory::desc& description, ThreadBuffer buffer);

// `description`'s scratchpad, over the calling thread's scratchpad buffer.
inline dnnl::memory onednn_scratchpad(const dnnl::memory::desc& description) {
  return onednn_thread_memory(description, ThreadBuffer::kScratchpad);
}

}  // namespace accel::host_kernels::detail
