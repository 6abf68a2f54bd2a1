// CONV2D, CONV2D_BACKWARD_INPUT and CONV2D_BACKWARD_FILTER on oneDNN
// convolution primitives, with the epilogues of the first two; the filter
// gradient of a convolution over one input channel runs as a direct loop
// instead (filter_gradient.cpp), and on CPUs without AVX-512 some shapes run
// as Winograd F(4x4, 3x3) of accel's own (convolution_winograd.cpp) or as
// im2col tiles on sgemm (convolution_gemm.cpp).
//
// Activations stay in accel's NHWC layout and oneDNN reads them in place
// through memory descriptors (except around Winograd, below); filters (small)
// are reordered from HWIO to the layout oneDNN prefers when that measured
// faster (see build_primitive). Building a primitive costs far more than
// running a small one, so primitives are cached per (op, shapes, attributes)
// in a process-wide, mutex-guarded map; oneDNN primitives may be executed
// from several threads at once. Measured against im2col + sgemm in
// bench/cpu/bench_cpu_conv.cpp; the figures are in docs/PERFORMANCE.md.
//
// Winograd: 3x3, stride-1 convolutions with at least kWinogradChannels input
// and output channels run oneDNN's Winograd F(4x4, 3x3) kernels
// (jit_wino_4x3, AVX-512), which do 4x fewer multiplications than a direct
// convolution (CPUs without AVX-512 run accel's own F(4x4, 3x3) instead,
// convolution_winograd.cpp). They need oneDNN's blocked activation layout, so the
// activations are reordered in and out around the primitive: measured on the
// small ResNet's 28x28x32, 14x14x64 and 7x7x128 layers at batch 128, forward
// and input gradient 1.5-1.9x faster than direct with the reorders, filter
// gradient 1.2-1.5x (docs/PERFORMANCE.md). Results differ from a direct
// convolution by rounding only (the transforms reassociate the sums; the
// relative error stays near 1e-6 for these sizes). ACCEL_CPU_WINOGRAD=0 keeps
// every convolution direct, =onednn allows oneDNN's Winograd only.
//
// BF16 operands (execute() passes them on CPUs with AVX512_BF16 or AMX only)
// run on oneDNN's bf16 kernels in the same NHWC layouts, never on Winograd
// (float32 only) or the paths of accel's own: the direct bf16 kernels
// measured faster than float32 Winograd on every 3x3 stride-1 layer of the
// small ResNet (docs/PERFORMANCE.md, "Mixed precision on the CPU").
//
// Epilogues: CONV2D adds its bias and applies its activation inside the
// primitive (oneDNN's bias argument and eltwise post-op), so the output is
// written once; a RELU_MASK, and every epilogue of CONV2D_BACKWARD_INPUT
// (oneDNN's backward-data primitive takes no post-ops), run as one blocked
// pass over the output right after the primitive (epilogue.cpp).
#include "epilogue.hpp"
#include "kernels.hpp"
#include "onednn_support.hpp"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <string>
#include <vector>

