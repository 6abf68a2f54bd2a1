// Op costing for the TPU emulator (see op_costing.hpp). MXU ops become the
// GEMM a TPU compiler would run (convolutions by im2col, their gradients as
// the GEMMs of the backward pass); every other op is a vector-unit op over
// its elements, whose HBM traffic is the bytes of the tensors it reads and
// writes (so data movement ops cost what they move). A fusion is one vector
// kernel over its iteration shape that reads its external inputs and writes
// its outputs once; an epilogue is vector work overlapped with its MXU op, and
// so is the pooling gradient of MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER.
// Inputs found on chip (VMEM or CMEM residency) cost no HBM traffic.
#include "op_costing.hpp"

#include <accel/plugin/plugin_sdk.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "timing/checked_count.hpp"

namespace accel::tpu_sim {
namespace {

using host_kernels::element_count;
using host_kernels::HostTensor;
using tpu::OpTiming;
using tpu::VectorOpKind;

std::int64_t bytes(const HostTensor& tensor) {
  return element_count(tensor) * static_cast<std::int64_t>(sdk::dtype_size(tensor.dtype));
}

std::int64_t bytes(std::span<const HostTensor> tensors) {
  std::int64_t total = 0;
  for (const auto& tensor : tensors) total += bytes(tensor);
  return total;
}

std::int64_t dim(const HostTensor& tensor, int from_end) { return tensor.shape[tensor.rank - from_end]; }

tpu::NumberType number_type(AccelDType dtype) {
  switch (dtype) {
    case ACCEL_DTYPE_BF16: return tpu::NumberType::kBf16;
    case ACCEL_DTYPE_F16: return tpu::NumberType::kFp16;
    default: return tpu::NumberType::kFp32;
  }
}

// `times` independent copies of one op, run back to back.
OpTiming repeated(OpTiming timing, std::int64_t times, std::string op) {
  timing.op = std::move(op);
  for (std::int64_t* field : {&timing.folds, &timing.folds_per_mxu, &timing.compute_cycles, &timing.mxu_cycles,
                              &timing.epilogue_cycles, &timing.memory_cycles, &timing.stall_cycles, &timing.cycles,
                              &timing.useful_macs, &timing.hbm.input, &timing.hbm.weights, &timing.hbm.output,
                              &timing.hbm.epilogue, &timing.hbm_bytes}) {
    *field = tpu::checked_mul(*field, times, "the batch's counts");
  }
  timing.gemm.m = tpu::checked_mul(timing.gemm.m, times, "the batch's counts");
  timing.seconds *= static_cast<double>(times);
  timing.flops *= static_cast<double>(times);
  timing.vmem_access_bytes *= static_cast<double>(times);
  timing.vector_element_ops *= static_cast<double>(times);
  if (timing.energy) timing.energy = timing.energy->scaled(static_cast<double>(times));
  return timing;
}

bool is_resident(const ResidentInputs& resident, std::size_t index) {
  return index < resident.size() && resident[index];
}

// Where a call's inputs are read on chip: `resident` (VMEM or CMEM), and
// which of those `in_cmem`.
struct OnChipInputs {
  const ResidentInputs& resident;
  const ResidentInputs& in_cmem;
  bool on_chip(std::size_t index) const { return is_resident(resident, index); }
  bool cmem(std::size_t index) const { return on_chip(index) && is_resident(in_cmem, index); }
};

// Counts `bytes` read on chip, in the level they came from.
void count_on_chip(OpCost& cost, bool from_cmem, std::int64_t bytes) {
  (from_cmem ? cost.cmem_read_bytes : cost.vmem_read_bytes) += bytes;
}

// What a compiled program changes about one MXU GEMM: operands already in
// VMEM, and the epilogue, per GEMM of the op.
struct MxuExtras {
  bool input_resident = false;    // the tensor of hbm.input
  bool weights_resident = false;  // the tensor of hbm.weights
  bool input_in_cmem = false;     // resident in CMEM rather than VMEM
  bool weights_in_cmem = false;
  const EpilogueSummary* epilogue = nullptr;
  std::int64_t epilogue_elements = 0;
  std::int64_t epilogue_hbm_bytes = 0;  // bias and mask not in VMEM
  std::int64_t epilogue_vmem_bytes = 0; // bias and mask on chip (VMEM or CMEM)
};

MxuExtras mxu_extras(const OnChipInputs& reads, const EpilogueSummary& epilogue, std::int64_t epilogue_elements) {
  return {reads.on_chip(0), reads.on_chip(1), reads.cmem(0), reads.cmem(1), &epilogue, epilogue_elements, 0, 0};
}

OpTiming apply_extras(const tpu::TimingModel& model, OpTiming timing, const MxuExtras& extras, OpCost& cost) {
  bool changed = false;
  if (extras.input_resident && timing.hbm.input > 0) {
    count_on_chip(cost, extras.input_in_cmem, timing.hbm.input);
    timing.hbm.input = 0;
    changed = true;
  }
  if (extras.weights_resident && timing.hbm.weights > 0) {
    count_on_chip(cost, extras.weights_in_cmem, timing.hbm.weights);
    timing.hbm.weights = 0;
    changed = true;
  }
  if (extras.epilogue != nullptr && extras.epilogue->flags != 0) {
    return model.with_epilogue(std::move(timing), {extras.epilogue_elements,
                                                   extras.epilogue->vector_instructions_per_element,
                                                   extras.epilogue_hbm_bytes, extras.epilogue_vmem_bytes});
  }
  return changed ? model.retime(std::move(timing)) : timing;
}

// The operands of an MXU call's epilogue: their HBM bytes (those not in
// VMEM) and VMEM bytes; the mask scaled to one GEMM of `gemms`.
void epilogue_operands(const EpilogueSummary& epilogue, std::span<const HostTensor> in, const OnChipInputs& reads,
                       std::int64_t gemms, MxuExtras& extras, OpCost& cost) {
  auto add = [&](int index, std::int64_t divisor) {
    if (index < 0) return;
    const std::int64_t operand = bytes(in[static_cast<size_t>(index)]) / divisor;
    if (reads.on_chip(static_cast<size_t>(index))) {
      count_on_chip(cost, reads.cmem(static_cast<size_t>(index)), operand);
      extras.epilogue_vmem_bytes += operand;
    } else {
      extras.epilogue_hbm_bytes += operand;
    }
  };
  add(epilogue.bias_input, 1);  // each GEMM of a batch reads the bias (one row of N values)
  add(epilogue.mask_input, gemms);
}

// A vector-unit op over `count` elements reading `read` bytes from HBM and
// `vmem_read` on chip, and writing `written` bytes.
OpTiming vector_op(const tpu::TimingModel& model, VectorOpKind kind, std::int64_t count, std::int64_t read,
                   std::int64_t written, AccelDType dtype, const char* name, std::int64_t vmem_read = 0) {
  if (count <= 0) {
    OpTiming nothing;
    nothing.op = name;
    nothing.energy = model.energy_of(nothing);  // zero joules (with figures)
    return nothing;
  }
  OpTiming timing = model.estimate_vector_op(kind, count, read, written,
                                             std::max<std::int64_t>(1, sdk::dtype_size(dtype)), vmem_read);
  timing.op = name;
  return timing;
}

OpTiming gemm_op(const tpu::TimingModel& model, const char* name, const tpu::GemmShape& gemm,
                 const tpu::OperandBytes& tensors, AccelDType dtype, std::span<const HostTensor> outputs) {
  if (gemm.m <= 0 || gemm.n <= 0 || gemm.k <= 0) {  // nothing to multiply: the output is zeros
    return vector_op(model, VectorOpKind::kElementwise, element_count(outputs[0]), 0, bytes(outputs), dtype, name);
  }
  return model.estimate_gemm(name, gemm, tensors);
}

OpCost matmul(const tpu::TimingModel& model, std::span<const HostTensor> in, std::span<const HostTensor> out,
              const void* attributes, const OnChipInputs& reads) {
  OpCost cost;
  cost.epilogue = read_epilogue(ACCEL_OP_MATMUL, attributes, in.size());
  const auto* matmul_attributes = static_cast<const AccelMatmulAttributes*>(attributes);
  const bool transpose_a = matmul_attributes != nullptr && matmul_attributes->transpose_a != 0;
  const HostTensor &a = in[0], &b = in[1], &y = out[0];
  const std::int64_t m = dim(y, 2), n = dim(y, 1), k = transpose_a ? dim(a, 2) : dim(a, 1);
  const std::int64_t batch = m * n > 0 ? element_count(y) / (m * n) : 0;
  const tpu::NumberType type = number_type(a.dtype);
  std::int64_t gemms = 1;  // GEMMs run back to back
  OpTiming timing;
  if (m * n * k == 0) {
    timing = gemm_op(model, "matmul", {0, 0, 0}, {}, a.dtype, out);
  } else if (batch == 1 || b.rank == 2) {
    timing = model.estimate_matmul(batch * m, n, k, type);  // one GEMM, b shared
  } else if (a.rank == 2) {
    timing = model.estimate_matmul(m, batch * n, k, type);  // one GEMM, a shared
  } else {
    timing = model.estimate_matmul(m, n, k, type);
    gemms = batch;
  }
  MxuExtras extras = mxu_extras(reads, *cost.epilogue, element_count(y) / gemms);
  epilogue_operands(*cost.epilogue, in, reads, gemms, extras, cost);
  timing = apply_extras(model, std::move(timing), extras, cost);
  if (gemms > 1) {
    timing = repeated(std::move(timing), gemms, "batch_matmul");
    cost.vmem_read_bytes = tpu::checked_mul(cost.vmem_read_bytes, gemms, "the batch's counts");
    cost.cmem_read_bytes = tpu::checked_mul(cost.cmem_read_bytes, gemms, "the batch's counts");
  }
  cost.timing = std::move(timing);
  if (cost.epilogue->flags == 0) cost.epilogue.reset();
  return cost;
}

// The Conv2dShape of a convolution `accel tpu estimate conv2d` can express:
// equal strides, no dilation, TensorFlow's valid or same padding.
bool as_estimate_shape(const HostTensor& x, const HostTensor& filter, const HostTensor& y,
                       const AccelConv2dAttributes& attributes, tpu::Conv2dShape& shape) {
  if (attributes.stride_h != attributes.stride_w || attributes.dilation_h != 1 || attributes.dilation_w != 1) {
    return false;
  }
  const std::int64_t stride = attributes.stride_h;
  auto same_pads = [stride](std::int64_t size, std::int64_t window, std::int64_t out, int32_t before, int32_t after) {
    const std::int64_t total = std::max<std::int64_t>((out - 1) * stride + window - size, 0);
    return out == (size + stride - 1) / stride && before == total / 2 && after == total - total / 2;
  };
  const bool valid = attributes.pad_top == 0 && attributes.pad_bottom == 0 && attributes.pad_left == 0 &&
                     attributes.pad_right == 0;
  const bool same = same_pads(x.shape[1], filter.shape[0], y.shape[1], attributes.pad_top, attributes.pad_bottom) &&
                    same_pads(x.shape[2], filter.shape[1], y.shape[2], attributes.pad_left, attributes.pad_right);
  if (!valid && !same) return false;
  shape = {x.shape[0], x.shape[1], x.shape[2], x.shape[3], filter.shape[3], filter.shape[0], filter.shape[1],
           stride, valid ? tpu::Padding::kValid : tpu::Padding::kSame};
  return true;
}

// The GEMM of a convolution or a convolution gradient, as the MXU runs it.
OpTiming convolution_gemm(const tpu::TimingModel& model, AccelOp op, std::span<const HostTensor> in,
                          std::span<const HostTensor> out, const void* attributes) {
  const auto& conv = *static_cast<const AccelConv2dAttributes*>(attributes);
  const AccelDType dtype = in[0].dtype;
  switch (op) {
    case ACCEL_OP_CONV2D: {  // y[N*OH*OW, K] = im2col(x)[N*OH*OW, R*S*C] . filter[R*S*C, K]
      const HostTensor &x = in[0], &filter = in[1], &y = out[0];
      const tpu::GemmShape gemm{element_count(y) / std::max<std::int64_t>(1, y.shape[3]), y.shape[3],
                                filter.shape[0] * filter.shape[1] * filter.shape[2]};
      tpu::Conv2dShape shape;
      if (gemm.m > 0 && gemm.n > 0 && gemm.k > 0 && as_estimate_shape(x, filter, y, conv, shape)) {
        return model.estimate_conv2d(shape, number_type(dtype));
      }
      return gemm_op(model, "conv2d", gemm, {bytes(x), bytes(filter), bytes(y)}, dtype, out);
    }
    case ACCEL_OP_CONV2D_BACKWARD_INPUT: {  // dcol[N*OH*OW, R*S*C] = dy . filter^T, then col2im
      const HostTensor &dy = in[0], &filter = in[1], &dx = out[0];
      const tpu::GemmShape gemm{element_count(dy) / std::max<std::int64_t>(1, dy.shape[3]),
                                filter.shape[0] * filter.shape[1] * filter.shape[2], filter.shape[3]};
      return gemm_op(model, "conv2d_backward_input", gemm, {bytes(dy), bytes(filter), bytes(dx)}, dtype, out);
    }
    default: {  // dfilter[R*S*C, K] = im2col(x)^T[R*S*C, N*OH*OW] . dy[N*OH*OW, K]
      const HostTensor &x = in[0], &dy = in[1], &dfilter = out[0];
      const tpu::GemmShape gemm{dfilter.shape[0] * dfilter.shape[1] * dfilter.shape[2], dfilter.shape[3],
                                element_count(dy) / std::max<std::int64_t>(1, dy.shape[3])};
      return gemm_op(model, "conv2d_backward_filter", gemm, {bytes(x), bytes(dy), bytes(dfilter)}, dtype, out);
    }
  }
}

OpCost convolution(const tpu::TimingModel& model, AccelOp op, std::span<const HostTensor> in,
                   std::span<const HostTensor> out, const void* attributes, const OnChipInputs& reads) {
  OpCost cost;
  cost.epilogue = read_epilogue(op, attributes, in.size());
  MxuExtras extras = mxu_extras(reads, *cost.epilogue, element_count(out[0]));
  epilogue_operands(*cost.epilogue, in, reads, 1, extras, cost);
  cost.timing = apply_extras(model, convolution_gemm(model, op, in, out, attributes), extras, cost);
  if (cost.epilogue->flags == 0) cost.epilogue.reset();
  return cost;
}

// A fusion as one vector kernel: every external input the program loads is
// read once at its own size (a broadcast one too), every output written once.
OpCost fusion(const tpu::TimingModel& model, std::span<const HostTensor> in, std::span<const HostTensor> out,
              const void* attributes, const OnChipInputs& reads) {
  OpCost cost;
  FusionSummary summary = summarize_fusion(attributes, in.size(), out.size());
  tpu::VectorKernelWork work;
  work.elements = summary.elements;
  work.instructions_per_element = summary.vector_instructions_per_element;
  work.reductions = static_cast<std::int64_t>(summary.reductions.size());
  for (size_t index = 0; index < in.size(); ++index) {
    if (!summary.loaded[index]) continue;
    if (reads.on_chip(index)) {
      count_on_chip(cost, reads.cmem(index), bytes(in[index]));
    } else {
      work.bytes_read += bytes(in[index]);
    }
  }
  work.bytes_written = bytes(out);
  work.vmem_bytes_read = cost.on_chip_read_bytes();
  std::int64_t element_bytes = 1;
  for (std::span<const HostTensor> tensors : {in, out}) {
    for (const HostTensor& tensor : tensors) {
      element_bytes = std::max<std::int64_t>(element_bytes, sdk::dtype_size(tensor.dtype));
    }
  }
  work.element_bytes = element_bytes;
  cost.timing = model.estimate_vector_kernel("fused_elementwise", work);
  // One operation per element for each op and each reduction, as a
  // compiler's cost analysis counts elementwise work.
  cost.flops = static_cast<double>(summary.elements) *
               static_cast<double>(summary.ops.size() + summary.reductions.size());
  cost.fusion = std::move(summary);
  return cost;
}

std::int64_t pool_window(const void* attributes) {
  const auto& pool = *static_cast<const AccelPoolAttributes*>(attributes);
  return static_cast<std::int64_t>(pool.window_h) * pool.window_w;
}

// Bytes an optimizer update writes back: every operand except the gradient
// (rmsprop's mom and mg count too: the fused update stores them).
std::int64_t updated_bytes(AccelOp op, std::span<const HostTensor> in) {
  std::int64_t written = 0;
  const size_t gradient = op == ACCEL_OP_SGD_UPDATE ? 1 : op == ACCEL_OP_ADAM_UPDATE ? 3 : 4;
  for (size_t index = 0; index < in.size(); ++index) {
    if (index != gradient) written += bytes(in[index]);
  }
  return written;
}

OpCost vector_unit_op(const tpu::TimingModel& model, AccelOp op, std::span<const HostTensor> in,
                      std::span<const HostTensor> out, const void* attributes, const OnChipInputs& reads) {
  OpCost cost;
  const char* name = host_kernels::op_name(op);
  const AccelDType dtype = !in.empty() ? in[0].dtype : out[0].dtype;
  std::int64_t read = 0;
  for (size_t index = 0; index < in.size(); ++index) {
    if (reads.on_chip(index)) {
      count_on_chip(cost, reads.cmem(index), bytes(in[index]));
    } else {
      read += bytes(in[index]);
    }
  }
  const std::int64_t on_chip_read = cost.on_chip_read_bytes();
  const std::int64_t written = bytes(out);
  const std::int64_t out_elements = out.empty() ? 0 : element_count(out[0]);
  const std::int64_t in_elements = in.empty() ? 0 : element_count(in[0]);
  auto over = [&](VectorOpKind kind, std::int64_t count, std::int64_t bytes_written) {
    return vector_op(model, kind, count, read, bytes_written, dtype, name, on_chip_read);
  };
  cost.timing = [&] {
    if (is_transcendental(op)) return over(VectorOpKind::kTranscendental, out_elements, written);
    switch (op) {
      case ACCEL_OP_MAX_POOL: case ACCEL_OP_AVG_POOL:  // a max / add per window cell
        return over(VectorOpKind::kElementwise, out_elements * pool_window(attributes), written);
      case ACCEL_OP_MAX_POOL_BACKWARD:  // compare and route each dy over its window
        return over(VectorOpKind::kElementwise, element_count(in[1]) * pool_window(attributes), written);
      case ACCEL_OP_AVG_POOL_BACKWARD:
        return over(VectorOpKind::kElementwise, in_elements * pool_window(attributes), written);
      case ACCEL_OP_RANDOM_UNIFORM: case ACCEL_OP_RANDOM_NORMAL: case ACCEL_OP_RANDOM_TRUNCATED_NORMAL:
        return over(VectorOpKind::kTranscendental, out_elements, written);
      case ACCEL_OP_REDUCE_SUM: case ACCEL_OP_REDUCE_MEAN: case ACCEL_OP_REDUCE_MAX: case ACCEL_OP_REDUCE_MIN:
      case ACCEL_OP_ARGMAX:
        return over(VectorOpKind::kReduction, std::max(in_elements, out_elements), written);
      case ACCEL_OP_SOFTMAX: case ACCEL_OP_LOG_SOFTMAX: case ACCEL_OP_SPARSE_SOFTMAX_CROSS_ENTROPY:
        return over(VectorOpKind::kSoftmax, in_elements, written);
      case ACCEL_OP_SGD_UPDATE: {
        const auto& sgd = *static_cast<const AccelSgdAttributes*>(attributes);
        return over(sgd.momentum != 0 ? VectorOpKind::kMomentumUpdate : VectorOpKind::kSgdUpdate, in_elements,
                    updated_bytes(op, in));
      }
      case ACCEL_OP_ADAM_UPDATE: case ACCEL_OP_RMSPROP_UPDATE:  // rmsprop: about Adam's instruction count
        return over(VectorOpKind::kAdamUpdate, in_elements, updated_bytes(op, in));
      default:  // elementwise arithmetic and comparisons, select, data movement and creation
        return over(VectorOpKind::kElementwise, out_elements, written);
    }
  }();
  return cost;
}

// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER as one kernel: the vector unit
// routes pool_dy through pool_x's windows a few images ahead of the MXU,
// which sums the filter gradient from what it routed, so the pooling
// gradient (the size of the convolution's output) never goes to HBM. The
// routing overlaps the GEMM as an epilogue's vector work does, and its
// operands are read once.
OpCost pool_filter_gradient(const tpu::TimingModel& model, std::span<const HostTensor> in,
                            std::span<const HostTensor> out, const void* attributes, const OnChipInputs& reads) {
  OpCost cost;
  const auto* attributes_given = static_cast<const AccelPoolFilterGradientAttributes*>(attributes);
  if (attributes_given == nullptr || attributes_given->struct_size < sizeof(AccelPoolFilterGradientAttributes) ||
      in.size() != 3 || out.size() != 1) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                           "MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER takes x, pool_x, pool_dy, gives dfilter, and "
                           "needs AccelPoolFilterGradientAttributes");
  }
  const AccelPoolFilterGradientAttributes& fused = *attributes_given;
  const HostTensor &x = in[0], &pool_x = in[1], &pool_dy = in[2], &dfilter = out[0];
  // dfilter[R*S*C, K] = im2col(x)^T . dy[N*OH*OW, K], dy shaped as pool_x.
  const tpu::GemmShape gemm{dfilter.shape[0] * dfilter.shape[1] * dfilter.shape[2], dfilter.shape[3],
                            element_count(pool_x) / std::max<std::int64_t>(1, dim(pool_x, 1))};
  OpTiming timing = gemm_op(model, "max_pool_backward_conv2d_backward_filter", gemm, {bytes(x), 0, bytes(dfilter)},
                            x.dtype, out);
  if (reads.on_chip(0) && timing.hbm.input > 0) {
    count_on_chip(cost, reads.cmem(0), timing.hbm.input);
    timing.hbm.input = 0;
  }
  tpu::EpilogueWork routing;
  routing.elements = element_count(pool_dy) * pool_window(&fused.pool);  // a compare and select per window cell
  routing.instructions_per_element = 1;
  for (const std::size_t index : {std::size_t{1}, std::size_t{2}}) {
    if (reads.on_chip(index)) {
      count_on_chip(cost, reads.cmem(index), bytes(in[index]));
      routing.vmem_bytes_read += bytes(in[index]);
    } else {
      routing.bytes_read += bytes(in[index]);
    }
  }
  cost.timing = model.with_epilogue(std::move(timing), routing);
  return cost;
}

