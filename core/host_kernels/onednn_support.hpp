// What the host kernels' oneDNN primitives share (convolution.cpp,
// matmul_primitive.cpp): the CPU engine, each thread's stream, primitive
// attributes that make the caller bring the scratchpad, and each thread's
// scratchpad memory.
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

// `description`'s scratchpad over the calling thread's buffer (grown as
// needed, kept for the next primitive this thread runs).
dnnl::memory onednn_scratchpad(const dnnl::memory::desc& description);

}  // namespace accel::host_kernels::detail