namespace accel::host_kernels::detail {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// What a primitive computes beyond the convolution itself: CONV2D's bias and
// activation (ACCEL_OP_MATMUL, 0, for none).
struct PrimitiveEpilogue {
  bool bias = false;
  AccelOp activation = ACCEL_OP_MATMUL;
};

// The geometry, the epilogue, whether Winograd may run, the element type,
// and the OpenMP threads the primitive was built for (oneDNN plans its work
// split when it builds one).
using PrimitiveKey = std::array<int64_t, 23>;

// Below this many input channels the input gradient reads a plain HWIO filter.
constexpr int64_t kFewInputChannels = 16;

// Below this many input or output channels Winograd does not pay (oneDNN's
// kernels pad channels to 16).
constexpr int64_t kWinogradChannels = 16;

// Read at each lookup (a getenv, next to a map lookup) so that a process
// may switch it, e.g. a test comparing with TensorFlow's direct kernels.
bool enabled_unless_zero(const char* variable) {
  const char* setting = std::getenv(variable);
  return setting == nullptr || std::strcmp(setting, "0") != 0;
}

bool winograd_enabled() { return enabled_unless_zero("ACCEL_CPU_WINOGRAD"); }

// Filter gradients of convolutions with this many input channels or fewer
// run as a direct loop (filter_gradient.cpp), faster than oneDNN's kernels
// there (measured on the tutorial CNN's 3x3x1x32 layer, docs/PERFORMANCE.md;
// with 3 channels the two were within noise of each other, so they stay on
// oneDNN). ACCEL_CPU_DIRECT_FILTER_GRADIENT=0 sends every one to oneDNN.
constexpr int64_t kDirectFilterGradientChannels = 1;

bool direct_filter_gradient_enabled() { return enabled_unless_zero("ACCEL_CPU_DIRECT_FILTER_GRADIENT"); }

bool winograd_candidate(const ConvGeometry& g) {
  return g.filter_h == 3 && g.filter_w == 3 && g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 && g.channels >= kWinogradChannels && g.filters >= kWinogradChannels &&
         winograd_enabled();
}

PrimitiveKey key_of(AccelOp op, const ConvGeometry& g, const PrimitiveEpilogue& epilogue, bool winograd,
                    memory::data_type type) {
  return {static_cast<int64_t>(op), g.batch,      g.height,     g.width,     g.channels,   g.filter_h,
          g.filter_w,               g.filters,    g.out_h,      g.out_w,     g.stride_h,   g.stride_w,
          g.dilation_h,             g.dilation_w, g.pad_top,    g.pad_bottom, g.pad_left,  g.pad_right,
          epilogue.bias ? 1 : 0,    static_cast<int64_t>(epilogue.activation), winograd ? 1 : 0,
          static_cast<int64_t>(type), omp_get_max_threads()};
}

PrimitiveEpilogue primitive_epilogue_of(AccelOp op, const Epilogue& epilogue) {
  PrimitiveEpilogue result;
  if (op != ACCEL_OP_CONV2D) return result;
  result.bias = epilogue.has(ACCEL_EPILOGUE_BIAS);
  if (epilogue.has(ACCEL_EPILOGUE_ACTIVATION)) result.activation = epilogue.activation;
  return result;
}

dnnl::algorithm eltwise_of(AccelOp activation) {
  switch (activation) {
    case ACCEL_OP_SIGMOID: return dnnl::algorithm::eltwise_logistic;
    case ACCEL_OP_TANH: return dnnl::algorithm::eltwise_tanh;
    default: return dnnl::algorithm::eltwise_relu;  // alpha 0: max(x, 0)
  }
}

struct Descriptors {
  memory::desc x, filter, y;  // the user's layouts: NHWC activations, HWIO filter
  memory::desc filter_any;     // lets oneDNN choose its own filter layout
  memory::desc x_any, y_any;   // ... and its own activation layouts (Winograd)
};

// All in the operands' element type: f32, or bf16 (oneDNN's bf16 kernels
// accumulate in float32 and round each result once).
Descriptors descriptors_of(const ConvGeometry& g, memory::data_type type) {
  const memory::dims filter_dims{g.filters, g.channels, g.filter_h, g.filter_w};
  const memory::dims x_dims{g.batch, g.channels, g.height, g.width}, y_dims{g.batch, g.filters, g.out_h, g.out_w};
  return {memory::desc(x_dims, type, Tag::nhwc),
          memory::desc(filter_dims, type, Tag::hwio),
          memory::desc(y_dims, type, Tag::nhwc),
          memory::desc(filter_dims, type, Tag::any),
          memory::desc(x_dims, type, Tag::any),
          memory::desc(y_dims, type, Tag::any)};
}

memory::desc bias_descriptor(const ConvGeometry& g, memory::data_type type) {
  return memory::desc({g.filters}, type, Tag::a);
}

// The layouts and algorithm one primitive is built with.
struct Formulation {
  dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct;
  memory::desc x, filter, y;
};

// oneDNN's first choice for a bf16 forward convolution is its brgconv
// kernel; on layers with few input channels or few output pixels its
// jit_bf16 kernel measured faster (batch 256, 2 threads, AVX512_BF16): 0.93
// against 1.26 ms on the tutorial CNN's first layer (one input channel), 7.5
// against 11.5 ms on the small ResNet's 7x7x128 layers, and within 10 % on
// its other layers (docs/PERFORMANCE.md, "Mixed precision on the CPU").
bool prefers_jit_bf16(const ConvGeometry& g, const Formulation& f) {
  constexpr int64_t kFewOutputPixels = 49;
  return f.x.data_type() == memory::data_type::bf16 &&
         (g.channels < kFewInputChannels || g.out_h * g.out_w <= kFewOutputPixels);
}

// The forward primitive description of `desc`: oneDNN's first choice, or
// with `prefer_jit_bf16` its first jit_bf16 implementation when it offers one
// and its first choice is the AVX512_BF16 brgconv measured against it (an
// AMX CPU's brgconv was not). (The iteration runs here, while `desc` and
// `attributes` live: oneDNN's iterator reads them when it tries the next
// implementation.)
template <typename Desc>
dnnl::convolution_forward::primitive_desc chosen_forward(const Desc& desc, const dnnl::primitive_attr& attributes,
                                                         bool prefer_jit_bf16) {
  if (prefer_jit_bf16) {
    dnnl::convolution_forward::primitive_desc candidate(desc, attributes, onednn_engine());
    if (std::string(candidate.impl_info_str()) != "brgconv:avx512_core_bf16") return candidate;
    do {
      if (std::string(candidate.impl_info_str()).rfind("jit_bf16", 0) == 0) return candidate;
    } while (candidate.next_impl());
  }
  return {desc, attributes, onednn_engine()};
}

dnnl::convolution_forward::primitive_desc forward_pd(const ConvGeometry& g, const Formulation& f,
                                                     const PrimitiveEpilogue& epilogue) {
  const memory::dims strides{g.stride_h, g.stride_w}, dilates{g.dilation_h - 1, g.dilation_w - 1},
      pad_l{g.pad_top, g.pad_left}, pad_r{g.pad_bottom, g.pad_right};
  dnnl::primitive_attr attributes = user_scratchpad();
  if (epilogue.activation != ACCEL_OP_MATMUL) {
    dnnl::post_ops post_ops;
    post_ops.append_eltwise(1.0f, eltwise_of(epilogue.activation), 0.0f, 0.0f);
    attributes.set_post_ops(post_ops);
  }
  if (epilogue.bias) {
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, f.algorithm, f.x, f.filter,
                                         bias_descriptor(g, f.y.data_type()), f.y, strides, dilates, pad_l, pad_r);
    return chosen_forward(desc, attributes, prefers_jit_bf16(g, f));
  }
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, f.algorithm, f.x, f.filter, f.y, strides,
                                       dilates, pad_l, pad_r);
  return chosen_forward(desc, attributes, prefers_jit_bf16(g, f));
}

