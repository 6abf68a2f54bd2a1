// MATMUL through cuBLAS (cublasGemmStridedBatchedEx). Row-major C = A x B is
// computed as column-major C^T = B^T x A^T, so no data is transposed.
// Precision: fp32 inputs use CUBLAS_COMPUTE_32F (exact fp32, no TF32) unless
// the device allows TF32 (options "tf32=1" or setting cuda.allow_tf32=1);
// bf16 / f16 inputs accumulate in fp32. Batch dims broadcast: equal batches
// and a batch of one use strides (0 for the broadcast side); other broadcasts
// loop over the output batch. cuBLAS is called through the table loaded on
// first use (math_libraries.hpp). An epilogue (plugin API 1.2) runs as one
// kernel after the GEMM (epilogue.hpp); for bf16 / f16 the GEMM then writes
// fp32 scratch, which the epilogue rounds once, as the CPU reference stages it.
#include "cuda_check.hpp"
#include "epilogue.hpp"
#include "math_libraries.hpp"
#include "op_dispatch.hpp"

#include <cstddef>
#include <cublas_v2.h>

#include <limits>
#include <string>

namespace accel::cuda {
namespace {

void check_cublas(const CublasLibrary& cublas, cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  (void)cudaGetLastError();
  throw sdk::PluginError(status == CUBLAS_STATUS_ALLOC_FAILED ? ACCEL_STATUS_RESOURCE_EXHAUSTED
                                                              : ACCEL_STATUS_INTERNAL,
                         std::string(what) + " failed: " + cublas.cublasGetStatusString(status));
}

int as_int(int64_t value, const char* what) {
  if (value > std::numeric_limits<int>::max()) {
    throw sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED,
                           std::string("matmul: ") + what + " exceeds cuBLAS's int range");
  }
  return static_cast<int>(value);
}

// Batch dims of `v` (all but the last two), right-aligned to `rank` dims.
void batch_dims(const View& v, int32_t rank, int64_t* dims) {
  const int32_t own = v.rank - 2;
  for (int32_t d = 0; d < rank; ++d) {
    const int32_t from = d - (rank - own);
    dims[d] = from >= 0 ? v.shape[from] : 1;
  }
}

}  // namespace