// BATCH_NORM and its gradient as XLA lowers them on a TPU: a reduction pass
// for the per-feature sums, then an elementwise pass, each reading the
// activations (x; dy and x backward) from HBM unless they are on chip, or,
// for the sums pass, unless the fusion that produced them took the sums as
// it wrote them (`from_producer`). About 3 vector instructions per element
// forward (sum, sum of squares, one multiply-add) and 5 backward (two sums,
// three multiply-adds).
OpCost batch_norm(const tpu::TimingModel& model, AccelOp op, std::span<const HostTensor> in,
                  std::span<const HostTensor> out, const OnChipInputs& reads, const ResidentInputs& from_producer) {
  const bool forward = op == ACCEL_OP_BATCH_NORM;
  if (in.size() != (forward ? 3u : 5u) || out.size() != 3) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, forward
                               ? "BATCH_NORM takes x, scale, offset and gives y, mean, variance"
                               : "BATCH_NORM_BACKWARD takes dy, x, scale, mean, variance and gives dx, dscale, doffset");
  }
  OpCost cost;
  const std::size_t activations = forward ? 1 : 2;  // x; or dy and x
  std::int64_t read = 0;
  for (std::size_t index = 0; index < in.size(); ++index) {
    const std::int64_t passes = index < activations ? 2 : 1;
    if (reads.on_chip(index)) {
      count_on_chip(cost, reads.cmem(index), passes * bytes(in[index]));
    } else if (is_resident(from_producer, index)) {
      count_on_chip(cost, false, (passes - 1) * bytes(in[index]));  // taken by the producer
      read += bytes(in[index]);
    } else {
      read += passes * bytes(in[index]);
    }
  }
  const std::int64_t instructions = forward ? 3 : 5;
  cost.timing = vector_op(model, VectorOpKind::kElementwise, instructions * element_count(in[0]), read, bytes(out),
                          in[0].dtype, host_kernels::op_name(op), cost.on_chip_read_bytes());
  return cost;
}

