// Host-side launch functions of the plugin's own CUDA kernels (the .cu files).
// Plain data in, cudaError_t out: the callers (op_dispatch.cpp, conv_cudnn.cpp,
// fused_elementwise.cpp, epilogue.cpp) check the result. Every launch is asynchronous on the given stream and does
// nothing for empty tensors. Tensors are dense and row-major.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cuda_runtime_api.h>

#include <cstdint>

namespace accel::cuda {

constexpr int kMaxRank = ACCEL_MAX_RANK;

// The row-major element strides of a dense tensor of `shape`; returns its
// element count.
inline int64_t row_major_strides(int32_t rank, const int64_t* shape, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return stride;
}

// Elementwise over an output of `shape`; input k reads element
// sum_d coord_d * strides[k][d] (0 strides broadcast).
struct BroadcastPlan {
  int32_t rank = 0;
  int64_t count = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};
  bool contiguous = false;  // every input has the output's shape: index i everywhere
};

// Copies `count` elements over `shape`: dst[dst_offset + sum coord*dst_stride] =
// src[src_offset + sum coord*src_stride]. Covers transpose, broadcast, slice, concat.
struct StridedCopyPlan {
  int32_t rank = 0;
  int64_t count = 0;
  int64_t shape[kMaxRank] = {};
  int64_t src_stride[kMaxRank] = {};
  int64_t dst_stride[kMaxRank] = {};
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
};

// Reduction: output element o (over kept dims, contiguous) combines the input
// elements at kept offset(o) + reduced offset(r), r < reduced_count.
// When the reduced axes are adjacent (axes of size 1 aside), `banded` is set
// and the same reduction reads x as [outer][reduced_count][inner] into
// y[outer][inner]: the NHWC reductions that keep the channels (batch norm's
// statistics, bias gradients) are the banded ones with outer 1. Made by
// plan_reduction (reduce_plan.cpp), which also decides how the column kernels
// split the rows.
struct ReducePlan {
  int32_t kept_rank = 0;
  int64_t kept_shape[kMaxRank] = {};
  int64_t kept_stride[kMaxRank] = {};
  int32_t reduced_rank = 0;
  int64_t reduced_shape[kMaxRank] = {};
  int64_t reduced_stride[kMaxRank] = {};
  int64_t out_count = 0;
  int64_t reduced_count = 0;
  bool banded = false;
  int64_t outer = 1;
  int64_t inner = 1;
  // Whether the column kernels run it (banded, at least 8 kept neighbours and
  // 33 rows, outer within a grid's y), and their split of the rows into
  // `chunks` slices of `rows_per_chunk` (none empty), one block each per tile
  // of 32 columns; several chunks need reduce_scratch_bytes of scratch.
  bool column_kernels = false;
  int64_t chunks = 1;
  int64_t rows_per_chunk = 0;
};

// BATCH_NORM / BATCH_NORM_BACKWARD over x seen as [rows, features]: the
// per-feature sums over `chunks` slices of `rows_per_chunk` rows (none empty;
// one slice of no rows when rows is 0), split as the column reductions split
// theirs. Made by plan_batch_norm (reduce_plan.cpp).
struct BatchNormPlan {
  int64_t rows = 0;
  int64_t features = 0;
  int64_t chunks = 1;
  int64_t rows_per_chunk = 0;
};

// NHWC pooling geometry.
struct PoolGeometry {
  int64_t n = 0, h = 0, w = 0, c = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t window_h = 1, window_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;
};

// One element of any dtype in its compute type: float for F32 / BF16 / F16 (a
// BF16 / F16 value is kept rounded to its dtype), int32, int64, and the byte
// as it is for U8 and BOOL.
union ElementValue {
  float f;
  int32_t i32;
  int64_t i64;
  uint8_t u8;
};

// FUSED_ELEMENTWISE (plugin API 1.2) as the interpreter kernel runs it: the
// program's live instructions in order, each yielding one ElementValue per
// element of the iteration space; fused_elementwise.cpp checks the program
// and builds this. Passed by value as the kernel's argument.
constexpr int kFusedMaxSteps = ACCEL_FUSED_MAX_INSTRUCTIONS;
constexpr int kFusedMaxInputs = ACCEL_FUSED_MAX_INPUTS;
constexpr int kFusedMaxStores = ACCEL_FUSED_MAX_OUTPUTS;

