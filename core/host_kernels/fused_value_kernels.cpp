// The kernels of a fusion's steps, picked by dtype when the program is
// planned: each op on a block of compute values, casts, loads from and stores
// to the stored dtypes, and the rounding of BF16/F16 results.
//
// Every formula is the plain op's own (elementwise_functors.hpp,
// element_conversions.hpp), so a fused value equals the unfused one bit for
// bit. BF16/F16 values are computed in float and rounded after each op, which
// is what the plain op does by staging through F32 and storing its result.
#include "element_conversions.hpp"
#include "elementwise_functors.hpp"
#include "fused_program.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <cstring>

namespace accel::host_kernels::detail {
namespace {

// The type a value of storage type S is computed in.
template <typename S> struct ComputeOf { using type = S; };
template <> struct ComputeOf<bf16_t> { using type = float; };
template <> struct ComputeOf<f16_t> { using type = float; };
template <> struct ComputeOf<bool_t> { using type = uint8_t; };
template <typename S> using compute_t = typename ComputeOf<S>::type;

// The value CAST reads from a compute value of storage type S: BOOL is 0 or 1
// (widen), everything else is already its arithmetic value.
template <typename S>
auto cast_source(compute_t<S> x) {
  if constexpr (std::is_same_v<S, bool_t>) return widen(bool_t{x});
  else return x;
}

inline int64_t step_of(const BlockValue& value) { return value.repeated ? 0 : 1; }

template <typename T, typename R, typename Op>
ACCEL_VECTOR_CLONES void unary_kernel(const BlockValue* operands, void* result, int64_t count) {
  const T* __restrict x = static_cast<const T*>(operands[0].data);
  R* __restrict y = static_cast<R*>(result);
  const Op op;
  for (int64_t i = 0; i < count; ++i) y[i] = op(x[i]);
}

template <typename T, typename R, typename Op>
ACCEL_VECTOR_CLONES void binary_kernel(const BlockValue* operands, void* result, int64_t count) {
  binary_run(static_cast<const T*>(operands[0].data), step_of(operands[0]), static_cast<const T*>(operands[1].data),
             step_of(operands[1]), static_cast<R*>(result), count, Op{});
}

template <typename T>
void select_kernel(const BlockValue* operands, void* result, int64_t count) {
  const uint8_t* __restrict condition = static_cast<const uint8_t*>(operands[0].data);
  const T* __restrict a = static_cast<const T*>(operands[1].data);
  const T* __restrict b = static_cast<const T*>(operands[2].data);
  T* __restrict y = static_cast<T*>(result);
  const int64_t c_step = step_of(operands[0]), a_step = step_of(operands[1]), b_step = step_of(operands[2]);
  for (int64_t i = 0; i < count; ++i) y[i] = condition[i * c_step] ? a[i * a_step] : b[i * b_step];
}

template <typename Source, typename Target>
void cast_kernel(const BlockValue* operands, void* result, int64_t count) {
  const compute_t<Source>* __restrict x = static_cast<const compute_t<Source>*>(operands[0].data);
  compute_t<Target>* __restrict y = static_cast<compute_t<Target>*>(result);
  for (int64_t i = 0; i < count; ++i) y[i] = widen(narrow<Target>(cast_source<Source>(x[i])));
}

// The 16-bit conversions of a block, in the vector lanes (clones, like
// the ops'): a fusion over bf16 values does one per load, store and op.
template <typename S>
ACCEL_VECTOR_CLONES void widen_values(const S* __restrict x, float* __restrict y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] = widen(x[i]);
}
// Stores values already rounded to S (every step's result is).
template <typename S>
ACCEL_VECTOR_CLONES void narrow_values(const float* __restrict x, S* __restrict y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] = narrow_exact<S>(x[i]);
}