// A reorder between a user layout and a primitive's, built only when they
// differ (filters are small: reordering them per call costs little next to
// the convolution; activations are reordered only around Winograd).
struct LayoutChange {
  memory::desc primitive_layout;
  bool needed = false;
  dnnl::reorder reorder;  // user -> primitive for operands, primitive -> user for the result

  LayoutChange() = default;
  LayoutChange(const memory::desc& user, const memory::desc& primitive, bool to_user)
      : primitive_layout(primitive), needed(primitive != user) {
    if (needed) {
      reorder = dnnl::reorder(dnnl::reorder::primitive_desc(onednn_engine(), to_user ? primitive : user,
                                                            onednn_engine(), to_user ? user : primitive));
    }
  }
};

struct CachedConv {
  dnnl::primitive primitive;
  LayoutChange filter;
  LayoutChange x, y;  // in forward terms: x is the result of BACKWARD_INPUT, y of CONV2D
  memory::desc scratchpad;  // what each execution needs (see user_scratchpad)
};

CachedConv build_formulation(AccelOp op, const ConvGeometry& g, const PrimitiveEpilogue& epilogue,
                              const Formulation& f, const Descriptors& d) {
  const memory::dims strides{g.stride_h, g.stride_w}, dilates{g.dilation_h - 1, g.dilation_w - 1},
      pad_l{g.pad_top, g.pad_left}, pad_r{g.pad_bottom, g.pad_right};
  auto forward = forward_pd(g, f, epilogue);  // the epilogue is CONV2D's only
  CachedConv cached;
  switch (op) {
    case ACCEL_OP_CONV2D:
      cached.primitive = dnnl::convolution_forward(forward);
      cached.filter = LayoutChange(d.filter, forward.weights_desc(), false);
      cached.x = LayoutChange(d.x, forward.src_desc(), false);
      cached.y = LayoutChange(d.y, forward.dst_desc(), true);
      cached.scratchpad = forward.scratchpad_desc();
      break;
    case ACCEL_OP_CONV2D_BACKWARD_INPUT: {
      dnnl::convolution_backward_data::desc desc(f.algorithm, f.x, f.filter, f.y, strides, dilates, pad_l, pad_r);
      dnnl::convolution_backward_data::primitive_desc pd(desc, user_scratchpad(), onednn_engine(), forward);
      cached.primitive = dnnl::convolution_backward_data(pd);
      cached.filter = LayoutChange(d.filter, pd.weights_desc(), false);
      cached.x = LayoutChange(d.x, pd.diff_src_desc(), true);
      cached.y = LayoutChange(d.y, pd.diff_dst_desc(), false);
      cached.scratchpad = pd.scratchpad_desc();
      break;
    }
    default: {
      dnnl::convolution_backward_weights::desc desc(f.algorithm, f.x, f.filter, f.y, strides, dilates, pad_l, pad_r);
      dnnl::convolution_backward_weights::primitive_desc pd(desc, user_scratchpad(), onednn_engine(), forward);
      cached.primitive = dnnl::convolution_backward_weights(pd);
      cached.filter = LayoutChange(d.filter, pd.diff_weights_desc(), true);
      cached.x = LayoutChange(d.x, pd.src_desc(), false);
      cached.y = LayoutChange(d.y, pd.diff_dst_desc(), false);
      cached.scratchpad = pd.scratchpad_desc();
      break;
    }
  }
  return cached;
}

