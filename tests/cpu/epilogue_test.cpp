// Epilogues of MATMUL, CONV2D and CONV2D_BACKWARD_INPUT (bias, activation,
// ReLU mask) against the unfused sequence: the op, ADD of the bias, the
// activation op, RELU_BACKWARD with the mask. MATMUL and the mask step are
// the unfused numbers bit for bit; CONV2D's bias and activation run inside
// oneDNN's primitive (post-ops), equal to rounding. Also: attribute structs
// from before 1.2 mean no epilogue, and bad epilogues are rejected.
#include "test_tensor.hpp"

#include <cstddef>

namespace accel::test {
namespace {

const AccelDType F32 = ACCEL_DTYPE_F32;

struct EpilogueCase {
  int32_t flags;
  AccelOp activation;
};

const std::vector<EpilogueCase> kEpilogues = {
    {ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU},
    {ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_RELU},
    {ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_SIGMOID},
    {ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_TANH},
    {ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_RELU},
    {ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_SIGMOID},
    {ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_TANH},
};

std::string describe(const EpilogueCase& epilogue) {
  return "flags " + std::to_string(epilogue.flags) + " activation " + host_kernels::op_name(epilogue.activation);
}

// The epilogue's extra inputs for an output of `shape`.
struct ExtraInputs {
  Tensor bias;
  Tensor mask;
  ExtraInputs(AccelDType dtype, const Shape& shape, unsigned seed)
      : bias(random_tensor(dtype, {shape.back()}, -1, 1, seed)), mask(random_tensor(dtype, shape, -1, 1, seed + 1)) {}