template <typename S>
void load_values(const void* source, int64_t step, void* destination, int64_t count) {
  const S* __restrict x = static_cast<const S*>(source);
  compute_t<S>* __restrict y = static_cast<compute_t<S>*>(destination);
  if constexpr (std::is_same_v<S, bf16_t> || std::is_same_v<S, f16_t>) {
    if (step == 0) {
      std::fill_n(y, count, widen(*x));
    } else {
      widen_values(x, y, count);
    }
  } else if (step == 0) {  // bytes as they are: plain ops read BOOL bytes unnormalized too
    compute_t<S> value;
    std::memcpy(&value, x, sizeof(S));
    for (int64_t i = 0; i < count; ++i) y[i] = value;
  } else {
    std::memcpy(y, x, static_cast<size_t>(count) * sizeof(S));
  }
}

template <typename S>
void store_values(BlockValue values, void* destination, int64_t count) {
  const compute_t<S>* __restrict x = static_cast<const compute_t<S>*>(values.data);
  S* __restrict y = static_cast<S*>(destination);
  const int64_t step = step_of(values);
  if constexpr (std::is_same_v<S, bf16_t> || std::is_same_v<S, f16_t>) {  // exact: the value is rounded already
    if (step == 0) {
      std::fill_n(y, count, narrow<S>(*x));
    } else {
      narrow_values(x, y, count);
    }
  } else if (step == 0) {
    S value;
    std::memcpy(&value, x, sizeof(S));
    for (int64_t i = 0; i < count; ++i) y[i] = value;
  } else if (static_cast<const void*>(x) != static_cast<void*>(y)) {  // same memory: an aliased input stored back
    std::memcpy(y, x, static_cast<size_t>(count) * sizeof(S));
  }
}

template <typename S>
ACCEL_VECTOR_CLONES void round_values(void* values, int64_t count) {
  float* __restrict x = static_cast<float*>(values);
  for (int64_t i = 0; i < count; ++i) x[i] = widen(narrow<S>(x[i]));
}

// Kernels of ops on values of compute type T.
template <typename T>
StepKernel unary_for(AccelOp op) {
  if constexpr (std::is_same_v<T, uint8_t>) {
    return op == ACCEL_OP_LOGICAL_NOT ? &unary_kernel<uint8_t, uint8_t, LogicalNot> : nullptr;
  } else {
    switch (op) {
      case ACCEL_OP_NEG: return &unary_kernel<T, T, Neg>;
      case ACCEL_OP_ABS: return &unary_kernel<T, T, Abs>;
      case ACCEL_OP_SQUARE: return &unary_kernel<T, T, Square>;
      case ACCEL_OP_RELU: return &unary_kernel<T, T, Relu>;
      case ACCEL_OP_SIGN: return &unary_kernel<T, T, Sign>;
      default: break;
    }
    if constexpr (std::is_same_v<T, float>) {
      switch (op) {
        case ACCEL_OP_EXP: return &unary_kernel<float, float, Exp>;
        case ACCEL_OP_LOG: return &unary_kernel<float, float, Log>;
        case ACCEL_OP_SQRT: return &unary_kernel<float, float, Sqrt>;
        case ACCEL_OP_RSQRT: return &unary_kernel<float, float, Rsqrt>;
        case ACCEL_OP_RECIPROCAL: return &unary_kernel<float, float, Reciprocal>;
        case ACCEL_OP_SIGMOID: return &unary_kernel<float, float, Sigmoid>;
        case ACCEL_OP_TANH: return &unary_kernel<float, float, Tanh>;
        case ACCEL_OP_ERF: return &unary_kernel<float, float, Erf>;
        default: break;
      }
    }
    return nullptr;
  }
}

