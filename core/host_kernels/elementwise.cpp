// Unary and binary elementwise kernels, SELECT and BROADCAST_TO. Unary ops
// read and write BF16 themselves; every other float op here sees F32 only.
//
// Broadcasting follows NumPy: inputs are aligned to the output's trailing
// axes and a size-1 axis repeats. Axes that every operand walks contiguously
// are merged, so the common cases run as one flat loop (same shape), a loop
// against a scalar, or rows against a repeated row (bias add). The innermost
// loops are plain indexed loops over restrict pointers so the compiler
// vectorizes them; only loops over kCheapGrain elements or more go to oneTBB.
#include "broadcast_layout.hpp"
#include "element_conversions.hpp"
#include "elementwise_functors.hpp"
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <type_traits>

namespace accel::host_kernels::detail {
namespace {

constexpr int kMaxOperands = 3;
using Layout = BroadcastLayout<kMaxOperands>;

Layout layout_of(const HostTensor& output, std::initializer_list<const HostTensor*> operands) {
  return detail::make_layout<kMaxOperands>(output, std::span<const HostTensor* const>(operands.begin(), operands.size()));
}

// Calls run(offsets, output_offset, length) for runs along the innermost
// merged axis, where operand o's run starts at offsets[o] and steps by
// layout.strides[o][rank - 1] (0 or 1).
template <typename Run>
void for_each_run(const Layout& layout, int64_t grain, const Run& run) {
  const int inner_axis = layout.rank - 1;
  const int64_t inner = layout.inner();
  const int64_t outer = layout.rows();
  if (outer == 0 || inner == 0) return;
  if (outer == 1) {
    parallel_ranges(inner, grain, [&](int64_t begin, int64_t end) {
      int64_t offsets[kMaxOperands];
      for (int o = 0; o < layout.operands; ++o) offsets[o] = begin * layout.strides[o][inner_axis];
      run(offsets, begin, end - begin);
    });
    return;
  }
  parallel_ranges(outer, grain_for(inner, grain), [&](int64_t begin, int64_t end) {
    RunCursor<kMaxOperands> cursor(layout, begin);
    for (int64_t row = begin; row < end; ++row) {
      run(cursor.offsets, row * inner, inner);
      cursor.next_row();
    }
  });
}

template <typename T, typename R, typename Op>
ACCEL_VECTOR_CLONES void binary_span(const T* a, int64_t a_step, const T* b, int64_t b_step, R* y, int64_t length,
                                     Op op) {
  binary_run(a, a_step, b, b_step, y, length, op);
}

template <typename T, typename R, typename Op>
ACCEL_VECTOR_CLONES void unary_span(const T* __restrict x, R* __restrict y, int64_t length, Op op) {
  for (int64_t i = 0; i < length; ++i) y[i] = op(x[i]);
}

template <typename T, typename R, typename Op>
void run_binary(const HostTensor& a, const HostTensor& b, const HostTensor& y, Op op,
                int64_t grain) {
  const T* a_data = data_of<const T>(a);
  const T* b_data = data_of<const T>(b);
  R* y_data = data_of<R>(y);
  const int64_t count = element_count(y);
  // Fast paths: no broadcasting, or a scalar against a full tensor.
  const bool a_full = same_shape(a, y), b_full = same_shape(b, y);
  const bool a_scalar = element_count(a) == 1 && a.rank <= y.rank;
  const bool b_scalar = element_count(b) == 1 && b.rank <= y.rank;
  if ((a_full || a_scalar) && (b_full || b_scalar)) {
    if (count == 0) return;
    const int64_t a_step = a_full ? 1 : 0, b_step = b_full ? 1 : 0;
    parallel_ranges(count, grain, [&](int64_t begin, int64_t end) {
      binary_span(a_data + begin * a_step, a_step, b_data + begin * b_step, b_step, y_data + begin,
                  end - begin, op);
    });
    return;
  }
  const Layout layout = layout_of(y, {&a, &b});
  const int inner = layout.rank - 1;
  for_each_run(layout, grain, [&](const int64_t* offsets, int64_t out_offset, int64_t length) {
    binary_span(a_data + offsets[0], layout.strides[0][inner], b_data + offsets[1],
                layout.strides[1][inner], y_data + out_offset, length, op);
  });
}

template <typename T, typename R, typename Op>
void run_unary(const HostTensor& x, const HostTensor& y, Op op, int64_t grain) {
  if (!same_shape(x, y)) invalid("output shape must equal the input shape");
  const T* __restrict x_data = data_of<const T>(x);
  R* __restrict y_data = data_of<R>(y);
  parallel_ranges(element_count(y), grain, [&](int64_t begin, int64_t end) {
    unary_span(x_data + begin, y_data + begin, end - begin, op);
  });
}

template <typename T>
void check_integer_divisor(const HostTensor& b) {
  const T* data = data_of<const T>(b);
  const int64_t count = element_count(b);
  for (int64_t i = 0; i < count; ++i) {
    if (data[i] == 0) invalid("integer division by zero at flat index " + std::to_string(i));
  }
}

template <typename T>
void binary_typed(AccelOp op, const HostTensor& a, const HostTensor& b, const HostTensor& y) {
  switch (op) {
    case ACCEL_OP_ADD: return run_binary<T, T>(a, b, y, Add{}, kCheapGrain);
    case ACCEL_OP_SUB: return run_binary<T, T>(a, b, y, Sub{}, kCheapGrain);
    case ACCEL_OP_MUL: return run_binary<T, T>(a, b, y, Mul{}, kCheapGrain);
    case ACCEL_OP_DIV:
      if constexpr (std::is_integral_v<T>) check_integer_divisor<T>(b);
      return run_binary<T, T>(a, b, y, Div{}, kCheapGrain);
    case ACCEL_OP_MAXIMUM: return run_binary<T, T>(a, b, y, Maximum{}, kCheapGrain);
    case ACCEL_OP_MINIMUM: return run_binary<T, T>(a, b, y, Minimum{}, kCheapGrain);
    case ACCEL_OP_EQUAL: return run_binary<T, uint8_t>(a, b, y, Equal{}, kCheapGrain);
    case ACCEL_OP_NOT_EQUAL: return run_binary<T, uint8_t>(a, b, y, NotEqual{}, kCheapGrain);
    case ACCEL_OP_LESS: return run_binary<T, uint8_t>(a, b, y, Less{}, kCheapGrain);
    case ACCEL_OP_LESS_EQUAL: return run_binary<T, uint8_t>(a, b, y, LessEqual{}, kCheapGrain);
    case ACCEL_OP_GREATER: return run_binary<T, uint8_t>(a, b, y, Greater{}, kCheapGrain);
    case ACCEL_OP_GREATER_EQUAL:
      return run_binary<T, uint8_t>(a, b, y, GreaterEqual{}, kCheapGrain);
    default: break;
  }
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
      case ACCEL_OP_POW: return run_binary<float, float>(a, b, y, Pow{}, kExpensiveGrain);
      case ACCEL_OP_RELU_BACKWARD:
        return run_binary<float, float>(a, b, y, ReluBackward{}, kCheapGrain);
      case ACCEL_OP_SIGMOID_BACKWARD:
        return run_binary<float, float>(a, b, y, SigmoidBackward{}, kCheapGrain);
      case ACCEL_OP_TANH_BACKWARD:
        return run_binary<float, float>(a, b, y, TanhBackward{}, kCheapGrain);
      default: break;
    }
  }
  fail(ACCEL_STATUS_UNIMPLEMENTED, "no binary kernel for this dtype");
}