CachedConv build_primitive(AccelOp op, const ConvGeometry& g, const PrimitiveEpilogue& epilogue, bool winograd,
                           memory::data_type type) {
  const Descriptors d = descriptors_of(g, type);
  if (winograd) {
    try {
      return build_formulation(op, g, epilogue,
                               {dnnl::algorithm::convolution_winograd, d.x_any, d.filter_any, d.y_any}, d);
    } catch (const dnnl::error&) {
      // No Winograd kernel for this CPU or shape: direct, below.
    }
  }
  // Measured (docs/PERFORMANCE.md): forward and filter gradient run fastest
  // in a filter layout oneDNN picks (brgconv / jit kernels). So does the
  // input gradient with many input channels (3.2x on the small ResNet's
  // 32-128 channels), but with few (the tutorial CNN's one) oneDNN's jit
  // kernel pads the channels to a vector and plain HWIO (gemm-based) wins
  // by 2.7x.
  const bool plain_filter = op == ACCEL_OP_CONV2D_BACKWARD_INPUT && g.channels < kFewInputChannels;
  return build_formulation(
      op, g, epilogue,
      {dnnl::algorithm::convolution_direct, d.x, plain_filter ? d.filter : d.filter_any, d.y},
      d);
}

// Primitives by geometry and epilogue; never evicted (a model has a handful
// of shapes).
const CachedConv& cached_primitive(AccelOp op, const ConvGeometry& g, const PrimitiveEpilogue& epilogue,
                                   memory::data_type type) {
  static std::mutex mutex;
  static std::map<PrimitiveKey, CachedConv> cache;  // std::map: references stay valid
  // oneDNN's Winograd is float32 only. A BF16 3x3 stride-1 convolution runs
  // direct on its bf16 kernels, faster than float32 Winograd on the small
  // ResNet's layers (docs/PERFORMANCE.md, "Mixed precision on the CPU").
  const bool winograd = type == memory::data_type::f32 && winograd_candidate(g);
  const PrimitiveKey key = key_of(op, g, epilogue, winograd, type);
  std::lock_guard lock(mutex);
  auto found = cache.find(key);
  if (found == cache.end()) found = cache.emplace(key, build_primitive(op, g, epilogue, winograd, type)).first;
  return found->second;
}

}  // namespace

