// The emulated TPU's cost of compiled programs, through its costing
// functions (no kernels run): a fusion is one kernel that moves only its
// external inputs and outputs, reductions inside it make no HBM pass of
// their own, an MXU op's epilogue overlaps the MXU and reads only its bias
// and mask, and tensors left in VMEM by recent kernels are read without HBM
// traffic (VmemResidency and its modes); each kernel's energy follows its
// counts.
#include <accel/plugin/plugin_sdk.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "batch_norm_fusion.hpp"
#include "fused_work.hpp"
#include "op_costing.hpp"
#include "timing/op_timing.hpp"
#include "timing/presets.hpp"
#include "vmem_residency.hpp"

namespace accel::tpu_sim {
namespace {

using host_kernels::HostTensor;
using tpu::OpTiming;

const tpu::TimingModel& tpu_v4() {
  static const tpu::TimingModel model(tpu::load_system({.preset_or_file = "tpu_v4"}));
  return model;
}

HostTensor tensor(std::initializer_list<std::int64_t> shape, AccelDType dtype = ACCEL_DTYPE_F32,
                  void* data = nullptr) {
  HostTensor out;
  out.dtype = dtype;
  out.rank = static_cast<int32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), out.shape);
  out.data = data;
  return out;
}

std::int64_t bytes_of(const HostTensor& t) {
  std::int64_t count = 1;
  for (int32_t axis = 0; axis < t.rank; ++axis) count *= t.shape[axis];
  return count * static_cast<std::int64_t>(sdk::dtype_size(t.dtype));
}

OpCost cost(AccelOp op, std::vector<HostTensor> inputs, std::vector<HostTensor> outputs,
            const void* attributes = nullptr, const ResidentInputs& resident = {}) {
  return cost_op(tpu_v4(), op, inputs, outputs, attributes, resident);
}

// A FUSED_ELEMENTWISE program built instruction by instruction.
class Program {
 public:
  int load(int input) { return add({ACCEL_FUSED_LOAD, ACCEL_OP_NEG, ACCEL_DTYPE_F32, {input, 0, 0}, 0}); }
  int constant(double value) { return add({ACCEL_FUSED_CONSTANT, ACCEL_OP_NEG, ACCEL_DTYPE_F32, {0, 0, 0}, value}); }
  int op(AccelOp op, int a, int b = 0, int c = 0) { return add({ACCEL_FUSED_OP, op, ACCEL_DTYPE_F32, {a, b, c}, 0}); }
  void store(int value) { outputs_.push_back({value, static_cast<AccelOp>(0), 0, {}, 0}); }
  void reduce(int value, AccelOp reduction, std::initializer_list<int32_t> axes) {
    AccelFusedOutput output{value, reduction, static_cast<int32_t>(axes.size()), {}, 0};
    std::copy(axes.begin(), axes.end(), output.axes);
    outputs_.push_back(output);
  }
  const AccelFusedElementwiseAttributes* over(std::initializer_list<std::int64_t> shape) {
    attributes_ = {};
    attributes_.struct_size = sizeof(attributes_);
    attributes_.rank = static_cast<int32_t>(shape.size());
    std::copy(shape.begin(), shape.end(), attributes_.shape);
    attributes_.num_instructions = static_cast<int32_t>(instructions_.size());
    attributes_.instructions = instructions_.data();
    attributes_.num_outputs = static_cast<int32_t>(outputs_.size());
    attributes_.outputs = outputs_.data();
    return &attributes_;
  }

 private:
  int add(AccelFusedInstruction instruction) {
    instructions_.push_back(instruction);
    return static_cast<int>(instructions_.size()) - 1;
  }
  std::vector<AccelFusedInstruction> instructions_;
  std::vector<AccelFusedOutput> outputs_;
  AccelFusedElementwiseAttributes attributes_{};
};

AccelMatmulAttributes matmul_epilogue(int32_t flags, AccelOp activation = ACCEL_OP_RELU) {
  AccelMatmulAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  attributes.epilogue_flags = flags;
  attributes.activation = activation;
  return attributes;
}

// ------------------------------------------------------------------ fusions

// y = relu(x + b) * 2 with b[1024] broadcast over x[1024, 1024].
TEST(FusedElementwise, MovesOnlyItsExternalInputsAndOutputsOnce) {
  const HostTensor x = tensor({1024, 1024}), b = tensor({1024}), two = tensor({1}), y = tensor({1024, 1024});
  Program program;
  const int sum = program.op(ACCEL_OP_ADD, program.load(0), program.load(1));
  program.store(program.op(ACCEL_OP_MUL, program.op(ACCEL_OP_RELU, sum), program.constant(2.0)));
  const OpCost fused = cost(ACCEL_OP_FUSED_ELEMENTWISE, {x, b}, {y}, program.over({1024, 1024}));

  // The broadcast bias is read at its own size, not at the iteration shape's.
  EXPECT_EQ(fused.timing.hbm_bytes, bytes_of(x) + bytes_of(b) + bytes_of(y));
  EXPECT_EQ(fused.timing.hbm.input, bytes_of(x) + bytes_of(b));
  EXPECT_EQ(fused.timing.hbm.output, bytes_of(y));

  // The same ops one by one: every intermediate is written and read back.
  const OpCost add = cost(ACCEL_OP_ADD, {x, b}, {y});
  const OpCost relu = cost(ACCEL_OP_RELU, {y}, {y});
  const OpCost mul = cost(ACCEL_OP_MUL, {y, two}, {y});
  const std::int64_t unfused_bytes = add.timing.hbm_bytes + relu.timing.hbm_bytes + mul.timing.hbm_bytes;
  EXPECT_LT(fused.timing.hbm_bytes, unfused_bytes);
  EXPECT_EQ(unfused_bytes - fused.timing.hbm_bytes, 4 * bytes_of(y) + bytes_of(two));
  // The vector unit does the same work; only the memory passes go.
  EXPECT_EQ(fused.timing.compute_cycles,
            add.timing.compute_cycles + relu.timing.compute_cycles + mul.timing.compute_cycles);
  EXPECT_LT(fused.timing.cycles, add.timing.cycles + relu.timing.cycles + mul.timing.cycles);
  EXPECT_EQ(fused.timing.bound, tpu::Bound::kMemory);
  EXPECT_DOUBLE_EQ(fused.flops, 3.0 * 1024 * 1024);
}

