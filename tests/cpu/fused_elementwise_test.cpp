// FUSED_ELEMENTWISE against the same program run op by op with the plain
// kernels (BROADCAST_TO for each load, FILL for each constant, the op itself,
// REDUCE_* for reduced outputs): chains, broadcasting, constants, SELECT
// with comparisons, CAST, BF16, integers, several outputs, reductions with
// and without keep_dims, an output written over its input, and programs that
// must be rejected with a message saying what is wrong.
#include "test_tensor.hpp"

#include <memory>

namespace accel::test {
namespace {

constexpr AccelOp kNoReduction = static_cast<AccelOp>(0);

// Builds a program instruction by instruction; each call returns the value's index.
class Program {
 public:
  explicit Program(Shape shape) : shape_(std::move(shape)) {}

  int load(int input, AccelDType dtype) { return add({ACCEL_FUSED_LOAD, ACCEL_OP_MATMUL, dtype, {input, 0, 0}, 0.0}); }
  int constant(double value, AccelDType dtype) {
    return add({ACCEL_FUSED_CONSTANT, ACCEL_OP_MATMUL, dtype, {0, 0, 0}, value});
  }
  int op(AccelOp op, AccelDType dtype, std::initializer_list<int> operands) {
    AccelFusedInstruction instruction{ACCEL_FUSED_OP, op, dtype, {0, 0, 0}, 0.0};
    int k = 0;
    for (int operand : operands) instruction.operands[k++] = operand;
    return add(instruction);
  }
  void output(int value, AccelOp reduce_op = kNoReduction, std::vector<int32_t> axes = {}, bool keep_dims = false) {
    AccelFusedOutput output{value, reduce_op, static_cast<int32_t>(axes.size()), {}, keep_dims ? 1 : 0};
    for (size_t k = 0; k < axes.size(); ++k) output.axes[k] = axes[k];
    outputs_.push_back(output);
  }

  const AccelFusedElementwiseAttributes& attributes() {
    attributes_ = {};
    attributes_.struct_size = sizeof(attributes_);
    attributes_.rank = static_cast<int32_t>(shape_.size());
    for (size_t axis = 0; axis < shape_.size(); ++axis) attributes_.shape[axis] = shape_[axis];
    attributes_.num_instructions = static_cast<int32_t>(instructions_.size());
    attributes_.instructions = instructions_.data();
    attributes_.num_outputs = static_cast<int32_t>(outputs_.size());
    attributes_.outputs = outputs_.data();
    return attributes_;
  }

  const Shape& shape() const { return shape_; }
  std::vector<AccelFusedInstruction>& instructions() { return instructions_; }
  std::vector<AccelFusedOutput>& outputs() { return outputs_; }

  // The shape of output j.
  Shape output_shape(size_t j) const {
    const AccelFusedOutput& output = outputs_[j];
    if (output.reduce_op == kNoReduction) return shape_;
    Shape shape;
    for (size_t axis = 0; axis < shape_.size(); ++axis) {
      const bool reduced = std::find(output.axes, output.axes + output.num_axes, static_cast<int32_t>(axis)) !=
                           output.axes + output.num_axes;
      if (!reduced) shape.push_back(shape_[axis]);
      else if (output.keep_dims) shape.push_back(1);
    }
    return shape;
  }
  AccelDType output_dtype(size_t j) const { return instructions_[outputs_[j].value].dtype; }
  size_t output_count() const { return outputs_.size(); }

 private:
  int add(const AccelFusedInstruction& instruction) {
    instructions_.push_back(instruction);
    return static_cast<int>(instructions_.size()) - 1;
  }