ConvGeometry convolution_geometry(AccelOp op, const HostTensor& first, const HostTensor& second,
                                  const HostTensor& y, const AccelConv2dAttributes& attributes) {
  const HostTensor* x = &first;
  const HostTensor* filter = &second;
  const HostTensor* out = &y;
  if (op == ACCEL_OP_CONV2D_BACKWARD_INPUT) { x = &y; out = &first; }
  if (op == ACCEL_OP_CONV2D_BACKWARD_FILTER) { filter = &y; out = &second; }
  if (x->rank != 4 || filter->rank != 4 || out->rank != 4) invalid("convolution tensors must have rank 4");
  ConvGeometry g{x->shape[0], x->shape[1], x->shape[2], x->shape[3], filter->shape[0], filter->shape[1],
                 filter->shape[3], out->shape[1], out->shape[2], attributes.stride_h, attributes.stride_w,
                 attributes.dilation_h, attributes.dilation_w, attributes.pad_top, attributes.pad_bottom,
                 attributes.pad_left, attributes.pad_right};
  if (filter->shape[2] != g.channels) invalid("filter input channels differ from x channels");
  if (out->shape[0] != g.batch || out->shape[3] != g.filters) invalid("y must be [N, OH, OW, K]");
  if (g.stride_h < 1 || g.stride_w < 1 || g.dilation_h < 1 || g.dilation_w < 1) {
    invalid("strides and dilations must be >= 1");
  }
  if (g.pad_top < 0 || g.pad_bottom < 0 || g.pad_left < 0 || g.pad_right < 0) invalid("pads must be >= 0");
  const int64_t span_h = (g.filter_h - 1) * g.dilation_h + 1, span_w = (g.filter_w - 1) * g.dilation_w + 1;
  const int64_t expected_h = sdk::window_positions(g.height + g.pad_top + g.pad_bottom, span_h, g.stride_h);
  const int64_t expected_w = sdk::window_positions(g.width + g.pad_left + g.pad_right, span_w, g.stride_w);
  if (g.out_h != expected_h || g.out_w != expected_w) {
    invalid("output spatial size " + std::to_string(g.out_h) + "x" + std::to_string(g.out_w) +
            " does not follow from input, filter, strides and pads (expected " +
            std::to_string(expected_h) + "x" + std::to_string(expected_w) + ")");
  }
  return g;
}

bool filter_gradient_is_direct(const ConvGeometry& g) {
  return g.channels <= kDirectFilterGradientChannels && direct_filter_gradient_enabled();
}