struct FusedStep {
  ElementValue constant{};     // CONSTANT: the value in `dtype`, converted as FILL converts
  uint8_t kind = 0;            // AccelFusedInstructionKind
  uint8_t op = 0;              // ACCEL_FUSED_OP: the AccelOp
  uint8_t dtype = 0;           // AccelDType of the value
  uint8_t operand_dtype = 0;   // ACCEL_FUSED_OP: the AccelDType of operands[0]
  uint8_t operands[3] = {};    // LOAD: the input; ACCEL_FUSED_OP: earlier steps
  uint8_t instruction = 0;     // the instruction's index in the program (for errors)
  bool checks_divisor = false; // integer DIV: a zero divisor is reported
};

struct FusedKernelPlan {
  int32_t rank = 0;  // the iteration shape
  int64_t shape[kMaxRank] = {};
  int64_t count = 0;
  bool needs_coordinates = false;  // some input is broadcast
  int32_t num_steps = 0;
  FusedStep steps[kFusedMaxSteps];
  // Inputs: element i of the iteration space reads input k at i when it has
  // the iteration shape (contiguous), else at sum_d coord_d * strides[k][d].
  const void* inputs[kFusedMaxInputs] = {};
  uint8_t input_dtypes[kFusedMaxInputs] = {};
  bool input_contiguous[kFusedMaxInputs] = {};
  int64_t input_strides[kFusedMaxInputs][kMaxRank] = {};
  // Full-shape stores, after every step of an element: value of step
  // store_steps[j] into stores[j] (in that step's dtype).
  int32_t num_stores = 0;
  void* stores[kFusedMaxStores] = {};
  uint8_t store_steps[kFusedMaxStores] = {};
};

// MATMUL / CONV2D / CONV2D_BACKWARD_INPUT epilogue over a row-major y of
// `count` elements in rows of `columns` (accel_plugin.h, since 1.2), with the
// plain ops' formulas: y = y + bias[column] (ADD), y = activation(y), y =
// RELU_BACKWARD(y, mask). The op's result is y itself, or `staged` (float32)
// when y is BF16 / F16: then rounded once, when stored. bias and mask have y's dtype.
struct EpiloguePlan {
  int64_t count = 0;
  int64_t columns = 1;
  const float* staged = nullptr;
  const void* bias = nullptr;  // [columns], or null
  bool activation = false;
  AccelOp activation_op = ACCEL_OP_RELU;  // RELU, SIGMOID or TANH
  const void* mask = nullptr;  // y's shape, or null
};

// ---- elementwise_kernels.cu
cudaError_t launch_unary(AccelOp op, AccelDType dtype, const void* x, void* y, int64_t count,
                         cudaStream_t stream);
// Comparisons write BOOL; everything else writes `dtype`.
cudaError_t launch_binary(AccelOp op, AccelDType dtype, const void* a, const void* b, void* y,
                          const BroadcastPlan& plan, cudaStream_t stream);
// cond (BOOL) ? a : b, elements of `element_size` bytes; strides[0] is cond's.
cudaError_t launch_select(size_t element_size, const void* cond, const void* a, const void* b,
                          void* y, const BroadcastPlan& plan, cudaStream_t stream);
cudaError_t launch_cast(AccelDType from, AccelDType to, const void* x, void* y, int64_t count,
                        cudaStream_t stream);
// Writes the `element_size`-byte pattern `bits` (low bytes) into every element.
cudaError_t launch_fill(size_t element_size, void* y, int64_t count, uint64_t bits,
                        cudaStream_t stream);
cudaError_t launch_strided_copy(size_t element_size, const void* src, void* dst,
                                const StridedCopyPlan& plan, cudaStream_t stream);
cudaError_t launch_pad(size_t element_size, const void* x, void* y, int32_t rank,
                       const int64_t* in_shape, const int64_t* out_shape, const int64_t* before,
                       uint64_t value_bits, int64_t out_count, cudaStream_t stream);
// out[(o*num_indices + j)*inner + k] = params[(o*axis_dim + idx[j])*inner + k]; an
// index outside [0, axis_dim) gives zeros.
cudaError_t launch_gather(size_t element_size, const void* params, const void* indices,
                          bool indices_64, void* y, int64_t outer, int64_t axis_dim,
                          int64_t num_indices, int64_t inner, cudaStream_t stream);
