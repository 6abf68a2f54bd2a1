// Test helpers for the host kernel suites: an owning tensor, deterministic
// random fills, a one-line way to run an op, and index arithmetic for the
// naive reference loops the tests compare against.
#pragma once

#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <initializer_list>
#include <random>
#include <vector>

namespace accel::test {

using host_kernels::HostTensor;
using Shape = std::vector<int64_t>;

// A HostTensor that owns its bytes.
class Tensor {
 public:
  Tensor(AccelDType dtype, Shape shape) : shape_(std::move(shape)) {
    view_.dtype = dtype;
    view_.rank = static_cast<int32_t>(shape_.size());
    for (size_t i = 0; i < shape_.size(); ++i) view_.shape[i] = shape_[i];
    bytes_.resize(static_cast<size_t>(count()) * sdk::dtype_size(dtype) + 8);  // never empty
    view_.data = bytes_.data();
  }
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    return n;
  }
  template <typename T> T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  template <typename T> const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  template <typename T> T& at(int64_t i) { return data<T>()[i]; }
  const HostTensor& view() const { return view_; }
  const Shape& shape() const { return shape_; }
  AccelDType dtype() const { return view_.dtype; }

  // Element i as double, whatever the dtype.
  double value(int64_t i) const {
    switch (view_.dtype) {
      case ACCEL_DTYPE_F32: return data<float>()[i];
      case ACCEL_DTYPE_BF16: return sdk::bf16_to_float(data<uint16_t>()[i]);
      case ACCEL_DTYPE_F16: return sdk::f16_to_float(data<uint16_t>()[i]);
      case ACCEL_DTYPE_I32: return data<int32_t>()[i];
      case ACCEL_DTYPE_I64: return static_cast<double>(data<int64_t>()[i]);
      default: return data<uint8_t>()[i];
    }
  }
  void set(int64_t i, double v) {
    switch (view_.dtype) {
      case ACCEL_DTYPE_F32: data<float>()[i] = static_cast<float>(v); break;
      case ACCEL_DTYPE_BF16: data<uint16_t>()[i] = sdk::float_to_bf16(static_cast<float>(v)); break;
      case ACCEL_DTYPE_F16: data<uint16_t>()[i] = sdk::float_to_f16(static_cast<float>(v)); break;
      case ACCEL_DTYPE_I32: data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case ACCEL_DTYPE_I64: data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case ACCEL_DTYPE_BOOL: data<uint8_t>()[i] = v != 0; break;
      default: data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
    }
  }

 private:
  Shape shape_;
  std::vector<unsigned char> bytes_;
  HostTensor view_;
};

// Uniform values in [low, high]; integer dtypes get whole numbers.
inline Tensor random_tensor(AccelDType dtype, Shape shape, double low = -2.0, double high = 2.0,
                            unsigned seed = 42) {
  Tensor tensor(dtype, std::move(shape));
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  const bool integral = dtype == ACCEL_DTYPE_I32 || dtype == ACCEL_DTYPE_I64 || dtype == ACCEL_DTYPE_U8 ||
                        dtype == ACCEL_DTYPE_BOOL;
  for (int64_t i = 0; i < tensor.count(); ++i) {
    const double v = uniform(engine);
    tensor.set(i, integral ? std::round(v) : v);
  }
  return tensor;
}

inline Tensor tensor_of(AccelDType dtype, Shape shape, std::initializer_list<double> values) {
  Tensor tensor(dtype, std::move(shape));
  int64_t i = 0;
  for (double v : values) tensor.set(i++, v);
  return tensor;
}

inline void run(AccelOp op, std::initializer_list<const Tensor*> inputs, std::initializer_list<Tensor*> outputs,
                const void* attributes = nullptr) {
  std::vector<HostTensor> in, out;
  for (const Tensor* t : inputs) in.push_back(t->view());
  for (Tensor* t : outputs) out.push_back(t->view());
  host_kernels::execute(op, in, out, attributes);
}

// Row-major strides and multi-index helpers for reference loops.
inline std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (int64_t axis = static_cast<int64_t>(shape.size()) - 1; axis >= 0; --axis) {
    index[axis] = shape[axis] == 0 ? 0 : flat % shape[axis];
    flat = shape[axis] == 0 ? 0 : flat / shape[axis];
  }
  return index;
}

// Flat index into `shape` of the element that broadcasts to `out_index`.
inline int64_t broadcast_source(const std::vector<int64_t>& out_index, const Shape& shape) {
  const size_t lead = out_index.size() - shape.size();
  int64_t flat = 0;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    const int64_t i = shape[axis] == 1 ? 0 : out_index[lead + axis];
    flat = flat * shape[axis] + i;
  }
  return flat;
}

// The output size along one axis of a convolution or pooling over `in`
// cells with explicit pads: TensorFlow's window count (0 when the window is
// longer than the padded input).
inline int64_t out_size(int64_t in, int64_t filter, int64_t stride, int64_t dilation, int64_t before, int64_t after) {
  return sdk::window_positions(in + before + after, (filter - 1) * dilation + 1, stride);
}

// Tolerance: relative to the magnitude, with an absolute floor.
inline void expect_close(const Tensor& actual, const std::vector<double>& expected, double tolerance = 1e-5) {
  ASSERT_EQ(actual.count(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < actual.count(); ++i) {
    const double e = expected[i], a = actual.value(i);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(a)) << "at " << i;
      continue;
    }
    if (std::isinf(e)) {
      EXPECT_EQ(a, e) << "at " << i;
      continue;
    }
    EXPECT_NEAR(a, e, tolerance * std::max(1.0, std::fabs(e))) << "at flat index " << i;
  }
}

inline AccelStatusCode error_code_of(const std::function<void()>& body, std::string* message = nullptr) {
  try {
    body();
  } catch (const sdk::PluginError& error) {
    if (message) *message = error.what();
    return error.code();
  }
  return ACCEL_STATUS_OK;
}

}  // namespace accel::test