OpCost cost_of(const tpu::TimingModel& model, AccelOp op, std::span<const HostTensor> inputs,
               std::span<const HostTensor> outputs, const void* attributes, const OnChipInputs& reads,
               const ResidentInputs& from_producer) {
  if (op == ACCEL_OP_FUSED_ELEMENTWISE) return fusion(model, inputs, outputs, attributes, reads);
  if (op == ACCEL_OP_BATCH_NORM || op == ACCEL_OP_BATCH_NORM_BACKWARD) {
    return batch_norm(model, op, inputs, outputs, reads, from_producer);
  }
  if (op == ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER) {
    return pool_filter_gradient(model, inputs, outputs, attributes, reads);
  }
  if (op == ACCEL_OP_MATMUL) return matmul(model, inputs, outputs, attributes, reads);
  if (runs_on_mxu(op)) return convolution(model, op, inputs, outputs, attributes, reads);
  return vector_unit_op(model, op, inputs, outputs, attributes, reads);
}

std::string quoted_list(const std::vector<std::string_view>& names) {
  std::string text = "[";
  for (size_t index = 0; index < names.size(); ++index) {
    text += fmt::format("{}\"{}\"", index == 0 ? "" : ",", names[index]);
  }
  return text + "]";
}

std::string op_names(const std::vector<AccelOp>& ops) {
  std::vector<std::string_view> names;
  for (AccelOp op : ops) names.emplace_back(host_kernels::op_name(op));
  return quoted_list(names);
}