// A float op over BF16 storage: each value widened as it is read and the
// result rounded as it is stored, which is what staging through F32 gives,
// without the two extra passes.
template <typename Op>
struct OnBf16 {
  bf16_t operator()(bf16_t x) const { return narrow<bf16_t>(Op{}(widen(x))); }
};

// Storage type S, compute type T: the same for F32 and the integers; BF16
// (S = bf16_t) computes in float.
template <typename T, typename S = T>
void unary_typed(AccelOp op, const HostTensor& x, const HostTensor& y) {
  auto run = [&](auto functor, int64_t grain) {
    using Op = decltype(functor);
    if constexpr (std::is_same_v<S, bf16_t>) {
      run_unary<bf16_t, bf16_t>(x, y, OnBf16<Op>{}, grain);
    } else {
      run_unary<T, T>(x, y, functor, grain);
    }
  };
  switch (op) {
    case ACCEL_OP_NEG: return run(Neg{}, kCheapGrain);
    case ACCEL_OP_ABS: return run(Abs{}, kCheapGrain);
    case ACCEL_OP_SQUARE: return run(Square{}, kCheapGrain);
    case ACCEL_OP_RELU: return run(Relu{}, kCheapGrain);
    case ACCEL_OP_SIGN: return run(Sign{}, kCheapGrain);
    default: break;
  }
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
      case ACCEL_OP_EXP: return run(Exp{}, kExpensiveGrain);
      case ACCEL_OP_LOG: return run(Log{}, kExpensiveGrain);
      case ACCEL_OP_SQRT: return run(Sqrt{}, kCheapGrain);
      case ACCEL_OP_RSQRT: return run(Rsqrt{}, kCheapGrain);
      case ACCEL_OP_RECIPROCAL: return run(Reciprocal{}, kCheapGrain);
      case ACCEL_OP_SIGMOID: return run(Sigmoid{}, kExpensiveGrain);
      case ACCEL_OP_TANH: return run(Tanh{}, kExpensiveGrain);
      case ACCEL_OP_ERF: return run(Erf{}, kExpensiveGrain);
      default: break;
    }
  }
  fail(ACCEL_STATUS_UNIMPLEMENTED, "no unary kernel for this dtype");
}

