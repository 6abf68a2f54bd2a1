// CONV2D forward and backward through cuDNN's convolution API (cuDNN 9,
// libcudnn_cnn): NHWC activations, the HWIO filter transposed to cuDNN's
// KRSC (OHWI) layout in scratch memory, explicit pads (asymmetric ones by
// padding / cropping around a pad-0 convolution). The algorithm is chosen once
// per shape and cached on the device: the fastest of a timed search unless the
// setting cuda.cudnn_autotune is 0, then the first of cuDNN's heuristic
// candidates (*_v7) that runs (conv_algorithm_choice.hpp); workspaces come
// from the plugin allocator. float32 is exact fp32 (CUDNN_FMA_MATH) unless
// the device allows TF32; bfloat16 and float16 tensors (the mixed precision
// policies) run on the tensor cores with float32 accumulation (cuDNN's
// PSEUDO_BFLOAT16 / PSEUDO_HALF configurations). cuDNN is called through the
// table loaded on first use (math_libraries.hpp). The epilogue of CONV2D and
// CONV2D_BACKWARD_INPUT (plugin API 1.2) runs as one kernel after cuDNN
// (epilogue.hpp).
#include "conv_algorithm_choice.hpp"
#include "cuda_check.hpp"
#include "cudnn_support.hpp"
#include "epilogue.hpp"
#include "op_dispatch.hpp"