// `"energy":{...}` in joules, or null without the preset's figures; a part
// whose work ran without a figure (vector, link) is null and not in the total.
std::string energy_json(const std::optional<tpu::Energy>& energy) {
  if (!energy) return R"("energy":null)";
  auto part = [](double joules, bool missing) { return missing ? std::string("null") : fmt::format("{:.6g}", joules); };
  return fmt::format(R"("energy":{{"total_j":{:.6g},"mac_j":{:.6g},"sram_j":{:.6g},"hbm_j":{:.6g},"link_j":{},)"
                     R"("vector_j":{}}})",
                     energy->total_j(), energy->mac_j, energy->sram_j, energy->hbm_j,
                     part(energy->link_j, energy->link_missing), part(energy->vector_j, energy->vector_missing));
}

}  // namespace

bool runs_on_mxu(AccelOp op) noexcept {
  return op == ACCEL_OP_MATMUL || op == ACCEL_OP_CONV2D || op == ACCEL_OP_CONV2D_BACKWARD_INPUT ||
         op == ACCEL_OP_CONV2D_BACKWARD_FILTER;
}

OpCost cost_op(const tpu::TimingModel& model, AccelOp op, std::span<const HostTensor> inputs,
               std::span<const HostTensor> outputs, const void* attributes, const ResidentInputs& resident,
               const ResidentInputs& in_cmem, const ResidentInputs& from_producer) {
  try {
    OpCost cost;
    if (from_producer.empty() || op == ACCEL_OP_BATCH_NORM || op == ACCEL_OP_BATCH_NORM_BACKWARD) {
      cost = cost_of(model, op, inputs, outputs, attributes, OnChipInputs{resident, in_cmem}, from_producer);
    } else {  // a consumer reads the producer's output where it was made: on chip
      ResidentInputs on_chip(inputs.size(), false), cmem(inputs.size(), false);
      for (std::size_t index = 0; index < inputs.size(); ++index) {
        on_chip[index] = is_resident(resident, index) || is_resident(from_producer, index);
        cmem[index] = is_resident(in_cmem, index) && !is_resident(from_producer, index);
      }
      cost = cost_of(model, op, inputs, outputs, attributes, OnChipInputs{on_chip, cmem}, {});
    }
    const double counted = host_kernels::flops(op, inputs, outputs, attributes);
    if (counted > 0 || op != ACCEL_OP_FUSED_ELEMENTWISE) cost.flops = counted;
    return cost;
  } catch (const tpu::CycleAccurateLimitError& error) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                           fmt::format("{}: {}", host_kernels::op_name(op), error.what()));
  } catch (const tpu::CountOverflowError& error) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                           fmt::format("{}: {}", host_kernels::op_name(op), error.what()));
  }
}