  std::vector<const Tensor*> for_flags(int32_t flags) const {
    std::vector<const Tensor*> extra;
    if (flags & ACCEL_EPILOGUE_BIAS) extra.push_back(&bias);
    if (flags & ACCEL_EPILOGUE_RELU_MASK) extra.push_back(&mask);
    return extra;
  }
};

void run_with(AccelOp op, std::vector<const Tensor*> inputs, Tensor& y, const void* attributes,
              host_kernels::EpilogueRounding rounding = host_kernels::EpilogueRounding::kFastest) {
  std::vector<HostTensor> in;
  for (const Tensor* tensor : inputs) in.push_back(tensor->view());
  HostTensor out = y.view();
  host_kernels::execute(op, in, {&out, 1}, attributes, rounding);
}

// Applies the epilogue to y as separate plain ops.
void apply_unfused(Tensor& y, const EpilogueCase& epilogue, const ExtraInputs& extra) {
  auto step = [&](AccelOp op, std::initializer_list<const Tensor*> operands) {
    Tensor result(y.dtype(), y.shape());
    std::vector<const Tensor*> inputs(operands);
    run_with(op, inputs, result, nullptr);
    y = std::move(result);
  };
  if (epilogue.flags & ACCEL_EPILOGUE_BIAS) step(ACCEL_OP_ADD, {&y, &extra.bias});
  if (epilogue.flags & ACCEL_EPILOGUE_ACTIVATION) step(epilogue.activation, {&y});
  if (epilogue.flags & ACCEL_EPILOGUE_RELU_MASK) step(ACCEL_OP_RELU_BACKWARD, {&y, &extra.mask});
}

void expect_same_bits(const Tensor& actual, const Tensor& expected) {
  ASSERT_EQ(actual.count(), expected.count());
  for (int64_t i = 0; i < actual.count(); ++i) {
    if (actual.value(i) != expected.value(i)) {
      ADD_FAILURE() << "element " << i << " is " << actual.value(i) << ", unfused gives " << expected.value(i);
      return;
    }
  }
}

struct MatmulShape {
  Shape a, b, y;
  bool transpose_a, transpose_b;
};

TEST(Epilogue, MatmulEqualsTheUnfusedOpsBitForBit) {
  const std::vector<MatmulShape> shapes = {
      {{3, 5}, {5, 4}, {3, 4}, false, false},
      {{5, 3}, {4, 5}, {3, 4}, true, true},
      {{2, 3, 5}, {2, 5, 4}, {2, 3, 4}, false, false},  // batched
      {{2, 3, 5}, {5, 4}, {2, 3, 4}, false, false},     // one tall GEMM
      {{3, 0}, {0, 4}, {3, 4}, false, false},           // K = 0: the epilogue of zeros
      {{130, 70}, {70, 1500}, {130, 1500}, false, false},  // rows longer than a block, parallel
  };
  for (const MatmulShape& shape : shapes) {
    Tensor a = random_tensor(F32, shape.a, -1, 1, 1), b = random_tensor(F32, shape.b, -1, 1, 2);
    const ExtraInputs extra(F32, shape.y, 3);
    for (const EpilogueCase& epilogue : kEpilogues) {
      SCOPED_TRACE(describe(epilogue) + " y " + std::to_string(Tensor(F32, shape.y).count()));
      AccelMatmulAttributes plain{sizeof(AccelMatmulAttributes), shape.transpose_a, shape.transpose_b, 0, ACCEL_OP_RELU};
      AccelMatmulAttributes fused = plain;
      fused.epilogue_flags = epilogue.flags;
      fused.activation = epilogue.activation;
      Tensor expected(F32, shape.y), actual(F32, shape.y);
      run_with(ACCEL_OP_MATMUL, {&a, &b}, expected, &plain);
      apply_unfused(expected, epilogue, extra);
      std::vector<const Tensor*> inputs{&a, &b};
      for (const Tensor* input : extra.for_flags(epilogue.flags)) inputs.push_back(input);
      run_with(ACCEL_OP_MATMUL, inputs, actual, &fused);
      expect_same_bits(actual, expected);
    }
  }
}

TEST(Epilogue, HalfPrecisionMatmulRoundsOnceAtTheEnd) {
  Tensor a = random_tensor(ACCEL_DTYPE_BF16, {9, 33}, -1, 1, 4), b = random_tensor(ACCEL_DTYPE_BF16, {33, 17}, -1, 1, 5);
  const ExtraInputs extra(ACCEL_DTYPE_BF16, {9, 17}, 6);
  const EpilogueCase epilogue{ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_SIGMOID};
  AccelMatmulAttributes plain{sizeof(AccelMatmulAttributes), 0, 0, 0, ACCEL_OP_RELU};
  AccelMatmulAttributes fused{sizeof(AccelMatmulAttributes), 0, 0, epilogue.flags, epilogue.activation};
  Tensor expected(ACCEL_DTYPE_BF16, {9, 17}), actual(ACCEL_DTYPE_BF16, {9, 17});
  run_with(ACCEL_OP_MATMUL, {&a, &b}, expected, &plain);
  apply_unfused(expected, epilogue, extra);
  run_with(ACCEL_OP_MATMUL, {&a, &b, &extra.bias, &extra.mask}, actual, &fused);
  std::vector<double> want;
  for (int64_t i = 0; i < expected.count(); ++i) want.push_back(expected.value(i));
  expect_close(actual, want, 2.0 / 128);  // the unfused sequence rounds to bf16 after every op
}

struct ConvCase {
  int64_t n, h, w, c, r, s, k;
  AccelConv2dAttributes attributes;
};

TEST(Epilogue, ConvolutionsEqualTheUnfusedOps) {
  auto attrs = [](int32_t sh, int32_t sw, int32_t pt, int32_t pb, int32_t pl, int32_t pr) {
    return AccelConv2dAttributes{sizeof(AccelConv2dAttributes), sh, sw, 1, 1, pt, pb, pl, pr, 0, ACCEL_OP_RELU};
  };
  const std::vector<ConvCase> cases = {
      {2, 7, 6, 3, 3, 3, 4, attrs(1, 1, 0, 0, 0, 0)},
      {1, 9, 8, 2, 3, 2, 5, attrs(2, 2, 1, 1, 0, 1)},
      {4, 28, 28, 1, 3, 3, 32, attrs(1, 1, 0, 0, 0, 0)},  // the tutorial's first layer
      {2, 9, 10, 16, 3, 3, 24, attrs(1, 1, 1, 1, 1, 1)},  // a ResNet layer's shape, smaller
  };
  // The three convolution paths: oneDNN's primitives, im2col tiles on sgemm
  // (convolution_gemm.cpp), and Winograd F(4x4, 3x3) where it applies
  // (convolution_winograd.cpp); the last two apply the whole epilogue after
  // the product.
  struct Path {
    const char* gemm;
    const char* winograd;
  };
  for (const Path path : {Path{"0", "onednn"}, Path{"all", "onednn"}, Path{"0", "accel"}})
  for (const ConvCase& c : cases) {
    const char* gemm = path.gemm;
    ::setenv("ACCEL_CPU_CONV_GEMM", gemm, 1);
    ::setenv("ACCEL_CPU_WINOGRAD", path.winograd, 1);
    const AccelConv2dAttributes& plain = c.attributes;
    const int64_t oh = out_size(c.h, c.r, plain.stride_h, 1, plain.pad_top, plain.pad_bottom);
    const int64_t ow = out_size(c.w, c.s, plain.stride_w, 1, plain.pad_left, plain.pad_right);
    const Shape x_shape{c.n, c.h, c.w, c.c}, y_shape{c.n, oh, ow, c.k};
    Tensor x = random_tensor(F32, x_shape, -1, 1, 7), filter = random_tensor(F32, {c.r, c.s, c.c, c.k}, -1, 1, 8);
    Tensor dy = random_tensor(F32, y_shape, -1, 1, 9);
    const ExtraInputs forward_extra(F32, y_shape, 10), backward_extra(F32, x_shape, 12);
    for (const EpilogueCase& epilogue : kEpilogues) {
      SCOPED_TRACE(describe(epilogue) + " conv x " + std::to_string(x.count()) + ", GEMM " + gemm + ", Winograd " +
                   path.winograd);
      AccelConv2dAttributes fused = plain;
      fused.epilogue_flags = epilogue.flags;
      fused.activation = epilogue.activation;
      {  // CONV2D: bias and activation in oneDNN's primitive (to rounding), the mask after it;
         // with EpilogueRounding::kAsPlainOps (the emulated TPU's) all after it, bit for bit
        Tensor expected(F32, y_shape), actual(F32, y_shape), as_plain_ops(F32, y_shape);
        run_with(ACCEL_OP_CONV2D, {&x, &filter}, expected, &plain);
        apply_unfused(expected, epilogue, forward_extra);
        std::vector<const Tensor*> inputs{&x, &filter};
        for (const Tensor* input : forward_extra.for_flags(epilogue.flags)) inputs.push_back(input);
        run_with(ACCEL_OP_CONV2D, inputs, actual, &fused);
        if (epilogue.flags == ACCEL_EPILOGUE_RELU_MASK) {
          expect_same_bits(actual, expected);
        } else {
          std::vector<double> want;
          for (int64_t i = 0; i < expected.count(); ++i) want.push_back(expected.value(i));
          expect_close(actual, want, 1e-5);
        }
        run_with(ACCEL_OP_CONV2D, inputs, as_plain_ops, &fused, host_kernels::EpilogueRounding::kAsPlainOps);
        expect_same_bits(as_plain_ops, expected);
      }
      {  // CONV2D_BACKWARD_INPUT: the whole epilogue after the primitive, bit for bit
        Tensor expected(F32, x_shape), actual(F32, x_shape);
        run_with(ACCEL_OP_CONV2D_BACKWARD_INPUT, {&dy, &filter}, expected, &plain);
        apply_unfused(expected, epilogue, backward_extra);
        std::vector<const Tensor*> inputs{&dy, &filter};
        for (const Tensor* input : backward_extra.for_flags(epilogue.flags)) inputs.push_back(input);
        run_with(ACCEL_OP_CONV2D_BACKWARD_INPUT, inputs, actual, &fused);
        expect_same_bits(actual, expected);
      }
    }
  }
  ::unsetenv("ACCEL_CPU_CONV_GEMM");
  ::unsetenv("ACCEL_CPU_WINOGRAD");
}

TEST(Epilogue, AttributesFromBeforeVersion12MeanNone) {
  Tensor a = random_tensor(F32, {4, 6}, -1, 1, 14), b = random_tensor(F32, {6, 3}, -1, 1, 15);
  AccelMatmulAttributes old_matmul{offsetof(AccelMatmulAttributes, epilogue_flags), 0, 0,
                                   ACCEL_EPILOGUE_BIAS, ACCEL_OP_SIGMOID};  // fields past struct_size are not read
  AccelMatmulAttributes current{sizeof(AccelMatmulAttributes), 0, 0, 0, ACCEL_OP_RELU};
  Tensor from_old(F32, {4, 3}), from_current(F32, {4, 3});
  run_with(ACCEL_OP_MATMUL, {&a, &b}, from_old, &old_matmul);
  run_with(ACCEL_OP_MATMUL, {&a, &b}, from_current, &current);
  expect_same_bits(from_old, from_current);

  Tensor x = random_tensor(F32, {1, 5, 5, 2}, -1, 1, 16), filter = random_tensor(F32, {3, 3, 2, 3}, -1, 1, 17);
  AccelConv2dAttributes old_conv{offsetof(AccelConv2dAttributes, epilogue_flags), 1, 1, 1, 1, 0, 0, 0, 0,
                                 ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_RELU};
  AccelConv2dAttributes current_conv{sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 0, 0, 0, 0, 0, ACCEL_OP_RELU};
  Tensor conv_old(F32, {1, 3, 3, 3}), conv_current(F32, {1, 3, 3, 3});
  run_with(ACCEL_OP_CONV2D, {&x, &filter}, conv_old, &old_conv);
  run_with(ACCEL_OP_CONV2D, {&x, &filter}, conv_current, &current_conv);
  expect_same_bits(conv_old, conv_current);
}

TEST(Epilogue, BadEpiloguesAreInvalidArgument) {
  Tensor a = random_tensor(F32, {4, 6}), b = random_tensor(F32, {6, 3}), y(F32, {4, 3});
  Tensor wrong_bias = random_tensor(F32, {4}), bias = random_tensor(F32, {3}), mask = random_tensor(F32, {3, 4});
  auto message_of = [&](std::vector<const Tensor*> inputs, int32_t flags, AccelOp activation) {
    AccelMatmulAttributes attributes{sizeof(AccelMatmulAttributes), 0, 0, flags, activation};
    std::string message;
    EXPECT_EQ(error_code_of([&] { run_with(ACCEL_OP_MATMUL, inputs, y, &attributes); }, &message),
              ACCEL_STATUS_INVALID_ARGUMENT);
    return message;
  };
  auto contains = [](const std::string& message, const std::string& part) {
    EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected: " << part;
  };
  contains(message_of({&a, &b, &wrong_bias}, ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU),
           "epilogue bias must be [3] (the output's last dimension), got float32[4]");
  contains(message_of({&a, &b}, ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_EXP),
           "epilogue activation must be RELU, SIGMOID or TANH, got EXP");
  contains(message_of({&a, &b, &mask}, ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_RELU),
           "epilogue mask must have the output's shape float32[4,3], got float32[3,4]");
  contains(message_of({&a, &b}, 8, ACCEL_OP_RELU), "unknown epilogue flags 8");
  contains(message_of({&a, &b}, ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU), "expected 3 inputs and 1 outputs");

  Tensor x = random_tensor(F32, {1, 5, 5, 2}), dy = random_tensor(F32, {1, 3, 3, 3}), dfilter(F32, {3, 3, 2, 3});
  Tensor filter_bias = random_tensor(F32, {3});
  AccelConv2dAttributes conv{sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 0, 0, 0, 0, ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU};
  std::string message;
  EXPECT_EQ(error_code_of([&] { run_with(ACCEL_OP_CONV2D_BACKWARD_FILTER, {&x, &dy, &filter_bias}, dfilter, &conv); },
                          &message),
            ACCEL_STATUS_INVALID_ARGUMENT);
  contains(message, "only MATMUL, CONV2D and CONV2D_BACKWARD_INPUT take an epilogue");
}

TEST(Epilogue, SupportsEpilogueNamesWhatRuns) {
  using host_kernels::supports_epilogue;
  const int32_t all = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK;
  for (AccelOp op : {ACCEL_OP_MATMUL, ACCEL_OP_CONV2D, ACCEL_OP_CONV2D_BACKWARD_INPUT}) {
    for (AccelOp activation : {ACCEL_OP_RELU, ACCEL_OP_SIGMOID, ACCEL_OP_TANH}) {
      EXPECT_TRUE(supports_epilogue(op, F32, all, activation));
      EXPECT_TRUE(supports_epilogue(op, ACCEL_DTYPE_BF16, all, activation));
    }
    EXPECT_TRUE(supports_epilogue(op, F32, 0, ACCEL_OP_EXP));  // no epilogue: the plain op
    EXPECT_FALSE(supports_epilogue(op, F32, ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_EXP));
    EXPECT_FALSE(supports_epilogue(op, F32, 8, ACCEL_OP_RELU));
    EXPECT_FALSE(supports_epilogue(op, ACCEL_DTYPE_I32, ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU));
  }
  EXPECT_FALSE(supports_epilogue(ACCEL_OP_CONV2D_BACKWARD_FILTER, F32, ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU));
  EXPECT_FALSE(supports_epilogue(ACCEL_OP_ADD, F32, ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU));
}

}  // namespace
}  // namespace accel::test
