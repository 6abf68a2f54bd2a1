// What the host kernels' oneDNN primitives share (convolution.cpp,
// matmul_primitive.cpp): the CPU engine, each thread's stream, primitive
// attributes that make the caller bring the scratchpad, and each thread's
// scratchpad and operand buffers; and whether oneDNN runs AVX-512 and bf16
// kernels here (the convolution paths of their own and the dispatcher's
// BF16 staging choose by it).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

namespace accel::host_kernels::detail {

const dnnl::engine& onednn_engine();

// Whether oneDNN runs its AVX-512 kernels on this CPU (read once: the ISA
// cannot change while the process runs). Without them it has no brgemm and
// no Winograd convolutions (convolution_gemm.cpp, convolution_winograd.cpp).
bool onednn_has_avx512();

// Whether oneDNN has bf16 matmul and convolution kernels for this CPU: it
// has AVX512_BF16 or AMX (oneDNN's avx512_core_bf16 ISA or above).
bool onednn_has_bf16();

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