template <typename T>
StepKernel binary_for(AccelOp op) {
  switch (op) {
    case ACCEL_OP_EQUAL: return &binary_kernel<T, uint8_t, Equal>;
    case ACCEL_OP_NOT_EQUAL: return &binary_kernel<T, uint8_t, NotEqual>;
    default: break;
  }
  if constexpr (!std::is_same_v<T, uint8_t>) {
    switch (op) {
      case ACCEL_OP_ADD: return &binary_kernel<T, T, Add>;
      case ACCEL_OP_SUB: return &binary_kernel<T, T, Sub>;
      case ACCEL_OP_MUL: return &binary_kernel<T, T, Mul>;
      case ACCEL_OP_DIV: return &binary_kernel<T, T, Div>;  // integer divisors checked by the executor
      case ACCEL_OP_MAXIMUM: return &binary_kernel<T, T, Maximum>;
      case ACCEL_OP_MINIMUM: return &binary_kernel<T, T, Minimum>;
      case ACCEL_OP_LESS: return &binary_kernel<T, uint8_t, Less>;
      case ACCEL_OP_LESS_EQUAL: return &binary_kernel<T, uint8_t, LessEqual>;
      case ACCEL_OP_GREATER: return &binary_kernel<T, uint8_t, Greater>;
      case ACCEL_OP_GREATER_EQUAL: return &binary_kernel<T, uint8_t, GreaterEqual>;
      default: break;
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
      case ACCEL_OP_POW: return &binary_kernel<float, float, Pow>;
      case ACCEL_OP_RELU_BACKWARD: return &binary_kernel<float, float, ReluBackward>;
      case ACCEL_OP_SIGMOID_BACKWARD: return &binary_kernel<float, float, SigmoidBackward>;
      case ACCEL_OP_TANH_BACKWARD: return &binary_kernel<float, float, TanhBackward>;
      default: break;
    }
  }
  return nullptr;
}

// Calls body(T{}) with T the compute type of `dtype`.
template <typename Body>
auto with_compute_type(AccelDType dtype, const Body& body) {
  return with_storage_type(dtype, [&](auto storage) { return body(compute_t<decltype(storage)>{}); });
}

}  // namespace

StepKernel unary_step_kernel(AccelOp op, AccelDType dtype) {
  return with_compute_type(dtype, [&](auto value) { return unary_for<decltype(value)>(op); });
}

StepKernel binary_step_kernel(AccelOp op, AccelDType dtype) {
  if (dtype == ACCEL_DTYPE_U8) return nullptr;  // no arithmetic or comparison on U8
  return with_compute_type(dtype, [&](auto value) { return binary_for<decltype(value)>(op); });
}

StepKernel select_step_kernel(AccelDType dtype) {
  switch (sdk::dtype_size(dtype) == 2 ? 4 : sdk::dtype_size(dtype)) {  // BF16/F16 compute as float
    case 1: return &select_kernel<uint8_t>;
    case 4: return &select_kernel<uint32_t>;
    case 8: return &select_kernel<uint64_t>;
    default: return nullptr;
  }
}

StepKernel cast_step_kernel(AccelDType from, AccelDType to) {
  return with_storage_type(from, [&](auto source) {
    return with_storage_type(to, [&](auto target) -> StepKernel {
      return &cast_kernel<decltype(source), decltype(target)>;
    });
  });
}

LoadKernel load_kernel(AccelDType dtype) {
  return with_storage_type(dtype, [](auto storage) -> LoadKernel { return &load_values<decltype(storage)>; });
}

StoreKernel store_kernel(AccelDType dtype) {
  return with_storage_type(dtype, [](auto storage) -> StoreKernel { return &store_values<decltype(storage)>; });
}

RoundKernel round_kernel(AccelDType dtype) {
  if (dtype == ACCEL_DTYPE_BF16) return &round_values<bf16_t>;
  if (dtype == ACCEL_DTYPE_F16) return &round_values<f16_t>;
  return nullptr;
}

void constant_value(double value, AccelDType dtype, void* compute_value) {
  alignas(8) unsigned char stored[8] = {};
  encode_scalar(value, dtype, stored);
  load_kernel(dtype)(stored, 0, compute_value, 1);
}

}  // namespace accel::host_kernels::detail