TEST(FusedElementwise, StrictlyFewerBytesThanItsOpsForAnyLength) {
  const HostTensor x = tensor({256, 512}), y = tensor({256, 512});
  for (int length = 2; length <= 8; ++length) {
    Program program;
    int value = program.load(0);
    std::int64_t unfused = 0;
    for (int step = 0; step < length; ++step) {
      const AccelOp op = step % 2 == 0 ? ACCEL_OP_SQUARE : ACCEL_OP_NEG;
      value = program.op(op, value);
      unfused += cost(op, {x}, {y}).timing.hbm_bytes;
    }
    program.store(value);
    const OpCost fused = cost(ACCEL_OP_FUSED_ELEMENTWISE, {x}, {y}, program.over({256, 512}));
    EXPECT_EQ(fused.timing.hbm_bytes, bytes_of(x) + bytes_of(y)) << length << " ops";
    EXPECT_LT(fused.timing.hbm_bytes, unfused) << length << " ops";
    EXPECT_EQ(fused.fusion->vector_instructions_per_element, length);
  }
}

// ERF (1.3) is timed as TANH is: a short polynomial on the vector unit.
TEST(FusedElementwise, ATranscendentalCostsWhatItCostsAlone) {
  const HostTensor x = tensor({512, 1024}), y = tensor({512, 1024});
  for (AccelOp op : {ACCEL_OP_TANH, ACCEL_OP_ERF}) {
    SCOPED_TRACE(op);
    Program program;
    program.store(program.op(op, program.load(0)));
    const OpCost fused = cost(ACCEL_OP_FUSED_ELEMENTWISE, {x}, {y}, program.over({512, 1024}));
    const OpCost alone = cost(op, {x}, {y});
    EXPECT_EQ(fused.fusion->vector_instructions_per_element, 4);
    EXPECT_EQ(fused.timing.compute_cycles, alone.timing.compute_cycles);
    EXPECT_EQ(fused.timing.hbm_bytes, alone.timing.hbm_bytes);
    EXPECT_EQ(fused.timing.cycles, alone.timing.cycles);
    EXPECT_EQ(alone.timing.compute_cycles, cost(ACCEL_OP_TANH, {x}, {y}).timing.compute_cycles);
  }
}

// sum(x * x, axis 1) and x * x itself, from one read of x.
TEST(FusedElementwise, ReductionOutputsMakeNoHbmPassOfTheirOwn) {
  const HostTensor x = tensor({2048, 1024}), square = tensor({2048, 1024}), sums = tensor({2048});
  Program program;
  const int squared = program.op(ACCEL_OP_MUL, program.load(0), program.load(0));
  program.store(squared);
  program.reduce(squared, ACCEL_OP_REDUCE_SUM, {1});
  const OpCost fused = cost(ACCEL_OP_FUSED_ELEMENTWISE, {x}, {square, sums}, program.over({2048, 1024}));

  EXPECT_EQ(fused.timing.hbm.input, bytes_of(x));  // loaded twice, read once
  EXPECT_EQ(fused.timing.hbm.output, bytes_of(square) + bytes_of(sums));
  const OpCost mul = cost(ACCEL_OP_MUL, {x, x}, {square});
  AccelReduceAttributes reduce_attributes{};
  reduce_attributes.struct_size = sizeof(reduce_attributes);
  reduce_attributes.num_axes = 1;
  reduce_attributes.axes[0] = 1;
  const OpCost reduce = cost(ACCEL_OP_REDUCE_SUM, {square}, {sums}, &reduce_attributes);
  // The reduction's vector cycles are the REDUCE_SUM op's; its HBM read of the square is gone.
  EXPECT_EQ(fused.timing.compute_cycles, mul.timing.compute_cycles + reduce.timing.compute_cycles);
  EXPECT_LT(fused.timing.hbm_bytes, mul.timing.hbm_bytes + reduce.timing.hbm_bytes);
  EXPECT_EQ(mul.timing.hbm_bytes + reduce.timing.hbm_bytes - fused.timing.hbm_bytes,
            bytes_of(x) + bytes_of(square));
  EXPECT_DOUBLE_EQ(fused.flops, 2.0 * 2048 * 1024);
}