  Shape shape_;
  std::vector<AccelFusedInstruction> instructions_;
  std::vector<AccelFusedOutput> outputs_;
  AccelFusedElementwiseAttributes attributes_{};
};

// Tensor owns its bytes through a view, so it is moved, never copied.
Tensor copy_of(const Tensor& tensor) {
  Tensor copy(tensor.dtype(), tensor.shape());
  std::memcpy(copy.data<unsigned char>(), tensor.data<unsigned char>(),
              static_cast<size_t>(tensor.count()) * sdk::dtype_size(tensor.dtype()));
  return copy;
}

std::vector<Tensor> make_outputs(const Program& program) {
  std::vector<Tensor> outputs;
  for (size_t j = 0; j < program.output_count(); ++j) outputs.emplace_back(program.output_dtype(j), program.output_shape(j));
  return outputs;
}

void run_fused(Program& program, const std::vector<const Tensor*>& inputs, std::vector<Tensor>& outputs) {
  std::vector<HostTensor> in, out;
  for (const Tensor* tensor : inputs) in.push_back(tensor->view());
  for (Tensor& tensor : outputs) out.push_back(tensor.view());
  host_kernels::execute(ACCEL_OP_FUSED_ELEMENTWISE, in, out, &program.attributes());
}

// The program run op by op with the plain kernels, every value materialized
// in the iteration shape.
std::vector<Tensor> run_unfused(Program& program, const std::vector<const Tensor*>& inputs) {
  std::vector<std::unique_ptr<Tensor>> values;
  for (const AccelFusedInstruction& instruction : program.instructions()) {
    auto value = std::make_unique<Tensor>(instruction.dtype, program.shape());
    switch (instruction.kind) {
      case ACCEL_FUSED_LOAD: run(ACCEL_OP_BROADCAST_TO, {inputs[instruction.operands[0]]}, {value.get()}); break;
      case ACCEL_FUSED_CONSTANT: {
        const AccelFillAttributes fill{sizeof(AccelFillAttributes), instruction.value};
        run(ACCEL_OP_FILL, {}, {value.get()}, &fill);
        break;
      }
      default: {
        const bool binary = instruction.op >= ACCEL_OP_ADD && instruction.op <= ACCEL_OP_TANH_BACKWARD;
        const int count = instruction.op == ACCEL_OP_SELECT ? 3 : binary ? 2 : 1;
        std::vector<HostTensor> operands;
        for (int k = 0; k < count; ++k) operands.push_back(values[instruction.operands[k]]->view());
        HostTensor result = value->view();
        host_kernels::execute(instruction.op, operands, {&result, 1}, nullptr);
        break;
      }
    }
    values.push_back(std::move(value));
  }
  std::vector<Tensor> outputs = make_outputs(program);
  for (size_t j = 0; j < program.output_count(); ++j) {
    const AccelFusedOutput& output = program.outputs()[j];
    const Tensor& value = *values[output.value];
    if (output.reduce_op == kNoReduction) {
      run(ACCEL_OP_COPY, {&value}, {&outputs[j]});
    } else {
      AccelReduceAttributes reduce{sizeof(AccelReduceAttributes), output.num_axes, {}, output.keep_dims};
      for (int32_t k = 0; k < output.num_axes; ++k) reduce.axes[k] = output.axes[k];
      run(output.reduce_op, {&value}, {&outputs[j]}, &reduce);
    }
  }
  return outputs;
}

void expect_bitwise_equal(const Tensor& actual, const Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  ASSERT_EQ(actual.dtype(), expected.dtype()) << what;
  const size_t bytes = static_cast<size_t>(actual.count()) * sdk::dtype_size(actual.dtype());
  if (std::memcmp(actual.data<unsigned char>(), expected.data<unsigned char>(), bytes) == 0) return;
  for (int64_t i = 0; i < actual.count(); ++i) {
    const double a = actual.value(i), e = expected.value(i);
    if (!(a == e || (std::isnan(a) && std::isnan(e)))) {
      ADD_FAILURE() << what << ": element " << i << " is " << a << ", unfused gives " << e;
      return;
    }
  }
}

// Runs the program fused and unfused; outputs must match bit for bit, or
// within `tolerance` relative to the sum of magnitudes when it is > 0.
void check_program(Program& program, const std::vector<const Tensor*>& inputs, double tolerance = 0.0) {
  std::vector<Tensor> fused = make_outputs(program);
  run_fused(program, inputs, fused);
  std::vector<Tensor> unfused = run_unfused(program, inputs);
  for (size_t j = 0; j < fused.size(); ++j) {
    const std::string what = "output " + std::to_string(j);
    if (tolerance == 0.0) {
      expect_bitwise_equal(fused[j], unfused[j], what);
    } else {
      std::vector<double> expected;
      for (int64_t i = 0; i < unfused[j].count(); ++i) expected.push_back(unfused[j].value(i));
      SCOPED_TRACE(what);
      expect_close(fused[j], expected, tolerance);
    }
  }
}

const AccelDType F32 = ACCEL_DTYPE_F32;
const AccelDType BOOL = ACCEL_DTYPE_BOOL;

TEST(FusedElementwise, ChainEqualsTheOpsOneByOne) {
  // y = sigmoid(x * 2 + bias); dx = relu_backward(dy * y, x) over shapes from
  // scalar and empty to large enough for oneTBB.
  for (const Shape& shape : std::vector<Shape>{{}, {1}, {0, 3}, {7}, {4, 37}, {300, 257}, {3, 70000}}) {
    SCOPED_TRACE(::testing::Message() << "rank " << shape.size() << " count " << Tensor(F32, shape).count());
    Tensor x = random_tensor(F32, shape, -3, 3, 1), dy = random_tensor(F32, shape, -1, 1, 2);
    Shape bias_shape = shape.empty() ? Shape{} : Shape{shape.back()};
    Tensor bias = random_tensor(F32, bias_shape, -1, 1, 3);
    Program program(shape);
    const int vx = program.load(0, F32), vdy = program.load(1, F32), vb = program.load(2, F32);
    const int two = program.constant(2.0, F32);
    const int z = program.op(ACCEL_OP_ADD, F32, {program.op(ACCEL_OP_MUL, F32, {vx, two}), vb});
    const int y = program.op(ACCEL_OP_SIGMOID, F32, {z});
    const int dx = program.op(ACCEL_OP_RELU_BACKWARD, F32, {program.op(ACCEL_OP_MUL, F32, {vdy, y}), vx});
    program.output(y);
    program.output(dx);
    check_program(program, {&x, &dy, &bias});
  }
}

TEST(FusedElementwise, EveryUnaryAndBinaryOpOnFloatsIsBitExact) {
  const Shape shape{5, 131};
  Tensor a = random_tensor(F32, shape, -3, 3, 4), b = random_tensor(F32, {131}, 0.25, 3, 5);
  std::vector<AccelOp> unary_ops;
  for (int op = ACCEL_OP_NEG; op <= ACCEL_OP_RECIPROCAL; ++op) unary_ops.push_back(static_cast<AccelOp>(op));
  unary_ops.push_back(ACCEL_OP_ERF);  // appended in 1.3, past FUSED_ELEMENTWISE
  for (AccelOp op : unary_ops) {
    SCOPED_TRACE(host_kernels::op_name(op));
    Program program(shape);
    program.output(program.op(op, F32, {program.load(0, F32)}));
    check_program(program, {&a});
  }
  for (int op = ACCEL_OP_ADD; op <= ACCEL_OP_TANH_BACKWARD; ++op) {
    SCOPED_TRACE(host_kernels::op_name(static_cast<AccelOp>(op)));
    const bool comparison = op >= ACCEL_OP_EQUAL && op <= ACCEL_OP_GREATER_EQUAL;
    Program program(shape);
    program.output(program.op(static_cast<AccelOp>(op), comparison ? BOOL : F32, {program.load(0, F32), program.load(1, F32)}));
    check_program(program, {&a, &b});
  }
}

TEST(FusedElementwise, IntegerAndBoolOpsMatchThePlainOps) {
  for (AccelDType dtype : {ACCEL_DTYPE_I32, ACCEL_DTYPE_I64}) {
    SCOPED_TRACE(sdk::dtype_name(dtype));
    Tensor a = random_tensor(dtype, {6, 9}, -50, 50, 6), b = random_tensor(dtype, {9}, 1, 9, 7);
    Program program({6, 9});
    const int va = program.load(0, dtype), vb = program.load(1, dtype);
    const int quotient = program.op(ACCEL_OP_DIV, dtype, {va, vb});
    const int square = program.op(ACCEL_OP_SQUARE, dtype, {program.op(ACCEL_OP_NEG, dtype, {quotient})});
    const int big = program.op(ACCEL_OP_MAXIMUM, dtype, {square, program.op(ACCEL_OP_ABS, dtype, {va})});
    const int less = program.op(ACCEL_OP_LESS, BOOL, {va, vb});
    const int not_less = program.op(ACCEL_OP_LOGICAL_NOT, BOOL, {less});
    const int same = program.op(ACCEL_OP_EQUAL, BOOL, {less, not_less});
    program.output(big);
    program.output(not_less);
    program.output(same);
    program.output(program.op(ACCEL_OP_SIGN, dtype, {program.op(ACCEL_OP_SUB, dtype, {va, vb})}), ACCEL_OP_REDUCE_SUM, {1});
    program.output(big, ACCEL_OP_REDUCE_MEAN, {0}, true);
    check_program(program, {&a, &b});
  }
}

TEST(FusedElementwise, BroadcastsInputsOfEveryRank) {
  Tensor a = random_tensor(F32, {2, 1, 5}, -2, 2, 8), b = random_tensor(F32, {1, 3, 1}, -2, 2, 9);
  Tensor scalar = tensor_of(F32, {}, {0.75}), column = random_tensor(F32, {4, 1, 1, 1}, -2, 2, 10);
  Program program({4, 2, 3, 5});
  const int sum = program.op(ACCEL_OP_ADD, F32, {program.load(0, F32), program.load(1, F32)});
  const int scaled = program.op(ACCEL_OP_MUL, F32, {sum, program.load(2, F32)});
  program.output(program.op(ACCEL_OP_SUB, F32, {scaled, program.load(3, F32)}));
  program.output(program.op(ACCEL_OP_EXP, F32, {program.load(2, F32)}));  // a value repeated everywhere
  check_program(program, {&a, &b, &scalar, &column});
}

TEST(FusedElementwise, ConstantsSelectAndComparisons) {
  // Leaky ReLU and a clipped value, as a graph would fuse them.
  Tensor x = random_tensor(F32, {17, 33}, -3, 3, 11), limit = random_tensor(F32, {33}, 0, 2, 12);
  Program program({17, 33});
  const int vx = program.load(0, F32);
  const int positive = program.op(ACCEL_OP_GREATER, BOOL, {vx, program.constant(0.0, F32)});
  const int leaky = program.op(ACCEL_OP_SELECT, F32, {positive, vx, program.op(ACCEL_OP_MUL, F32, {vx, program.constant(0.1, F32)})});
  const int over = program.op(ACCEL_OP_GREATER_EQUAL, BOOL, {vx, program.load(1, F32)});
  program.output(leaky);
  program.output(program.op(ACCEL_OP_SELECT, F32, {over, program.load(1, F32), vx}));
  program.output(over);
  program.output(program.op(ACCEL_OP_SELECT, BOOL, {program.constant(1, BOOL), over, positive}));
  check_program(program, {&x, &limit});
}

TEST(FusedElementwise, CastsConvertAsCastDoes) {
  Tensor x = random_tensor(F32, {3, 41}, -300, 300, 13);
  x.set(0, NAN);
  x.set(1, 1e12);
  Tensor flags = random_tensor(BOOL, {41}, 0, 1, 14);
  Program program({3, 41});
  const int vx = program.load(0, F32);
  const int as_int = program.op(ACCEL_OP_CAST, ACCEL_DTYPE_I32, {vx});
  program.output(program.op(ACCEL_OP_CAST, F32, {as_int}));
  program.output(program.op(ACCEL_OP_CAST, ACCEL_DTYPE_U8, {vx}));
  program.output(program.op(ACCEL_OP_CAST, ACCEL_DTYPE_BF16, {vx}));
  program.output(program.op(ACCEL_OP_CAST, ACCEL_DTYPE_F16, {vx}));
  program.output(program.op(ACCEL_OP_CAST, BOOL, {vx}));
  program.output(program.op(ACCEL_OP_CAST, ACCEL_DTYPE_I64, {program.load(1, BOOL)}));
  check_program(program, {&x, &flags});
}

TEST(FusedElementwise, HalfPrecisionRoundsAfterEveryOpAsThePlainOpsDo) {
  for (AccelDType dtype : {ACCEL_DTYPE_BF16, ACCEL_DTYPE_F16}) {
    SCOPED_TRACE(sdk::dtype_name(dtype));
    Tensor x = random_tensor(dtype, {9, 70}, -2, 2, 15), y = random_tensor(dtype, {70}, -2, 2, 16);
    Program program({9, 70});
    const int vx = program.load(0, dtype), vy = program.load(1, dtype);
    const int t = program.op(ACCEL_OP_TANH, dtype, {program.op(ACCEL_OP_MUL, dtype, {vx, program.constant(1.7, dtype)})});
    const int u = program.op(ACCEL_OP_ADD, dtype, {t, program.op(ACCEL_OP_EXP, dtype, {vy})});
    program.output(u);
    program.output(u, ACCEL_OP_REDUCE_SUM, {1});
    program.output(program.op(ACCEL_OP_LESS, BOOL, {t, vy}));
    check_program(program, {&x, &y});
  }
}

struct ReductionCase {
  Shape shape;
  std::vector<int32_t> axes;
  bool exact;  // one task reduces each output element (see fused_elementwise.cpp)
};

TEST(FusedElementwise, ReducedOutputsEqualThePlainReductions) {
  const std::vector<ReductionCase> cases = {
      {{5, 7}, {1}, true},           // rows
      {{5, 7}, {0}, true},           // columns
      {{5, 7}, {0, 1}, true},        // everything
      {{3, 4, 9}, {1}, true},        // [kept, reduced, kept]
      {{3, 4, 9}, {0, 2}, true},     // [reduced, kept, reduced]
      {{6, 1, 33}, {1}, true},       // only a size-1 axis
      {{0, 3}, {0}, true},           // empty: identities, mean NaN
      {{2, 0, 3}, {2}, true},        // empty output
      {{}, {}, true},                // a scalar reduced over nothing
      {{2000, 600}, {1}, true},      // many rows: parallel and still exact
      {{96, 5000}, {1}, true},
      {{48, 3, 2000}, {1, 2}, true},
      {{4096, 512}, {0}, false},     // a bias gradient: partial sums in a fixed tree
      {{1 << 20}, {0}, false},       // one long row
  };
  for (const ReductionCase& c : cases) {
    for (bool keep_dims : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "shape rank " << c.shape.size() << " count " << Tensor(F32, c.shape).count()
                                        << " axes" << ::testing::PrintToString(c.axes)
                                        << " keep_dims " << keep_dims);
      Tensor x = random_tensor(F32, c.shape, -2, 2, 17), dy = random_tensor(F32, c.shape, -1, 1, 18);
      Program program(c.shape);
      const int grad = program.op(ACCEL_OP_RELU_BACKWARD, F32, {program.load(1, F32), program.load(0, F32)});
      program.output(grad, ACCEL_OP_REDUCE_SUM, c.axes, keep_dims);
      program.output(grad, ACCEL_OP_REDUCE_MEAN, c.axes, keep_dims);
      program.output(program.load(0, F32), ACCEL_OP_REDUCE_MAX, c.axes, keep_dims);
      program.output(grad, ACCEL_OP_REDUCE_MIN, c.axes, keep_dims);
      // Partial sums differ from one chain by rounding: n * 2^-24 * sum |x| bounds it.
      check_program(program, {&x, &dy}, c.exact ? 0.0 : 1e-4);
    }
  }
}

TEST(FusedElementwise, ReductionsAreTheSameAtAnyThreadCount) {
  Tensor x = random_tensor(F32, {8192, 64}, -1, 1, 19);
  Program program({8192, 64});
  program.output(program.op(ACCEL_OP_SQUARE, F32, {program.load(0, F32)}), ACCEL_OP_REDUCE_SUM, {0});
  std::vector<Tensor> one_thread = make_outputs(program), default_threads = make_outputs(program);
  host_kernels::set_max_threads(1);
  run_fused(program, {&x}, one_thread);
  host_kernels::set_max_threads(0);
  run_fused(program, {&x}, default_threads);
  expect_bitwise_equal(one_thread[0], default_threads[0], "sum of squares");
}

TEST(FusedElementwise, AnOutputMayBeWrittenOverItsInput) {
  Tensor x = random_tensor(F32, {50, 1000}, -2, 2, 20);
  Tensor original = copy_of(x);
  Tensor v = random_tensor(F32, {50, 1000}, -2, 2, 21);
  // x <- relu(x) * v, while the sum of x (before the update) is also an output.
  Program program({50, 1000});
  const int vx = program.load(0, F32);
  program.output(program.op(ACCEL_OP_MUL, F32, {program.op(ACCEL_OP_RELU, F32, {vx}), program.load(1, F32)}));
  program.output(vx, ACCEL_OP_REDUCE_SUM, {1});
  program.output(vx);  // a copy of the input as it was
  std::vector<Tensor> outputs = make_outputs(program);
  std::vector<HostTensor> in{x.view(), v.view()};
  std::vector<HostTensor> out{x.view(), outputs[1].view(), outputs[2].view()};
  host_kernels::execute(ACCEL_OP_FUSED_ELEMENTWISE, in, out, &program.attributes());
  std::vector<Tensor> expected = run_unfused(program, {&original, &v});
  expect_bitwise_equal(x, expected[0], "in place");
  expect_bitwise_equal(outputs[1], expected[1], "sum of the input");
  expect_bitwise_equal(outputs[2], expected[2], "copy of the input");
}

TEST(FusedElementwise, AnInputWrittenInPlaceIsReadWhereItLies) {
  // No output stores or reduces the loaded input itself, so it is read in
  // place (no copy per block) and still every load of a block comes before
  // its in-place store; a per-channel broadcast input is gathered once.
  Tensor x = random_tensor(F32, {64, 7, 32}, -2, 2, 22);
  Tensor original = copy_of(x);
  Tensor v = random_tensor(F32, {64, 7, 32}, -2, 2, 23);
  Tensor scale = random_tensor(F32, {32}, -2, 2, 24);
  Program program({64, 7, 32});
  const int vx = program.load(0, F32);
  const int scaled = program.op(ACCEL_OP_MUL, F32, {vx, program.load(2, F32)});
  const int product = program.op(ACCEL_OP_MUL, F32, {program.op(ACCEL_OP_RELU, F32, {scaled}), program.load(1, F32)});
  program.output(program.op(ACCEL_OP_ADD, F32, {product, vx}));
  program.output(product, ACCEL_OP_REDUCE_SUM, {0, 1});
  std::vector<Tensor> outputs = make_outputs(program);
  std::vector<HostTensor> in{x.view(), v.view(), scale.view()};
  std::vector<HostTensor> out{x.view(), outputs[1].view()};
  host_kernels::execute(ACCEL_OP_FUSED_ELEMENTWISE, in, out, &program.attributes());
  std::vector<Tensor> expected = run_unfused(program, {&original, &v, &scale});
  expect_bitwise_equal(x, expected[0], "in place");
  std::vector<double> sums;
  for (int64_t i = 0; i < expected[1].count(); ++i) sums.push_back(expected[1].value(i));
  expect_close(outputs[1], sums, 1e-6);  // summed in another order than REDUCE_SUM's
}

TEST(FusedElementwise, ReportsItsFloatOperationsAndClaimsEveryDtype) {
  Program program({10, 3});
  const int vx = program.load(0, F32);
  const int y = program.op(ACCEL_OP_ADD, F32, {vx, program.constant(1, F32)});
  program.output(program.op(ACCEL_OP_SELECT, F32, {program.op(ACCEL_OP_GREATER, BOOL, {y, vx}), y, vx}), ACCEL_OP_REDUCE_SUM, {0});
  // ADD, GREATER and the sum: 3 per element.
  EXPECT_EQ(host_kernels::flops(ACCEL_OP_FUSED_ELEMENTWISE, {}, {}, &program.attributes()), 90.0);
  for (int dtype = 0; dtype < ACCEL_DTYPE_COUNT; ++dtype) {
    EXPECT_TRUE(host_kernels::supports(ACCEL_OP_FUSED_ELEMENTWISE, static_cast<AccelDType>(dtype)));
  }
}

struct OutputSpec {
  AccelDType dtype;
  Shape shape;
};

// Runs the program (into outputs of `specs`, else of the program's own
// shapes) and returns the error message, or "" when it ran.
std::string error_of(Program& program, const std::vector<const Tensor*>& inputs, const std::vector<OutputSpec>& specs = {}) {
  std::vector<Tensor> outputs;
  if (specs.empty()) outputs = make_outputs(program);
  for (const OutputSpec& spec : specs) outputs.emplace_back(spec.dtype, spec.shape);
  std::string message;
  const AccelStatusCode code = error_code_of([&] { run_fused(program, inputs, outputs); }, &message);
  if (code == ACCEL_STATUS_OK) return "";
  EXPECT_EQ(code, ACCEL_STATUS_INVALID_ARGUMENT) << message;
  EXPECT_NE(message.find("FUSED_ELEMENTWISE("), std::string::npos) << message;
  return message;
}

TEST(FusedElementwise, MalformedProgramsAreRejectedWithTheReason) {
  Tensor x = random_tensor(F32, {4, 5}), ints = random_tensor(ACCEL_DTYPE_I32, {4, 5});
  auto contains = [](const std::string& message, const std::string& part) {
    EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected: " << part;
  };
  {  // an operand that is not an earlier instruction
    Program program({4, 5});
    program.load(0, F32);
    program.output(program.op(ACCEL_OP_NEG, F32, {1}));
    contains(error_of(program, {&x}), "instruction 1: NEG operand 0 is value 1; an operand must be an earlier instruction");
  }
  {  // an input that does not exist
    Program program({4, 5});
    program.output(program.load(3, F32));
    contains(error_of(program, {&x}), "instruction 0: loads input 3, but the call has 1 inputs");
  }
  {  // an input loaded as another dtype
    Program program({4, 5});
    program.output(program.load(0, F32));
    contains(error_of(program, {&ints}, {{F32, {4, 5}}}), "loads input 0 int32[4,5] as float32");
  }
  {  // an input that does not broadcast
    Program program({4, 6});
    program.output(program.load(0, F32));
    contains(error_of(program, {&x}), "does not broadcast to the iteration shape [4,6]");
  }
  {  // an op that is not elementwise
    Program program({4, 5});
    const int vx = program.load(0, F32);
    program.output(program.op(ACCEL_OP_SOFTMAX, F32, {vx}));
    contains(error_of(program, {&x}), "op SOFTMAX cannot be fused");
  }
  {  // a comparison that claims a float result
    Program program({4, 5});
    const int vx = program.load(0, F32);
    program.output(program.op(ACCEL_OP_LESS, F32, {vx, vx}));
    contains(error_of(program, {&x}), "LESS yields bool, but the instruction says float32");
  }
  {  // an op the dtype does not have
    Program program({4, 5});
    program.output(program.op(ACCEL_OP_EXP, ACCEL_DTYPE_I32, {program.load(0, ACCEL_DTYPE_I32)}));
    contains(error_of(program, {&ints}), "EXP is not defined for int32");
  }
  {  // operands of two dtypes
    Program program({4, 5});
    program.output(program.op(ACCEL_OP_ADD, F32, {program.load(0, F32), program.load(1, ACCEL_DTYPE_I32)}));
    contains(error_of(program, {&x, &ints}), "ADD operands differ in dtype: float32 and int32");
  }
  {  // more instructions than the limit
    Program program({4, 5});
    int value = program.load(0, F32);
    for (int i = 0; i < ACCEL_FUSED_MAX_INSTRUCTIONS; ++i) value = program.op(ACCEL_OP_NEG, F32, {value});
    program.output(value);
    contains(error_of(program, {&x}), "a program has 1 to 64 instructions, got 65");
  }
  {  // an output of the wrong shape
    Program program({4, 5});
    program.output(program.load(0, F32), ACCEL_OP_REDUCE_SUM, {1}, true);
    contains(error_of(program, {&x}, {{F32, {4}}}), "output 0: is float32[4] but should be float32[4,1]");
  }
  {  // unsorted reduction axes
    Program program({4, 5});
    program.output(program.load(0, F32), ACCEL_OP_REDUCE_SUM, {1, 0});
    contains(error_of(program, {&x}, {{F32, {}}}), "reduction axes must be sorted, unique");
  }
  {  // a reduction of booleans
    Program program({4, 5});
    const int vx = program.load(0, F32);
    program.output(program.op(ACCEL_OP_LESS, BOOL, {vx, vx}), ACCEL_OP_REDUCE_MAX, {1});
    contains(error_of(program, {&x}), "REDUCE_MAX is not defined for bool");
  }
  {  // an output that overlaps an input without being it
    Tensor wide = random_tensor(F32, {4, 6});
    Program program({4, 5});
    program.output(program.load(0, F32));
    HostTensor source = wide.view();
    source.shape[1] = 5;
    HostTensor shifted = source;
    shifted.data = wide.data<float>() + 1;
    std::string message;
    EXPECT_EQ(error_code_of([&] {
                host_kernels::execute(ACCEL_OP_FUSED_ELEMENTWISE, {&source, 1}, {&shifted, 1}, &program.attributes());
              }, &message),
              ACCEL_STATUS_INVALID_ARGUMENT);
    contains(message, "output 0 float32[4,5] overlaps input 0 float32[4,5]");
  }
  {  // integer division by zero
    Tensor zero = tensor_of(ACCEL_DTYPE_I32, {}, {0});
    Program program({4, 5});
    program.output(program.op(ACCEL_OP_DIV, ACCEL_DTYPE_I32, {program.load(0, ACCEL_DTYPE_I32), program.load(1, ACCEL_DTYPE_I32)}));
    contains(error_of(program, {&ints, &zero}), "instruction 2: integer division by zero");
  }
  {  // the program and the call disagree on the output count
    Program program({4, 5});
    program.output(program.load(0, F32));
    contains(error_of(program, {&x}, {{F32, {4, 5}}, {F32, {4, 5}}}), "the program has 1 outputs but the call passes 2");
  }
}

}  // namespace
}  // namespace accel::test