cudaError_t launch_one_hot(size_t element_size, const void* indices, bool indices_64, void* y,
                           int64_t num_indices, int64_t depth, uint64_t on_bits,
                           uint64_t off_bits, cudaStream_t stream);

// ---- fused_elementwise_kernel.cu
// Runs the program over the iteration space in one launch. A zero integer
// divisor lowers *zero_divisor to the instruction's index (zero_divisor may be
// null when no step checks a divisor).
cudaError_t launch_fused_elementwise(const FusedKernelPlan& plan, int32_t* zero_divisor,
                                     cudaStream_t stream);

// ---- epilogue_kernels.cu (y of dtype F32, BF16 or F16)
cudaError_t launch_epilogue(AccelDType dtype, void* y, const EpiloguePlan& plan, cudaStream_t stream);

// ---- batch_norm_kernels.cu (float32; scratch of batch_norm_scratch_bytes)
cudaError_t launch_batch_norm(const float* x, const float* scale, const float* offset, float* y, float* mean,
                              float* variance, const BatchNormPlan& plan, double epsilon, void* scratch,
                              cudaStream_t stream);
cudaError_t launch_batch_norm_backward(const float* dy, const float* x, const float* scale, const float* mean,
                                       const float* variance, float* dx, float* dscale, float* doffset,
                                       const BatchNormPlan& plan, double epsilon, void* scratch,
                                       cudaStream_t stream);

// ---- reduce_plan.cpp (host only)
// The reduction of a dense row-major tensor of `shape` over the axes marked in `reduced`.
ReducePlan plan_reduction(int32_t rank, const int64_t* shape, const bool* reduced);
// Device scratch launch_reduce needs for `plan` (bytes; 0: none): the partial
// results of the row slices (8-byte accumulators: double, or int64 for integers).
uint64_t reduce_scratch_bytes(const ReducePlan& plan);
// Batch normalization's split of `rows` rows of `features` features, and the
// device scratch its launches need (bytes).
BatchNormPlan plan_batch_norm(int64_t rows, int64_t features);
uint64_t batch_norm_scratch_bytes(const BatchNormPlan& plan);

// ---- reduction_kernels.cu
cudaError_t launch_reduce(AccelOp op, AccelDType dtype, const void* x, void* y,
                          const ReducePlan& plan, void* scratch, cudaStream_t stream);
cudaError_t launch_argmax(AccelDType dtype, const void* x, int64_t* y, int64_t outer,
                          int64_t axis_dim, int64_t inner, cudaStream_t stream);
cudaError_t launch_softmax(AccelDType dtype, const void* x, void* y, int64_t rows, int64_t cols,
                           bool log_softmax, cudaStream_t stream);
cudaError_t launch_sparse_softmax_xent(AccelDType dtype, const void* logits, const void* labels,
                                       bool labels_64, void* loss, void* backprop, int64_t rows,
                                       int64_t cols, cudaStream_t stream);
cudaError_t launch_pool_forward(bool max_pool, AccelDType dtype, const void* x, void* y,
                                const PoolGeometry& geometry, cudaStream_t stream);
// max: dx from (x, dy); avg: dx from dy (x may be null).
cudaError_t launch_pool_backward(bool max_pool, AccelDType dtype, const void* x, const void* dy,
                                 void* dx, const PoolGeometry& geometry, cudaStream_t stream);

// ---- optimizer_kernels.cu (in place; velocity may be null when momentum == 0)
cudaError_t launch_sgd_update(AccelDType dtype, void* var, const void* grad, void* velocity,
                              int64_t count, float learning_rate, float momentum, bool nesterov,
                              cudaStream_t stream);
cudaError_t launch_adam_update(AccelDType dtype, void* var, void* m, void* v, const void* grad,
                               int64_t count, float lr_t, float beta1, float beta2,
                               float epsilon, cudaStream_t stream);
cudaError_t launch_rmsprop_update(AccelDType dtype, void* var, void* ms, void* mom, void* mg,
                                  const void* grad, int64_t count, float learning_rate, float rho,
                                  float momentum, float epsilon, bool centered,
                                  cudaStream_t stream);

// ---- random_kernels.cu
cudaError_t launch_random(AccelOp op, AccelDType dtype, void* y, int64_t count, uint64_t seed,
                          uint64_t counter_offset, double a, double b, cudaStream_t stream);

}  // namespace accel::cuda