OpCost run_matmul(AccelDevice& device, const AccelOpCall& call) {
  if (call.num_inputs < 2 || call.num_outputs != 1 || call.inputs == nullptr || call.outputs == nullptr) {
    invalid("matmul: expected a, b (and the epilogue's inputs) -> y");
  }
  // Hosts before 1.2 send the struct without its epilogue fields (bind_epilogue reads those).
  const auto& attributes =
      sdk::attributes_of<AccelMatmulAttributes>(call, offsetof(AccelMatmulAttributes, epilogue_flags));
  View a = view_of(call.inputs[0], "a"), b = view_of(call.inputs[1], "b");
  View y = view_of(call.outputs[0], "y");
  if (a.rank < 2 || b.rank < 2 || y.rank < 2) invalid("matmul: inputs and output need rank >= 2");
  if (a.dtype != b.dtype || y.dtype != a.dtype) invalid("matmul: dtypes of a, b and y differ");
  const bool ta = attributes.transpose_a != 0, tb = attributes.transpose_b != 0;
  const int64_t m = ta ? a.shape[a.rank - 1] : a.shape[a.rank - 2];
  const int64_t k = ta ? a.shape[a.rank - 2] : a.shape[a.rank - 1];
  const int64_t kb = tb ? b.shape[b.rank - 1] : b.shape[b.rank - 2];
  const int64_t n = tb ? b.shape[b.rank - 2] : b.shape[b.rank - 1];
  if (k != kb) invalid("matmul: inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(kb) + ")");
  if (y.shape[y.rank - 2] != m || y.shape[y.rank - 1] != n) invalid("matmul: output must be [..., M, N]");
  const Epilogue epilogue = bind_epilogue(call, y, "matmul");

  // Batch broadcasting against the output's batch dims.
  const int32_t batch_rank = y.rank - 2;
  if (a.rank - 2 > batch_rank || b.rank - 2 > batch_rank) invalid("matmul: output batch rank too small");
  int64_t a_dims[kMaxRank], b_dims[kMaxRank];
  batch_dims(a, batch_rank, a_dims);
  batch_dims(b, batch_rank, b_dims);
  int64_t batch = 1, a_batch = 1, b_batch = 1;
  bool a_full = true, b_full = true;
  for (int32_t d = 0; d < batch_rank; ++d) {
    const int64_t out = y.shape[d];
    if ((a_dims[d] != out && a_dims[d] != 1) || (b_dims[d] != out && b_dims[d] != 1)) {
      invalid("matmul: batch dimensions do not broadcast to the output");
    }
    batch *= out;
    a_batch *= a_dims[d];
    b_batch *= b_dims[d];
    a_full = a_full && a_dims[d] == out;
    b_full = b_full && b_dims[d] == out;
  }

  OpCost cost;
  cost.flops = 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
               static_cast<double>(k);
  cost.bytes = static_cast<double>(a.bytes() + b.bytes() + y.bytes() + epilogue.input_bytes());
  if (y.count == 0) return cost;

  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = device.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (a.dtype == ACCEL_DTYPE_BF16) {
    type = CUDA_R_16BF;
    compute = CUBLAS_COMPUTE_32F;
  } else if (a.dtype == ACCEL_DTYPE_F16) {
    type = CUDA_R_16F;
    compute = CUBLAS_COMPUTE_32F;
  } else if (a.dtype != ACCEL_DTYPE_F32) {
    invalid("matmul: dtype must be float32, bfloat16 or float16");
  }
  // The GEMM's result C: y itself, or fp32 scratch for a bf16 / f16 epilogue.
  const bool staged = epilogue.any() && a.dtype != ACCEL_DTYPE_F32;
  Scratch staging(*device.allocator, staged ? static_cast<uint64_t>(y.count) * sizeof(float) : 0);
  void* c = staged ? staging.get() : y.data;
  const cudaDataType_t c_type = staged ? CUDA_R_32F : type;
  const size_t element = sdk::dtype_size(a.dtype);
  const size_t c_element = staged ? sizeof(float) : element;
  auto with_epilogue = [&] {
    apply_epilogue(device, epilogue, y, staged ? static_cast<const float*>(c) : nullptr);
    return cost;
  };
  if (k == 0) {  // empty sum: zeros
    ACCEL_CUDA_CHECK(cudaMemsetAsync(c, 0, static_cast<uint64_t>(y.count) * c_element, device.stream));
    return with_epilogue();
  }

  // Column-major view: C^T[n x m] = op(B)^T[n x k] * op(A)^T[k x m].
  const int cm = as_int(n, "N"), cn = as_int(m, "M"), ck = as_int(k, "K");
  const cublasOperation_t op_b = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ld_b = as_int(tb ? k : n, "leading dimension of b");
  const int ld_a = as_int(ta ? m : k, "leading dimension of a");
  const int ld_c = cm;
  const long long a_matrix = static_cast<long long>(m * k), b_matrix = static_cast<long long>(k * n);
  const long long c_matrix = static_cast<long long>(m * n);
  const float alpha = 1.0f, beta = 0.0f;
  cublasHandle_t handle = cublas_handle(device);  // the first matmul loads cuBLAS
  const CublasLibrary& cublas = cublas_library(device.host);

  const bool strided = (a_full || a_batch == 1) && (b_full || b_batch == 1);
  if (strided) {
    check_cublas(cublas, cublas.cublasGemmStridedBatchedEx(
                     handle, op_b, op_a, cm, cn, ck, &alpha, b.data, type, ld_b,
                     b_batch == 1 ? 0 : b_matrix, a.data, type, ld_a, a_batch == 1 ? 0 : a_matrix,
                     &beta, c, c_type, ld_c, c_matrix, as_int(batch, "batch"), compute,
                     CUBLAS_GEMM_DEFAULT),
                 "cublasGemmStridedBatchedEx");
    return with_epilogue();
  }
  // General broadcast: one GEMM per output batch element.
  int64_t a_strides[kMaxRank], b_strides[kMaxRank];
  int64_t sa = a_matrix, sb = b_matrix;
  for (int32_t d = batch_rank - 1; d >= 0; --d) {
    a_strides[d] = a_dims[d] == 1 ? 0 : sa;
    b_strides[d] = b_dims[d] == 1 ? 0 : sb;
    sa *= a_dims[d];
    sb *= b_dims[d];
  }
  for (int64_t index = 0; index < batch; ++index) {
    int64_t rest = index, a_offset = 0, b_offset = 0;
    for (int32_t d = batch_rank - 1; d >= 0; --d) {
      const int64_t coord = rest % y.shape[d];
      rest /= y.shape[d];
      a_offset += coord * a_strides[d];
      b_offset += coord * b_strides[d];
    }
    const char* a_ptr = static_cast<const char*>(a.data) + a_offset * static_cast<int64_t>(element);
    const char* b_ptr = static_cast<const char*>(b.data) + b_offset * static_cast<int64_t>(element);
    char* c_ptr = static_cast<char*>(c) + index * c_matrix * static_cast<int64_t>(c_element);
    check_cublas(cublas,
                 cublas.cublasGemmEx(handle, op_b, op_a, cm, cn, ck, &alpha, b_ptr, type, ld_b,
                                     a_ptr, type, ld_a, &beta, c_ptr, c_type, ld_c, compute,
                                     CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
  }
  return with_epilogue();
}

}  // namespace accel::cuda