std::string detail_json(const OpCost& cost) {
  const OpTiming& timing = cost.timing;
  std::string json = fmt::format(
      R"({{"kind":"{}","gemm":{{"m":{},"n":{},"k":{}}},"folds":{},"folds_per_mxu":{},"compute_cycles":{},)"
      R"("memory_cycles":{},"stall_cycles":{},"arithmetic_intensity":{:.6g},"mxu_utilization":{:.6g},)"
      R"("hbm_bytes":{{"input":{},"weights":{},"output":{},"total":{}}},"vmem_read_bytes":{})",
      timing.op, timing.gemm.m, timing.gemm.n, timing.gemm.k, timing.folds, timing.folds_per_mxu,
      timing.compute_cycles, timing.memory_cycles, timing.stall_cycles, timing.arithmetic_intensity,
      timing.mxu_utilization, timing.hbm.input, timing.hbm.weights, timing.hbm.output, timing.hbm_bytes,
      cost.vmem_read_bytes);
  if (cost.cmem_read_bytes > 0) json += fmt::format(R"(,"cmem_read_bytes":{})", cost.cmem_read_bytes);
  json += "," + energy_json(timing.energy);
  if (cost.fusion) {
    const FusionSummary& fusion = *cost.fusion;
    json += fmt::format(
        R"(,"fusion":{{"elements":{},"instructions":{},"vector_instructions_per_element":{},"ops":{},)"
        R"("reductions":{}}})",
        fusion.elements, fusion.instructions, fusion.vector_instructions_per_element, op_names(fusion.ops),
        op_names(fusion.reductions));
  }
  if (cost.epilogue) {
    json += fmt::format(R"(,"epilogue":{{"steps":{},"mxu_cycles":{},"vector_cycles":{},"hbm_bytes":{}}})",
                        quoted_list(cost.epilogue->steps), timing.mxu_cycles, timing.epilogue_cycles,
                        timing.hbm.epilogue);
  }
  if (cost.prefetched_weight_bytes > 0) {
    json += fmt::format(R"(,"prefetched_weight_bytes":{})", cost.prefetched_weight_bytes);
  }
  return json + "}";
}

}  // namespace accel::tpu_sim