#include <cstddef>
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace accel::cuda {
namespace {

// The HWIO filter, transposed to KRSC, as cuDNN's NHWC filter.
CudnnDescriptor<cudnnFilterDescriptor_t> filter_descriptor(const CudnnLibrary& dnn, cudnnDataType_t type,
                                                           int64_t out_c, int64_t in_c, int64_t kh, int64_t kw) {
  const std::array<int, 4> size = cudnn_dimensions(out_c, in_c, kh, kw, "conv2d");
  return {dnn, dnn.cudnnCreateFilterDescriptor, dnn.cudnnDestroyFilterDescriptor,
          "cudnnSetFilter4dDescriptor", [&](cudnnFilterDescriptor_t descriptor) {
            return dnn.cudnnSetFilter4dDescriptor(descriptor, type, CUDNN_TENSOR_NHWC,
                                                  size[0], size[1], size[2], size[3]);
          }};
}

// Products are summed in float32 whatever the tensors' dtype.
CudnnDescriptor<cudnnConvolutionDescriptor_t> convolution_descriptor(
    const CudnnLibrary& dnn, int pad_h, int pad_w, int stride_h, int stride_w, int dil_h, int dil_w) {
  return {dnn, dnn.cudnnCreateConvolutionDescriptor, dnn.cudnnDestroyConvolutionDescriptor,
          "cudnnSetConvolution2dDescriptor", [&](cudnnConvolutionDescriptor_t descriptor) {
            return dnn.cudnnSetConvolution2dDescriptor(descriptor, pad_h, pad_w, stride_h, stride_w,
                                                       dil_h, dil_w, CUDNN_CROSS_CORRELATION,
                                                       CUDNN_DATA_FLOAT);
          }};
}

// Permutes a 4-d tensor of `shape` and `element` bytes: out dim d is input dim perm[d].
void permute4(AccelDevice& device, size_t element, const void* src, void* dst, const int64_t* shape,
              const int* perm) {
  int64_t in_strides[4];
  StridedCopyPlan plan;
  plan.rank = 4;
  plan.count = row_major_strides(4, shape, in_strides);
  int64_t out_stride = 1;
  for (int d = 3; d >= 0; --d) {
    plan.shape[d] = shape[perm[d]];
    plan.src_stride[d] = in_strides[perm[d]];
    plan.dst_stride[d] = out_stride;
    out_stride *= plan.shape[d];
  }
  check_launch(launch_strided_copy(element, src, dst, plan, device.stream), "conv2d filter transpose");
}

enum class Kind { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

// More than any of cuDNN 9's algorithm counts (forward has 8).
constexpr int kMaxAlgorithms = 16;

// The candidates of a timed search (cudnnFind*AlgorithmEx) on the call's own
// operands: every algorithm runs once, into the output the call then writes
// again. The search is offered the largest workspace an algorithm asks for,
// less when the allocator cannot give that much. An empty list when the search
// fails or nothing it timed can run here; the heuristics decide then.
template <typename Perf, typename Algorithm, typename Search, typename GetWorkspace>
std::vector<AlgorithmCandidate> timed_candidates(AccelDevice& device, bool tensor_cores, int algorithm_count,
                                                 Search search, GetWorkspace get_workspace) {
  std::vector<uint64_t> asked;
  for (int algorithm = 0; algorithm < algorithm_count; ++algorithm) {
    size_t bytes = 0;
    if (get_workspace(static_cast<Algorithm>(algorithm), &bytes) == CUDNN_STATUS_SUCCESS) asked.push_back(bytes);
  }
  uint64_t offered = search_workspace_bytes(asked, kSearchWorkspaceCap);
  std::optional<Scratch> workspace;
  while (!workspace) {
    try {
      workspace.emplace(*device.allocator, offered);
    } catch (const sdk::PluginError& error) {
      if (error.code() != ACCEL_STATUS_RESOURCE_EXHAUSTED || offered == 0) throw;
      offered /= 2;
    }
  }
  Perf records[2 * kMaxAlgorithms];  // the search may time two math modes of each algorithm
  int returned = 0;
  if (search(2 * kMaxAlgorithms, &returned, records, workspace->get(), static_cast<size_t>(offered)) !=
      CUDNN_STATUS_SUCCESS) {
    (void)cudaGetLastError();  // a failed launch inside cuDNN must not fail what follows
    return {};
  }
  return candidates_to_try(records, returned, AlgorithmSource::kTimedSearch, tensor_cores,
                           static_cast<size_t>(offered));
}

// Runs the convolution with cuDNN's algorithm for this shape: the cached one,
// else the first of the candidates (conv_algorithm_choice.hpp) that runs. The
// candidates come from a timed search when the device autotunes and the
// stream is not being captured into a CUDA graph (the search synchronizes,
// which a capture forbids; a compiled step's first, eager run has searched
// already), else from the heuristics (*_v7). As in PyTorch, a candidate whose
// workspace cannot be allocated or whose call fails (some heuristic picks
// report CUDNN_STATUS_NOT_SUPPORTED only when called) gives way to the next;
// the first that runs is cached, unless it was a heuristic pick made during a
// capture, so that the next eager call searches. Every candidate writes the
// whole output (beta 0), so a failed one leaves nothing behind.
// `run(algorithm, workspace, bytes)` queues the cuDNN call. `tensor_cores`:
// the tensors may run on the tensor cores (TF32 allowed, or 16-bit data).
template <typename Perf, typename Algorithm, typename Heuristics, typename Search, typename GetWorkspace,
          typename Run>
void run_with_algorithm(AccelDevice& device, const CudnnLibrary& dnn, const ConvKey& key, bool tensor_cores,
                        cudnnConvolutionDescriptor_t conv, int algorithm_count, const char* what,
                        Heuristics heuristics, Search search, GetWorkspace get_workspace, Run run) {
  CachingAllocator& allocator = *device.allocator;
  if (auto it = device.conv_choices.find(key); it != device.conv_choices.end()) {
    const ConvChoice choice = it->second;
    check_cudnn(dnn, dnn.cudnnSetConvolutionMathType(conv, choice.math_type),
                "cudnnSetConvolutionMathType");
    try {
      Scratch workspace(allocator, choice.workspace_bytes);
      check_cudnn(dnn, run(static_cast<Algorithm>(choice.algorithm), workspace.get(), choice.workspace_bytes),
                  what);
      return;
    } catch (const sdk::PluginError& error) {
      // Memory is shorter than when the choice was made: look for an
      // algorithm with a smaller workspace.
      if (error.code() != ACCEL_STATUS_RESOURCE_EXHAUSTED) throw;
      device.conv_choices.erase(key);
    }
  }
  const cudnnMathType_t wanted = tensor_cores ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  check_cudnn(dnn, dnn.cudnnSetConvolutionMathType(conv, wanted), "cudnnSetConvolutionMathType");
  const bool capturing = device.recording != nullptr;
  std::vector<AlgorithmCandidate> candidates;
  if (device.cudnn_autotune && !capturing) {
    candidates = timed_candidates<Perf, Algorithm>(device, tensor_cores, algorithm_count, search, get_workspace);
  }
  const bool timed = !candidates.empty();
  if (!timed) {
    Perf records[kMaxAlgorithms];
    int returned = 0;
    check_cudnn(dnn, heuristics(std::min(algorithm_count, kMaxAlgorithms), &returned, records),
                "cuDNN algorithm heuristics");
    candidates = candidates_to_try(records, returned, AlgorithmSource::kHeuristics, tensor_cores, 0);
  }
  cudnnStatus_t first_failure = CUDNN_STATUS_SUCCESS;
  std::string first_exhausted;  // the allocator's message when a workspace did not fit
  for (const AlgorithmCandidate& candidate : candidates) {
    const auto algorithm = static_cast<Algorithm>(candidate.algorithm);
    if (dnn.cudnnSetConvolutionMathType(conv, candidate.math) != CUDNN_STATUS_SUCCESS) continue;
    size_t workspace_bytes = 0;
    if (get_workspace(algorithm, &workspace_bytes) != CUDNN_STATUS_SUCCESS) continue;
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    try {
      Scratch workspace(allocator, workspace_bytes);
      status = run(algorithm, workspace.get(), workspace_bytes);
    } catch (const sdk::PluginError& error) {
      if (error.code() != ACCEL_STATUS_RESOURCE_EXHAUSTED) throw;
      if (first_exhausted.empty()) first_exhausted = error.what();
      continue;
    }
    if (status == CUDNN_STATUS_SUCCESS) {
      if (!(device.cudnn_autotune && capturing)) {
        device.conv_choices[key] = ConvChoice{candidate.algorithm, candidate.math, workspace_bytes};
      }
      return;
    }
    (void)cudaGetLastError();  // a failed launch inside cuDNN must not fail the next candidate
    if (first_failure == CUDNN_STATUS_SUCCESS) first_failure = status;
  }
  if (first_failure != CUDNN_STATUS_SUCCESS) check_cudnn(dnn, first_failure, what);
  if (!first_exhausted.empty()) {
    throw sdk::PluginError(ACCEL_STATUS_RESOURCE_EXHAUSTED,
                           std::string(what) + ": no cuDNN algorithm's workspace fits: " + first_exhausted);
  }
  throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED, "conv2d: cuDNN offers no algorithm for this shape on " +
                                                         device.name);
}

}  // namespace

OpCost run_conv(AccelDevice& device, const AccelOpCall& call) {
  if (call.num_inputs < 2 || call.num_outputs != 1 || call.inputs == nullptr || call.outputs == nullptr) {
    invalid("conv2d: expected two inputs (and the epilogue's) and one output");
  }
  // Hosts before 1.2 send the struct without its epilogue fields (bind_epilogue reads those).
  const auto& a = sdk::attributes_of<AccelConv2dAttributes>(call, offsetof(AccelConv2dAttributes, epilogue_flags));
  const Kind kind = call.op == ACCEL_OP_CONV2D ? Kind::kForward
                    : call.op == ACCEL_OP_CONV2D_BACKWARD_INPUT ? Kind::kBackwardData
                                                                : Kind::kBackwardFilter;
  View in0 = view_of(call.inputs[0], "conv input 0"), in1 = view_of(call.inputs[1], "conv input 1");
  View out = view_of(call.outputs[0], "conv output");
  const Epilogue epilogue = bind_epilogue(call, out, "conv2d");
  const View& x = kind == Kind::kBackwardData ? out : in0;
  const View& filter = kind == Kind::kForward ? in1 : (kind == Kind::kBackwardData ? in1 : out);
  const View& y = kind == Kind::kForward ? out : (kind == Kind::kBackwardData ? in0 : in1);
  const AccelDType dtype = x.dtype;
  for (const View* v : {&x, &filter, &y}) {
    if (v->rank != 4) invalid("conv2d: tensors must be rank 4 (NHWC, HWIO)");
    if (v->dtype != ACCEL_DTYPE_F32 && v->dtype != ACCEL_DTYPE_BF16 && v->dtype != ACCEL_DTYPE_F16) {
      invalid("conv2d: the cuda plugin runs float32, bfloat16 and float16 convolutions");
    }
    if (v->dtype != dtype) invalid("conv2d: input, filter and output dtypes differ");
  }
  const size_t element = sdk::dtype_size(dtype);
  const cudnnDataType_t data_type = cudnn_data_type(dtype);
  const bool tensor_cores = device.allow_tf32 || dtype != ACCEL_DTYPE_F32;
  const int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], c = x.shape[3];
  const int64_t kh = filter.shape[0], kw = filter.shape[1], o = filter.shape[3];
  if (filter.shape[2] != c) invalid("conv2d: filter input channels differ from the input's");
  if (y.shape[0] != n || y.shape[3] != o) invalid("conv2d: output batch or channels mismatch");
  if (a.stride_h < 1 || a.stride_w < 1 || a.dilation_h < 1 || a.dilation_w < 1 || a.pad_top < 0 ||
      a.pad_bottom < 0 || a.pad_left < 0 || a.pad_right < 0) {
    invalid("conv2d: strides and dilations must be positive, pads non-negative");
  }
  const int64_t padded_h = h + a.pad_top + a.pad_bottom, padded_w = w + a.pad_left + a.pad_right;
  const int64_t span_h = static_cast<int64_t>(a.dilation_h) * (kh - 1) + 1;
  const int64_t span_w = static_cast<int64_t>(a.dilation_w) * (kw - 1) + 1;
  const int64_t expect_h = sdk::window_positions(padded_h, span_h, a.stride_h);
  const int64_t expect_w = sdk::window_positions(padded_w, span_w, a.stride_w);
  if (y.shape[1] != expect_h || y.shape[2] != expect_w) {
    invalid("conv2d: output spatial size " + std::to_string(y.shape[1]) + "x" + std::to_string(y.shape[2]) +
            " does not match " + std::to_string(expect_h) + "x" + std::to_string(expect_w));
  }

  OpCost cost;
  cost.flops = 2.0 * static_cast<double>(y.count) * static_cast<double>(kh * kw * c);
  cost.bytes = static_cast<double>(x.bytes() + filter.bytes() + y.bytes() + epilogue.input_bytes());
  if (out.count == 0) return cost;
  if (in0.count == 0 || in1.count == 0) {  // empty sum: zeros
    ACCEL_CUDA_CHECK(cudaMemsetAsync(out.data, 0, out.bytes(), device.stream));
    apply_epilogue(device, epilogue, out);
    return cost;
  }

  cudnnHandle_t handle = cudnn_handle(device);  // the first convolution loads cuDNN
  const CudnnLibrary& dnn = cudnn_library(device.host);
  CachingAllocator& allocator = *device.allocator;
  const bool symmetric = a.pad_top == a.pad_bottom && a.pad_left == a.pad_right;
  const int64_t conv_h = symmetric ? h : padded_h, conv_w = symmetric ? w : padded_w;
  const int pad_h = symmetric ? a.pad_top : 0, pad_w = symmetric ? a.pad_left : 0;
  const uint64_t conv_x_bytes = static_cast<uint64_t>(n * conv_h * conv_w * c) * element;

  // Filter in KRSC (OHWI) order.
  Scratch krsc(allocator, filter.bytes());
  if (kind != Kind::kBackwardFilter) {
    const int hwio_to_ohwi[4] = {3, 0, 1, 2};
    permute4(device, element, filter.data, krsc.get(), filter.shape, hwio_to_ohwi);
  }
  // The (possibly explicitly padded) input / input gradient.
  Scratch padded(allocator, symmetric ? 0 : conv_x_bytes);
  void* conv_x = symmetric ? x.data : padded.get();
  if (!symmetric && kind != Kind::kBackwardData) {
    const int64_t before[4] = {0, a.pad_top, a.pad_left, 0};
    const int64_t padded_shape[4] = {n, conv_h, conv_w, c};
    check_launch(launch_pad(element, x.data, conv_x, 4, x.shape, padded_shape, before, 0,
                            n * conv_h * conv_w * c, device.stream),
                 "conv2d input padding");
  }

  const auto x_desc = nhwc_descriptor(dnn, data_type, n, conv_h, conv_w, c, "conv2d");
  const auto y_desc = nhwc_descriptor(dnn, data_type, n, y.shape[1], y.shape[2], o, "conv2d");
  const auto w_desc = filter_descriptor(dnn, data_type, o, c, kh, kw);
  const auto conv = convolution_descriptor(dnn, pad_h, pad_w, a.stride_h, a.stride_w, a.dilation_h,
                                           a.dilation_w);
  const ConvKey key{static_cast<int64_t>(kind), n, conv_h, conv_w, c, o, kh, kw, pad_h, pad_w,
                    a.stride_h, a.stride_w, a.dilation_h, a.dilation_w, device.allow_tf32 ? 1 : 0,
                    static_cast<int64_t>(dtype), 0, 0, 0, 0};
  const float alpha = 1.0f, beta = 0.0f;

  if (kind == Kind::kForward) {
    run_with_algorithm<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(
        device, dnn, key, tensor_cores, conv.get(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT, "cudnnConvolutionForward",
        [&](int count, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
          return dnn.cudnnGetConvolutionForwardAlgorithm_v7(
              handle, x_desc.get(), w_desc.get(), conv.get(), y_desc.get(), count, returned, perf);
        },
        [&](int count, int* returned, cudnnConvolutionFwdAlgoPerf_t* perf, void* workspace, size_t bytes) {
          return dnn.cudnnFindConvolutionForwardAlgorithmEx(handle, x_desc.get(), conv_x, w_desc.get(),
                                                            krsc.get(), conv.get(), y_desc.get(), y.data,
                                                            count, returned, perf, workspace, bytes);
        },
        [&](cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
          return dnn.cudnnGetConvolutionForwardWorkspaceSize(
              handle, x_desc.get(), w_desc.get(), conv.get(), y_desc.get(), algo, bytes);
        },
        [&](cudnnConvolutionFwdAlgo_t algo, void* workspace, size_t bytes) {
          return dnn.cudnnConvolutionForward(handle, &alpha, x_desc.get(), conv_x, w_desc.get(),
                                             krsc.get(), conv.get(), algo, workspace, bytes, &beta,
                                             y_desc.get(), y.data);
        });
  } else if (kind == Kind::kBackwardData) {
    run_with_algorithm<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
        device, dnn, key, tensor_cores, conv.get(), CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
        "cudnnConvolutionBackwardData",
        [&](int count, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
          return dnn.cudnnGetConvolutionBackwardDataAlgorithm_v7(
              handle, w_desc.get(), y_desc.get(), conv.get(), x_desc.get(), count, returned, perf);
        },
        [&](int count, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf, void* workspace, size_t bytes) {
          return dnn.cudnnFindConvolutionBackwardDataAlgorithmEx(handle, w_desc.get(), krsc.get(),
                                                                 y_desc.get(), y.data, conv.get(),
                                                                 x_desc.get(), conv_x, count, returned,
                                                                 perf, workspace, bytes);
        },
        [&](cudnnConvolutionBwdDataAlgo_t algo, size_t* bytes) {
          return dnn.cudnnGetConvolutionBackwardDataWorkspaceSize(
              handle, w_desc.get(), y_desc.get(), conv.get(), x_desc.get(), algo, bytes);
        },
        [&](cudnnConvolutionBwdDataAlgo_t algo, void* workspace, size_t bytes) {
          return dnn.cudnnConvolutionBackwardData(handle, &alpha, w_desc.get(), krsc.get(),
                                                  y_desc.get(), y.data, conv.get(), algo, workspace,
                                                  bytes, &beta, x_desc.get(), conv_x);
        });
    if (!symmetric) {  // crop the padded input gradient into dx
      StridedCopyPlan plan;
      plan.rank = 4;
      plan.count = x.count;
      const int64_t padded_strides[4] = {conv_h * conv_w * c, conv_w * c, c, 1};
      int64_t x_strides[4];
      x.strides(x_strides);
      for (int d = 0; d < 4; ++d) {
        plan.shape[d] = x.shape[d];
        plan.src_stride[d] = padded_strides[d];
        plan.dst_stride[d] = x_strides[d];
      }
      plan.src_offset = a.pad_top * padded_strides[1] + a.pad_left * padded_strides[2];
      check_launch(launch_strided_copy(element, conv_x, x.data, plan, device.stream),
                   "conv2d input-gradient crop");
    }
  } else {
    run_with_algorithm<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
        device, dnn, key, tensor_cores, conv.get(), CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
        "cudnnConvolutionBackwardFilter",
        [&](int count, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
          return dnn.cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              handle, x_desc.get(), y_desc.get(), conv.get(), w_desc.get(), count, returned, perf);
        },
        [&](int count, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf, void* workspace,
            size_t bytes) {
          return dnn.cudnnFindConvolutionBackwardFilterAlgorithmEx(handle, x_desc.get(), conv_x,
                                                                   y_desc.get(), y.data, conv.get(),
                                                                   w_desc.get(), krsc.get(), count,
                                                                   returned, perf, workspace, bytes);
        },
        [&](cudnnConvolutionBwdFilterAlgo_t algo, size_t* bytes) {
          return dnn.cudnnGetConvolutionBackwardFilterWorkspaceSize(
              handle, x_desc.get(), y_desc.get(), conv.get(), w_desc.get(), algo, bytes);
        },
        [&](cudnnConvolutionBwdFilterAlgo_t algo, void* workspace, size_t bytes) {
          return dnn.cudnnConvolutionBackwardFilter(handle, &alpha, x_desc.get(), conv_x,
                                                    y_desc.get(), y.data, conv.get(), algo,
                                                    workspace, bytes, &beta, w_desc.get(),
                                                    krsc.get());
        });
    const int64_t ohwi_shape[4] = {o, kh, kw, c};
    const int ohwi_to_hwio[4] = {1, 2, 3, 0};
    permute4(device, element, krsc.get(), filter.data, ohwi_shape, ohwi_to_hwio);
  }
  apply_epilogue(device, epilogue, out);
  return cost;
}

}  // namespace accel::cuda