// Unsigned integer of each element size, for kernels that only move bytes.
template <size_t Size> struct BitsOf;
template <> struct BitsOf<1> { using type = uint8_t; };
template <> struct BitsOf<2> { using type = uint16_t; };
template <> struct BitsOf<4> { using type = uint32_t; };
template <> struct BitsOf<8> { using type = uint64_t; };

template <typename T>
void select_typed(const HostTensor& condition, const HostTensor& a, const HostTensor& b,
                  const HostTensor& y) {
  const uint8_t* c_data = data_of<const uint8_t>(condition);
  const T* a_data = data_of<const T>(a);
  const T* b_data = data_of<const T>(b);
  T* y_data = data_of<T>(y);
  const Layout layout = layout_of(y, {&condition, &a, &b});
  const int inner = layout.rank - 1;
  const int64_t c_step = layout.strides[0][inner], a_step = layout.strides[1][inner],
                b_step = layout.strides[2][inner];
  for_each_run(layout, kCheapGrain, [&](const int64_t* offsets, int64_t out_offset, int64_t length) {
    const uint8_t* __restrict c = c_data + offsets[0];
    const T* __restrict a_run = a_data + offsets[1];
    const T* __restrict b_run = b_data + offsets[2];
    T* __restrict out = y_data + out_offset;
    for (int64_t i = 0; i < length; ++i) {
      out[i] = c[i * c_step] ? a_run[i * a_step] : b_run[i * b_step];
    }
  });
}

template <typename T>
void broadcast_typed(const HostTensor& x, const HostTensor& y) {
  const T* x_data = data_of<const T>(x);
  T* y_data = data_of<T>(y);
  const Layout layout = layout_of(y, {&x});
  const int64_t step = layout.strides[0][layout.rank - 1];
  for_each_run(layout, kCheapGrain, [&](const int64_t* offsets, int64_t out_offset, int64_t length) {
    if (step != 0) {
      std::memcpy(y_data + out_offset, x_data + offsets[0], static_cast<size_t>(length) * sizeof(T));
    } else {
      std::fill_n(y_data + out_offset, length, x_data[offsets[0]]);
    }
  });
}

template <template <typename> class Kernel, typename... Args>
void by_element_size(size_t size, Args&&... args) {
  switch (size) {
    case 1: return Kernel<uint8_t>::run(args...);
    case 2: return Kernel<uint16_t>::run(args...);
    case 4: return Kernel<uint32_t>::run(args...);
    case 8: return Kernel<uint64_t>::run(args...);
    default: invalid("unsupported element size");
  }
}
template <typename T> struct SelectKernel {
  static void run(const HostTensor& c, const HostTensor& a, const HostTensor& b, const HostTensor& y) {
    select_typed<T>(c, a, b, y);
  }
};
template <typename T> struct BroadcastKernel {
  static void run(const HostTensor& x, const HostTensor& y) { broadcast_typed<T>(x, y); }
};

}  // namespace

void unary(AccelOp op, const HostTensor& x, const HostTensor& y) {
  switch (x.dtype) {
    case ACCEL_DTYPE_F32: return unary_typed<float>(op, x, y);
    case ACCEL_DTYPE_BF16: return unary_typed<float, bf16_t>(op, x, y);
    case ACCEL_DTYPE_I32: return unary_typed<int32_t>(op, x, y);
    case ACCEL_DTYPE_I64: return unary_typed<int64_t>(op, x, y);
    case ACCEL_DTYPE_BOOL:
      if (op == ACCEL_OP_LOGICAL_NOT) return run_unary<uint8_t, uint8_t>(x, y, LogicalNot{}, kCheapGrain);
      break;
    default: break;
  }
  fail(ACCEL_STATUS_UNIMPLEMENTED, "no unary kernel for this dtype");
}

void binary(AccelOp op, const HostTensor& a, const HostTensor& b, const HostTensor& y) {
  switch (a.dtype) {
    case ACCEL_DTYPE_F32: return binary_typed<float>(op, a, b, y);
    case ACCEL_DTYPE_I32: return binary_typed<int32_t>(op, a, b, y);
    case ACCEL_DTYPE_I64: return binary_typed<int64_t>(op, a, b, y);
    case ACCEL_DTYPE_BOOL:
      if (op == ACCEL_OP_EQUAL) return run_binary<uint8_t, uint8_t>(a, b, y, Equal{}, kCheapGrain);
      if (op == ACCEL_OP_NOT_EQUAL) return run_binary<uint8_t, uint8_t>(a, b, y, NotEqual{}, kCheapGrain);
      break;
    default: break;
  }
  fail(ACCEL_STATUS_UNIMPLEMENTED, "no binary kernel for this dtype");
}

void select(const HostTensor& condition, const HostTensor& a, const HostTensor& b,
            const HostTensor& y) {
  if (element_count(y) == 0) return;
  by_element_size<SelectKernel>(element_size(y), condition, a, b, y);
}

void broadcast_to(const HostTensor& x, const HostTensor& y) {
  if (element_count(y) == 0) return;
  by_element_size<BroadcastKernel>(element_size(y), x, y);
}

}  // namespace accel::host_kernels::detail