TEST(FusedElementwise, DetailsNameTheProgram) {
  const HostTensor x = tensor({64, 128}), y = tensor({64, 128}), total = tensor({});
  Program program;
  const int value = program.op(ACCEL_OP_EXP, program.op(ACCEL_OP_NEG, program.load(0)));
  program.store(value);
  program.reduce(value, ACCEL_OP_REDUCE_MAX, {0, 1});
  const OpCost fused = cost(ACCEL_OP_FUSED_ELEMENTWISE, {x}, {y, total}, program.over({64, 128}));
  const std::string json = detail_json(fused);
  EXPECT_NE(json.find(R"("kind":"fused_elementwise")"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("instructions":3)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("vector_instructions_per_element":5)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("ops":["NEG","EXP"])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("reductions":["REDUCE_MAX"])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("hbm_bytes":{"input":32768,)"), std::string::npos) << json;
}

TEST(FusedElementwise, AMalformedProgramIsAnInvalidArgument) {
  const HostTensor x = tensor({8}), y = tensor({8});
  auto refused = [&](Program& program, const std::string& expected) {
    try {
      cost(ACCEL_OP_FUSED_ELEMENTWISE, {x}, {y}, program.over({8}));
      ADD_FAILURE() << "accepted; expected " << expected;
    } catch (const sdk::PluginError& error) {
      EXPECT_EQ(error.code(), ACCEL_STATUS_INVALID_ARGUMENT);
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  };
  Program missing_input;
  missing_input.store(missing_input.load(1));
  refused(missing_input, "loads input 1 of 1");
  Program later_value;
  later_value.store(later_value.op(ACCEL_OP_ADD, 0, 1));
  refused(later_value, "not an earlier one");
  Program not_elementwise;
  not_elementwise.store(not_elementwise.op(ACCEL_OP_MATMUL, not_elementwise.load(0)));
  refused(not_elementwise, "is MATMUL");
  Program bad_reduction;
  bad_reduction.reduce(bad_reduction.load(0), ACCEL_OP_ARGMAX, {0});
  refused(bad_reduction, "reduces with ARGMAX");
  EXPECT_THROW(cost(ACCEL_OP_FUSED_ELEMENTWISE, {x}, {y}, nullptr), sdk::PluginError);
}

// ---------------------------------------------------------------- epilogues

TEST(Epilogue, ReluWithBiasReadsOnlyTheBiasMore) {
  const HostTensor a = tensor({1024, 1024}), w = tensor({1024, 1024}), bias = tensor({1024}), y = tensor({1024, 1024});
  const OpCost plain = cost(ACCEL_OP_MATMUL, {a, w}, {y});
  const AccelMatmulAttributes relu_bias = matmul_epilogue(ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION);
  const OpCost fused = cost(ACCEL_OP_MATMUL, {a, w, bias}, {y}, &relu_bias);

  EXPECT_EQ(fused.timing.hbm_bytes, plain.timing.hbm_bytes + bytes_of(bias));
  EXPECT_EQ(fused.timing.hbm.epilogue, bytes_of(bias));
  // The MXU's cycles are untouched; the epilogue's vector work hides under them.
  EXPECT_EQ(fused.timing.mxu_cycles, plain.timing.compute_cycles);
  EXPECT_EQ(fused.timing.epilogue_cycles, 1024 * 1024 / (8 * 128) * 2);
  EXPECT_EQ(fused.timing.compute_cycles, std::max(fused.timing.mxu_cycles, fused.timing.epilogue_cycles));
  EXPECT_EQ(fused.timing.useful_macs, plain.timing.useful_macs);

  // Unfused, the pre-activation result makes a trip to HBM and back.
  const OpCost add = cost(ACCEL_OP_ADD, {y, bias}, {y});
  const OpCost relu = cost(ACCEL_OP_RELU, {y}, {y});
  EXPECT_LT(fused.timing.hbm_bytes, plain.timing.hbm_bytes + add.timing.hbm_bytes + relu.timing.hbm_bytes);
  EXPECT_LT(fused.timing.cycles, plain.timing.cycles + add.timing.cycles + relu.timing.cycles);

  const std::string json = detail_json(fused);
  EXPECT_NE(json.find(R"("epilogue":{"steps":["bias_add","relu"])"), std::string::npos) << json;
  EXPECT_EQ(detail_json(plain).find("epilogue"), std::string::npos);
}

TEST(Epilogue, VectorWorkLongerThanTheMxuSetsTheComputeTime) {
  // K = 128: one pass of the array per fold, while bias + sigmoid + mask is
  // 6 vector instructions per output element.
  const HostTensor a = tensor({65536, 128}), w = tensor({128, 512}), bias = tensor({512}),
                   mask = tensor({65536, 512}), y = tensor({65536, 512});
  const AccelMatmulAttributes attributes =
      matmul_epilogue(ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_SIGMOID);
  const OpCost fused = cost(ACCEL_OP_MATMUL, {a, w, bias, mask}, {y}, &attributes);
  const OpCost plain = cost(ACCEL_OP_MATMUL, {a, w}, {y});
  EXPECT_EQ(fused.timing.epilogue_cycles, 65536 * 512 / (8 * 128) * 6);
  EXPECT_GT(fused.timing.epilogue_cycles, fused.timing.mxu_cycles);
  EXPECT_EQ(fused.timing.compute_cycles, fused.timing.epilogue_cycles);
  EXPECT_EQ(fused.timing.hbm_bytes, plain.timing.hbm_bytes + bytes_of(bias) + bytes_of(mask));
  EXPECT_GE(fused.timing.cycles, fused.timing.compute_cycles);
}

TEST(Epilogue, ConvolutionsReadTheirBiasAndMaskOnly) {
  AccelConv2dAttributes conv{};
  conv.struct_size = sizeof(conv);
  conv.stride_h = conv.stride_w = 1;
  conv.dilation_h = conv.dilation_w = 1;
  conv.pad_top = conv.pad_bottom = conv.pad_left = conv.pad_right = 1;
  const HostTensor x = tensor({8, 32, 32, 64}), filter = tensor({3, 3, 64, 128}), y = tensor({8, 32, 32, 128});
  const OpCost plain = cost(ACCEL_OP_CONV2D, {x, filter}, {y}, &conv);
  AccelConv2dAttributes with_relu = conv;
  with_relu.epilogue_flags = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION;
  with_relu.activation = ACCEL_OP_RELU;
  const HostTensor bias = tensor({128});
  const OpCost fused = cost(ACCEL_OP_CONV2D, {x, filter, bias}, {y}, &with_relu);
  EXPECT_EQ(fused.timing.hbm_bytes, plain.timing.hbm_bytes + bytes_of(bias));
  EXPECT_EQ(fused.timing.mxu_cycles, plain.timing.compute_cycles);

  // The gradient of a ReLU layer's input: dx = conv_backward_input(dy) * (mask > 0).
  const HostTensor dy = tensor({8, 32, 32, 128}), dx = tensor({8, 32, 32, 64}), mask = tensor({8, 32, 32, 64});
  const OpCost plain_dx = cost(ACCEL_OP_CONV2D_BACKWARD_INPUT, {dy, filter}, {dx}, &conv);
  AccelConv2dAttributes masked = conv;
  masked.epilogue_flags = ACCEL_EPILOGUE_RELU_MASK;
  const OpCost fused_dx = cost(ACCEL_OP_CONV2D_BACKWARD_INPUT, {dy, filter, mask}, {dx}, &masked);
  EXPECT_EQ(fused_dx.timing.hbm_bytes, plain_dx.timing.hbm_bytes + bytes_of(mask));
  const OpCost relu_backward = cost(ACCEL_OP_RELU_BACKWARD, {dx, mask}, {dx});
  EXPECT_LT(fused_dx.timing.hbm_bytes, plain_dx.timing.hbm_bytes + relu_backward.timing.hbm_bytes);
}

TEST(Epilogue, AStructFromBefore12HasNone) {
  AccelMatmulAttributes old_struct = matmul_epilogue(ACCEL_EPILOGUE_BIAS);
  old_struct.struct_size = offsetof(AccelMatmulAttributes, epilogue_flags);
  const HostTensor a = tensor({128, 128}), y = tensor({128, 128});
  const OpCost result = cost(ACCEL_OP_MATMUL, {a, a}, {y}, &old_struct);
  EXPECT_FALSE(result.epilogue.has_value());
  EXPECT_EQ(result.timing.hbm_bytes, cost(ACCEL_OP_MATMUL, {a, a}, {y}).timing.hbm_bytes);
}

TEST(Epilogue, UnknownFlagsOrMissingInputsAreInvalidArguments) {
  const HostTensor a = tensor({128, 128}), y = tensor({128, 128});
  const AccelMatmulAttributes bias = matmul_epilogue(ACCEL_EPILOGUE_BIAS);
  EXPECT_THROW(cost(ACCEL_OP_MATMUL, {a, a}, {y}, &bias), sdk::PluginError);  // no bias input
  const AccelMatmulAttributes exp = matmul_epilogue(ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_EXP);
  EXPECT_THROW(cost(ACCEL_OP_MATMUL, {a, a}, {y}, &exp), sdk::PluginError);
  EXPECT_FALSE(epilogue_is_known(ACCEL_OP_MATMUL, 8, ACCEL_OP_RELU));
  EXPECT_FALSE(epilogue_is_known(ACCEL_OP_CONV2D_BACKWARD_FILTER, ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU));
  EXPECT_TRUE(epilogue_is_known(ACCEL_OP_CONV2D_BACKWARD_INPUT, ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_COUNT));
  EXPECT_TRUE(epilogue_is_known(ACCEL_OP_MATMUL, 7, ACCEL_OP_TANH));
}

// ---------------------------------------------------------------- residency

TEST(VmemResidency, KeepsTheNewestWritesWithinItsCapacity) {
  std::vector<float> storage(4096);
  VmemResidency residency(3 * 1024 * 4);  // three tensors of 1024 floats
  const HostTensor first = tensor({1024}, ACCEL_DTYPE_F32, storage.data());
  const HostTensor second = tensor({1024}, ACCEL_DTYPE_F32, storage.data() + 1024);
  const HostTensor third = tensor({1024}, ACCEL_DTYPE_F32, storage.data() + 2048);
  const HostTensor fourth = tensor({1024}, ACCEL_DTYPE_F32, storage.data() + 3072);
  const std::vector<HostTensor> all{first, second, third, fourth};
  for (const HostTensor& written : all) residency.record_written({&written, 1}, false);
  EXPECT_EQ(residency.resident_bytes(), 3 * 1024 * 4);
  EXPECT_EQ(residency.resident_inputs(all, false, ResidencyMode::kAll), (ResidentInputs{false, true, true, true}));
  // A view inside a kept tensor (a reshape, a slice) is found too.
  const HostTensor half_of_third = tensor({2, 256}, ACCEL_DTYPE_F32, storage.data() + 2048 + 512);
  EXPECT_EQ(residency.resident_inputs({&half_of_third, 1}, false, ResidencyMode::kAll), ResidentInputs{true});
  // A range spanning two kept tensors is not one tensor in VMEM.
  const HostTensor straddling = tensor({1024}, ACCEL_DTYPE_F32, storage.data() + 2048 + 512);
  EXPECT_EQ(residency.resident_inputs({&straddling, 1}, false, ResidencyMode::kAll), ResidentInputs{false});

  residency.forget(storage.data() + 3072 + 10, 4);  // a host copy into the fourth
  EXPECT_EQ(residency.resident_inputs(all, false, ResidencyMode::kAll), (ResidentInputs{false, true, true, false}));
  EXPECT_EQ(residency.resident_inputs(all, false, ResidencyMode::kOff), ResidentInputs{});
}

TEST(VmemResidency, ATensorLargerThanTheCapacityNeverStays) {
  std::vector<float> storage(2048);
  VmemResidency residency(4096);
  const HostTensor small = tensor({512}, ACCEL_DTYPE_F32, storage.data());
  const HostTensor large = tensor({2048}, ACCEL_DTYPE_F32, storage.data());  // overwrites small's bytes
  residency.record_written({&small, 1}, false);
  residency.record_written({&large, 1}, false);
  EXPECT_EQ(residency.resident_bytes(), 0);
  EXPECT_EQ(residency.resident_inputs({&small, 1}, false, ResidencyMode::kAll), ResidentInputs{false});
}

TEST(VmemResidency, FusedModeCountsOnlyReadsOnAnEdgeOfAFusedKernel) {
  std::vector<float> storage(2048);
  VmemResidency residency(1 << 20);
  const HostTensor by_plain_op = tensor({1024}, ACCEL_DTYPE_F32, storage.data());
  const HostTensor by_fusion = tensor({1024}, ACCEL_DTYPE_F32, storage.data() + 1024);
  residency.record_written({&by_plain_op, 1}, false);
  residency.record_written({&by_fusion, 1}, true);
  const std::vector<HostTensor> both{by_plain_op, by_fusion};
  // Eager ops reading eager results: HBM, as before compiled programs existed.
  EXPECT_EQ(residency.resident_inputs(both, false, ResidencyMode::kFused), (ResidentInputs{false, true}));
  EXPECT_EQ(residency.resident_inputs(both, true, ResidencyMode::kFused), (ResidentInputs{true, true}));
  EXPECT_EQ(residency.resident_inputs(both, false, ResidencyMode::kAll), (ResidentInputs{true, true}));
}

TEST(VmemResidency, AResidentInputCostsNoHbmRead) {
  const HostTensor x = tensor({1024, 1024}), y = tensor({1024, 1024});
  const OpCost from_hbm = cost(ACCEL_OP_NEG, {x}, {y});
  const OpCost from_vmem = cost(ACCEL_OP_NEG, {x}, {y}, nullptr, {true});
  EXPECT_EQ(from_vmem.timing.hbm_bytes, bytes_of(y));
  EXPECT_EQ(from_vmem.vmem_read_bytes, bytes_of(x));
  EXPECT_EQ(from_hbm.timing.hbm_bytes - from_vmem.timing.hbm_bytes, bytes_of(x));
  EXPECT_EQ(from_vmem.timing.compute_cycles, from_hbm.timing.compute_cycles);
  EXPECT_LT(from_vmem.timing.cycles, from_hbm.timing.cycles);
  EXPECT_NE(detail_json(from_vmem).find(R"("vmem_read_bytes":4194304)"), std::string::npos);

  // An MXU op: the resident operand's HBM traffic goes, its MXU cycles stay.
  const HostTensor a = tensor({512, 1024}), w = tensor({1024, 1024}), out = tensor({512, 1024});
  const OpCost matmul = cost(ACCEL_OP_MATMUL, {a, w}, {out});
  const OpCost resident_a = cost(ACCEL_OP_MATMUL, {a, w}, {out}, nullptr, {true, false});
  EXPECT_EQ(resident_a.timing.hbm.input, 0);
  EXPECT_EQ(resident_a.vmem_read_bytes, matmul.timing.hbm.input);
  EXPECT_EQ(resident_a.timing.hbm_bytes, matmul.timing.hbm_bytes - matmul.timing.hbm.input);
  EXPECT_EQ(resident_a.timing.compute_cycles, matmul.timing.compute_cycles);

  // A fusion whose input a previous kernel left in VMEM reads nothing from HBM.
  Program program;
  program.store(program.op(ACCEL_OP_RELU, program.load(0)));
  const OpCost fused = cost(ACCEL_OP_FUSED_ELEMENTWISE, {x}, {y}, program.over({1024, 1024}), {true});
  EXPECT_EQ(fused.timing.hbm_bytes, bytes_of(y));
}

// CMEM, the second level: a tensor too large for the VMEM capacity but
// within the CMEM share stays there, newest last, without touching VMEM.
TEST(VmemResidency, ATensorTooLargeForVmemStaysInCmemWithinItsShare) {
  std::vector<float> storage(5 * 4096);
  VmemResidency residency(4096, 3 * 4096 * 4);  // VMEM: 1024 floats; CMEM: three tensors of 4096
  const HostTensor small = tensor({1024}, ACCEL_DTYPE_F32, storage.data());
  std::vector<HostTensor> large;
  for (int index = 1; index <= 4; ++index) large.push_back(tensor({4096}, ACCEL_DTYPE_F32, storage.data() + index * 4096));
  residency.record_written({&small, 1}, false);
  for (const HostTensor& written : large) residency.record_written({&written, 1}, false);
  EXPECT_EQ(residency.resident_bytes(), 1024 * 4);  // VMEM kept its tensor
  EXPECT_EQ(residency.cmem_resident_bytes(), 3 * 4096 * 4);
  const std::vector<HostTensor> all{small, large[0], large[1], large[2], large[3]};
  ResidentInputs in_cmem;
  EXPECT_EQ(residency.resident_inputs(all, false, ResidencyMode::kAll, &in_cmem),
            (ResidentInputs{true, false, true, true, true}));
  EXPECT_EQ(in_cmem, (ResidentInputs{false, false, true, true, true}));
  // The same modes decide which reads count: an eager read of an eager result goes to HBM.
  EXPECT_EQ(residency.resident_inputs(all, false, ResidencyMode::kFused, &in_cmem),
            (ResidentInputs{false, false, false, false, false}));
  EXPECT_EQ(in_cmem, (ResidentInputs{false, false, false, false, false}));
  EXPECT_EQ(residency.resident_inputs(all, false, ResidencyMode::kOff, &in_cmem), ResidentInputs{});
  EXPECT_TRUE(in_cmem.empty());

  // Larger than the CMEM share: HBM only. Without CMEM (share 0): HBM only.
  const HostTensor too_large = tensor({4 * 4096}, ACCEL_DTYPE_F32, storage.data() + 4096);
  residency.record_written({&too_large, 1}, true);
  EXPECT_EQ(residency.cmem_resident_bytes(), 0);  // it overwrote what CMEM kept, and does not fit itself
  EXPECT_EQ(residency.resident_inputs({&too_large, 1}, true, ResidencyMode::kAll), ResidentInputs{false});
  EXPECT_EQ(residency.resident_bytes(), 1024 * 4);
  VmemResidency without_cmem(4096);
  without_cmem.record_written({&large[0], 1}, true);
  EXPECT_EQ(without_cmem.resident_inputs({&large[0], 1}, true, ResidencyMode::kAll), ResidentInputs{false});
}

TEST(VmemResidency, ACmemInputCostsNoHbmReadAndNoStallAndIsReported) {
  const HostTensor x = tensor({1024, 1024}), y = tensor({1024, 1024});
  const OpCost from_vmem = cost(ACCEL_OP_NEG, {x}, {y}, nullptr, {true});
  const OpCost from_cmem = cost_op(tpu_v4(), ACCEL_OP_NEG, std::vector<HostTensor>{x}, std::vector<HostTensor>{y},
                                   nullptr, {true}, {true});
  EXPECT_EQ(from_cmem.timing.hbm_bytes, bytes_of(y));
  EXPECT_EQ(from_cmem.cmem_read_bytes, bytes_of(x));
  EXPECT_EQ(from_cmem.vmem_read_bytes, 0);
  EXPECT_EQ(from_cmem.timing.cycles, from_vmem.timing.cycles);  // CMEM bandwidth unpublished: no stall of its own
  EXPECT_NE(detail_json(from_cmem).find(R"("cmem_read_bytes":4194304)"), std::string::npos);
  EXPECT_EQ(detail_json(from_vmem).find("cmem_read_bytes"), std::string::npos);
  // `in_cmem` only says where an on-chip read comes from: alone it changes nothing.
  const OpCost from_hbm = cost_op(tpu_v4(), ACCEL_OP_NEG, std::vector<HostTensor>{x}, std::vector<HostTensor>{y},
                                  nullptr, {false}, {true});
  EXPECT_EQ(from_hbm.timing.hbm_bytes, 2 * bytes_of(x));
  EXPECT_EQ(from_hbm.cmem_read_bytes, 0);

  // A batch of GEMMs reading its operand from CMEM: every GEMM's bytes count.
  const HostTensor a = tensor({4, 512, 1024}), w = tensor({4, 1024, 1024}), out = tensor({4, 512, 1024});
  const OpCost plain = cost(ACCEL_OP_MATMUL, {a, w}, {out});
  const OpCost batch = cost_op(tpu_v4(), ACCEL_OP_MATMUL, std::vector<HostTensor>{a, w}, std::vector<HostTensor>{out},
                               nullptr, {true, false}, {true, false});
  ASSERT_GT(plain.timing.hbm.input, 0);
  EXPECT_EQ(batch.timing.hbm.input, 0);
  EXPECT_EQ(batch.cmem_read_bytes, plain.timing.hbm.input);  // with all its passes, over the 4 GEMMs
  EXPECT_EQ(batch.timing.hbm_bytes, plain.timing.hbm_bytes - plain.timing.hbm.input);
  EXPECT_EQ(batch.vmem_read_bytes, 0);
}

TEST(VmemResidency, ModesParseFromTheirNames) {
  ResidencyMode mode = ResidencyMode::kOff;
  EXPECT_TRUE(parse_residency_mode("all", mode));
  EXPECT_EQ(mode, ResidencyMode::kAll);
  EXPECT_TRUE(parse_residency_mode("fused", mode));
  EXPECT_EQ(to_string(mode), "fused");
  EXPECT_FALSE(parse_residency_mode("on", mode));
}

// ------------------------------------------------------------------ energy

// tpu_v4 has energy figures (configs/tpu/tpu_v4.yaml): each op's details carry its joules.
TEST(Energy, AFusionCostsLessHbmEnergyThanItsOpsOneByOne) {
  const HostTensor x = tensor({512, 1024}), y = tensor({512, 1024});
  Program program;
  program.store(program.op(ACCEL_OP_NEG, program.op(ACCEL_OP_SQUARE, program.op(ACCEL_OP_RELU, program.load(0)))));
  const OpCost fused = cost(ACCEL_OP_FUSED_ELEMENTWISE, {x}, {y}, program.over({512, 1024}));
  tpu::Energy one_by_one;
  for (AccelOp op : {ACCEL_OP_RELU, ACCEL_OP_SQUARE, ACCEL_OP_NEG}) one_by_one += *cost(op, {x}, {y}).timing.energy;
  ASSERT_TRUE(fused.timing.energy.has_value());
  // One HBM round trip instead of three; the same vector instructions.
  EXPECT_DOUBLE_EQ(one_by_one.hbm_j, 3 * fused.timing.energy->hbm_j);
  EXPECT_DOUBLE_EQ(fused.timing.energy->hbm_j, 2.0 * bytes_of(x) * 43.75e-12);
  EXPECT_DOUBLE_EQ(fused.timing.energy->vector_j, one_by_one.vector_j);
  EXPECT_LT(fused.timing.energy->total_j(), one_by_one.total_j());
}

TEST(Energy, DetailsCarryTheJoulesAndTheirParts) {
  const HostTensor a = tensor({256, 512}), w = tensor({512, 128}), out = tensor({256, 128});
  const OpCost matmul = cost(ACCEL_OP_MATMUL, {a, w}, {out});
  ASSERT_TRUE(matmul.timing.energy.has_value());
  const tpu::Energy& energy = *matmul.timing.energy;
  EXPECT_DOUBLE_EQ(energy.mac_j, 256.0 * 512 * 128 * 0.59e-12);
  EXPECT_DOUBLE_EQ(energy.hbm_j, static_cast<double>(matmul.timing.hbm_bytes) * 43.75e-12);
  const std::string json = detail_json(matmul);
  EXPECT_NE(json.find(R"("energy":{"total_j":)"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("link_j":0,"vector_j":0})"), std::string::npos) << json;
  // A batch of GEMMs costs its GEMMs' energy.
  const HostTensor batch_a = tensor({4, 256, 512}), batch_w = tensor({4, 512, 128}), batch_out = tensor({4, 256, 128});
  const OpCost batch = cost(ACCEL_OP_MATMUL, {batch_a, batch_w}, {batch_out});
  EXPECT_DOUBLE_EQ(batch.timing.energy->mac_j, 4 * energy.mac_j);
  EXPECT_DOUBLE_EQ(batch.timing.energy->total_j(), 4 * energy.total_j());
  // A preset without figures: no energy, written as null.
  const tpu::TimingModel v5e(tpu::load_system({.preset_or_file = "tpu_v5e"}));
  const std::vector<HostTensor> inputs{a, w}, outputs{out};
  const OpCost none = cost_op(v5e, ACCEL_OP_MATMUL, inputs, outputs, nullptr);
  EXPECT_FALSE(none.timing.energy.has_value());
  EXPECT_NE(detail_json(none).find(R"("energy":null)"), std::string::npos) << detail_json(none);
}

TEST(Energy, AResidentInputCostsNoHbmEnergyButIsStillRead) {
  const HostTensor x = tensor({1024, 1024}), y = tensor({1024, 1024});
  const tpu::Energy from_hbm = *cost(ACCEL_OP_NEG, {x}, {y}).timing.energy;
  const tpu::Energy from_vmem = *cost(ACCEL_OP_NEG, {x}, {y}, nullptr, {true}).timing.energy;
  EXPECT_DOUBLE_EQ(from_hbm.hbm_j - from_vmem.hbm_j, bytes_of(x) * 43.75e-12);
  // The vector unit still loads x from VMEM; only the DMA's write of it into VMEM goes.
  EXPECT_DOUBLE_EQ(from_hbm.sram_j - from_vmem.sram_j, bytes_of(x) * 1.75e-12);
  EXPECT_DOUBLE_EQ(from_vmem.vector_j, from_hbm.vector_j);
}

// ------------------------------------------- convolution gradients

AccelConv2dAttributes conv_attributes(int32_t pad) {
  AccelConv2dAttributes attributes{};
  attributes.struct_size = sizeof(attributes);
  attributes.stride_h = attributes.stride_w = 1;
  attributes.dilation_h = attributes.dilation_w = 1;
  attributes.pad_top = attributes.pad_bottom = attributes.pad_left = attributes.pad_right = pad;
  return attributes;
}

// A 3x3 filter gradient, by hand: dfilter[576, 64] = im2col(x)^T . dy, K =
// 8 x 16 x 16 = 2048 output positions. Weight stationary on a v4 core (4
// MXUs of 128x128): 2048 / 128 = 16 folds, 4 per MXU, each streaming the 576
// rows: 3 x 576 + 576 + 2 x 128 + 128 - 2 cycles. HBM: x, dy and dfilter
// once each (no patch matrix).
TEST(ConvolutionGradients, FilterGradientByHand) {
  const AccelConv2dAttributes same = conv_attributes(1);
  const HostTensor x = tensor({8, 16, 16, 64}, ACCEL_DTYPE_BF16), dy = tensor({8, 16, 16, 64}, ACCEL_DTYPE_BF16);
  const HostTensor dfilter = tensor({3, 3, 64, 64}, ACCEL_DTYPE_BF16);
  const OpCost cost = cost_op(tpu_v4(), ACCEL_OP_CONV2D_BACKWARD_FILTER, std::vector{x, dy}, std::vector{dfilter}, &same);
  EXPECT_EQ(cost.timing.gemm.m, 576);
  EXPECT_EQ(cost.timing.gemm.n, 64);
  EXPECT_EQ(cost.timing.gemm.k, 2048);
  EXPECT_EQ(cost.timing.folds, 16);
  EXPECT_EQ(cost.timing.compute_cycles, 3 * 576 + 576 + 2 * 128 + 128 - 2);
  EXPECT_EQ(cost.timing.hbm_bytes, bytes_of(x) + bytes_of(dy) + bytes_of(dfilter));
  // At ResNet's first stage and batch 128 the operands are 51 MB each, far
  // beyond VMEM: the output's partial sums stay on chip and x and dy still
  // stream once each, where keeping either operand resident would stream
  // the other 13 times.
  const HostTensor big_x = tensor({128, 56, 56, 64}, ACCEL_DTYPE_BF16), big_dy = tensor({128, 56, 56, 64}, ACCEL_DTYPE_BF16);
  const OpCost big =
      cost_op(tpu_v4(), ACCEL_OP_CONV2D_BACKWARD_FILTER, std::vector{big_x, big_dy}, std::vector{dfilter}, &same);
  EXPECT_EQ(big.timing.hbm_bytes, bytes_of(big_x) + bytes_of(big_dy) + bytes_of(dfilter));
  EXPECT_EQ(big.timing.hbm.input_passes, 1);
  EXPECT_EQ(big.timing.hbm.weight_passes, 1);
}

// ------------------------------------------------- batch norm in programs

// BATCH_NORM of bf16 x[128, 28, 28, 256] with float32 per-feature operands,
// by hand: alone, two passes over x (statistics, normalization) and y once;
// with x from its producer's fusion, one pass over x.
TEST(BatchNormFusion, StatisticsFromTheProducerSkipOnePassOverX) {
  const HostTensor x = tensor({128, 28, 28, 256}, ACCEL_DTYPE_BF16), y = tensor({128, 28, 28, 256}, ACCEL_DTYPE_BF16);
  const HostTensor scale = tensor({256}), offset = tensor({256}), mean = tensor({256}), variance = tensor({256});
  const std::int64_t activations = bytes_of(x);  // 51,380,224
  ASSERT_EQ(activations, 128 * 28 * 28 * 256 * 2);
  const OpCost alone = cost_op(tpu_v4(), ACCEL_OP_BATCH_NORM, std::vector{x, scale, offset},
                               std::vector{y, mean, variance}, nullptr);
  EXPECT_EQ(alone.timing.hbm_bytes, 2 * activations + 2 * 1024 + activations + 2 * 1024);
  const OpCost fused = cost_op(tpu_v4(), ACCEL_OP_BATCH_NORM, std::vector{x, scale, offset},
                               std::vector{y, mean, variance}, nullptr, {}, {}, {true, false, false});
  EXPECT_EQ(fused.timing.hbm_bytes, alone.timing.hbm_bytes - activations);
  EXPECT_EQ(fused.vmem_read_bytes, activations);
  EXPECT_EQ(fused.timing.compute_cycles, alone.timing.compute_cycles);  // the vector work stays
  // Backward: dy from its producer, x still twice (sums and dx).
  const HostTensor dy = x, dx = y;
  const OpCost backward = cost_op(tpu_v4(), ACCEL_OP_BATCH_NORM_BACKWARD, std::vector{dy, x, scale, mean, variance},
                                  std::vector{dx, scale, offset}, nullptr, {}, {}, {true, false});
  EXPECT_EQ(backward.timing.hbm_bytes, activations + 2 * activations + 3 * 1024 + activations + 2 * 1024);
}

// Which inputs come from a producer: only between ops of a compiled step,
// only from the producer each rule names, found among the recent kernels.
TEST(BatchNormFusion, ProducersAreRecentCompiledKernelsOfTheRightKind) {
  std::vector<char> memory(4096);
  const HostTensor conv_out = tensor({4, 8, 8, 4}, ACCEL_DTYPE_BF16, memory.data());
  const HostTensor normalized = tensor({4, 8, 8, 4}, ACCEL_DTYPE_BF16, memory.data() + 1024);
  const HostTensor statistics = tensor({4}, ACCEL_DTYPE_F32, memory.data() + 2048);
  const HostTensor scale = tensor({4}, ACCEL_DTYPE_F32, memory.data() + 2064);
  RecentKernels recent;
  record_producer(recent, ACCEL_OP_CONV2D, true, std::vector{conv_out});
  for (int small = 0; small < 3; ++small) record_producer(recent, ACCEL_OP_MUL, true, std::vector{statistics});
  const std::vector batch_norm_inputs{conv_out, scale, scale};
  EXPECT_EQ(inputs_from_producer(recent, ACCEL_OP_BATCH_NORM, true, batch_norm_inputs, ResidencyMode::kFused),
            (ResidentInputs{true, false, false}));
  // Eager, or off: nothing.
  EXPECT_TRUE(inputs_from_producer(recent, ACCEL_OP_BATCH_NORM, false, batch_norm_inputs, ResidencyMode::kFused).empty());
  EXPECT_TRUE(inputs_from_producer(recent, ACCEL_OP_BATCH_NORM, true, batch_norm_inputs, ResidencyMode::kOff).empty());
  // An elementwise consumer of a convolution's output is no batch norm consumer.
  EXPECT_TRUE(inputs_from_producer(recent, ACCEL_OP_RELU, true, std::vector{conv_out}, ResidencyMode::kFused).empty());
  // The ReLU after the batch norm reads its output on chip.
  record_producer(recent, ACCEL_OP_BATCH_NORM, true, std::vector{normalized, statistics, statistics});
  EXPECT_EQ(inputs_from_producer(recent, ACCEL_OP_RELU, true, std::vector{normalized}, ResidencyMode::kFused),
            ResidentInputs{true});
  // A producer pushed out of the recent kernels no longer counts.
  for (std::size_t other = 0; other < kRecentKernels; ++other) {
    record_producer(recent, ACCEL_OP_MUL, true, std::vector{statistics});
  }
  EXPECT_TRUE(inputs_from_producer(recent, ACCEL_OP_RELU, true, std::vector{normalized}, ResidencyMode::kFused).empty());
}

TEST(FusedKernels, OnlyFusionsAndEpiloguesAreFusedKernels) {
  const AccelMatmulAttributes plain = matmul_epilogue(0);
  const AccelMatmulAttributes relu = matmul_epilogue(ACCEL_EPILOGUE_ACTIVATION);
  EXPECT_TRUE(is_fused_kernel(ACCEL_OP_FUSED_ELEMENTWISE, nullptr));
  EXPECT_TRUE(is_fused_kernel(ACCEL_OP_MATMUL, &relu));
  EXPECT_FALSE(is_fused_kernel(ACCEL_OP_MATMUL, &plain));
  EXPECT_FALSE(is_fused_kernel(ACCEL_OP_MATMUL, nullptr));
  EXPECT_FALSE(is_fused_kernel(ACCEL_OP_ADD, nullptr));
}

}  // namespace
}  // namespace accel::tpu_sim