void conv2d(AccelOp op, const HostTensor& first, const HostTensor& second, const HostTensor& y,
            const AccelConv2dAttributes& attributes, const Epilogue& epilogue, EpilogueRounding rounding) {
  const ConvGeometry g = convolution_geometry(op, first, second, y, attributes);
  if (element_count(y) == 0) return;
  if (element_count(first) == 0 || element_count(second) == 0) {  // nothing to sum: zeros
    fill(y, 0.0);
    apply_epilogue(epilogue, y);
    return;
  }
  // BF16 operands reach here only on CPUs with bf16 instructions (execute()
  // stages them through F32 elsewhere) and run on oneDNN's primitives only.
  const bool bf16 = y.dtype == ACCEL_DTYPE_BF16;
  if (bf16 && (first.dtype != ACCEL_DTYPE_BF16 || second.dtype != ACCEL_DTYPE_BF16)) {
    invalid("operands must all be bfloat16 or all float32");
  }
  if (!bf16 && op == ACCEL_OP_CONV2D_BACKWARD_FILTER && filter_gradient_is_direct(g)) {
    direct_filter_gradient(g, data_of<const float>(first), data_of<const float>(second), data_of<float>(y));
    return;
  }
  // Winograd before sgemm: on the shapes it takes it measured faster than
  // both other paths (docs/PERFORMANCE.md).
  if (!bf16 && !gemm_convolution_forced() && winograd_convolution_chosen(op, g)) {
    winograd_convolution(op, g, data_of<const float>(first), data_of<const float>(second), data_of<float>(y));
    apply_epilogue(epilogue, y);
    return;
  }
  if (!bf16 && gemm_convolution_chosen(op, g)) {
    gemm_convolution(op, g, data_of<const float>(first), data_of<const float>(second), data_of<float>(y));
    apply_epilogue(epilogue, y);
    return;
  }
  const memory::data_type type = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
  limit_openmp_threads_on_this_thread();
  const bool epilogue_in_primitive = op == ACCEL_OP_CONV2D && rounding == EpilogueRounding::kFastest;
  const PrimitiveEpilogue in_primitive = epilogue_in_primitive ? primitive_epilogue_of(op, epilogue) : PrimitiveEpilogue{};
  try {
    const CachedConv& cached = cached_primitive(op, g, in_primitive, type);
    const Descriptors d = descriptors_of(g, type);
    const dnnl::engine& engine = onednn_engine();
    dnnl::stream& stream = onednn_stream();
    // Each operand: the user's buffer, or a per-thread scratch in the
    // primitive's layout that operands are reordered into before the
    // primitive and results out of after it.
    const HostTensor& user_filter = op == ACCEL_OP_CONV2D_BACKWARD_FILTER ? y : second;
    const HostTensor& user_x = op == ACCEL_OP_CONV2D_BACKWARD_INPUT ? y : first;
    const HostTensor& user_y = op == ACCEL_OP_CONV2D ? y : op == ACCEL_OP_CONV2D_BACKWARD_INPUT ? first : second;
    std::vector<std::pair<const LayoutChange*, std::array<memory, 2>>> after;  // results to reorder back
    auto operand = [&](const LayoutChange& change, const memory::desc& user_layout, const HostTensor& tensor,
                       ThreadBuffer buffer, bool is_result) {
      memory user_memory(user_layout, engine, tensor.data);
      if (!change.needed) return user_memory;
      memory primitive_memory = onednn_thread_memory(change.primitive_layout, buffer);
      if (is_result) {
        after.push_back({&change, {primitive_memory, user_memory}});
      } else {
        change.reorder.execute(stream, user_memory, primitive_memory);
      }
      return primitive_memory;
    };
    const memory filter_memory = operand(cached.filter, d.filter, user_filter, ThreadBuffer::kFilter,
                                         op == ACCEL_OP_CONV2D_BACKWARD_FILTER);
    const memory x_memory =
        operand(cached.x, d.x, user_x, ThreadBuffer::kSource, op == ACCEL_OP_CONV2D_BACKWARD_INPUT);
    const memory y_memory = operand(cached.y, d.y, user_y, ThreadBuffer::kDestination, op == ACCEL_OP_CONV2D);
    std::unordered_map<int, memory> arguments;
    switch (op) {
      case ACCEL_OP_CONV2D:
        arguments = {{DNNL_ARG_SRC, x_memory}, {DNNL_ARG_WEIGHTS, filter_memory}, {DNNL_ARG_DST, y_memory}};
        if (in_primitive.bias) arguments.emplace(DNNL_ARG_BIAS, memory(bias_descriptor(g, type), engine, epilogue.bias->data));
        break;
      case ACCEL_OP_CONV2D_BACKWARD_INPUT:
        arguments = {{DNNL_ARG_DIFF_DST, y_memory}, {DNNL_ARG_WEIGHTS, filter_memory}, {DNNL_ARG_DIFF_SRC, x_memory}};
        break;
      default:
        arguments = {{DNNL_ARG_SRC, x_memory}, {DNNL_ARG_DIFF_DST, y_memory}, {DNNL_ARG_DIFF_WEIGHTS, filter_memory}};
        break;
    }
    arguments.emplace(DNNL_ARG_SCRATCHPAD, onednn_scratchpad(cached.scratchpad));
    cached.primitive.execute(stream, arguments);
    for (auto& [change, memories] : after) change->reorder.execute(stream, memories[0], memories[1]);
    stream.wait();
  } catch (const dnnl::error& error) {
    fail(ACCEL_STATUS_INTERNAL, std::string("oneDNN: ") + error.what());
  }
  apply_epilogue(epilogue, y, /*skip_bias_and_activation=*/epilogue_in_primitive);
}

}  // namespace accel::host_kernels::detail
