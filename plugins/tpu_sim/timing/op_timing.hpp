// TimingModel: the per-op timing the TPU plugin asks for. It lowers an op
// the way a TPU compiler would (convolution -> GEMM by im2col, operands
// padded to the (8, 128) tile layout), spreads the array folds over the
// MXUs of the cores it uses, times the MXU work (analytical_model), the HBM
// traffic and stalls (memory_model) or the vector unit (vector_unit_model),
// and reports cycles, simulated time, utilization, bytes and the bound,
// and the op's energy when the preset has energy figures (energy_model).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "timing/analytical_model.hpp"
#include "timing/array_mapping.hpp"
#include "timing/energy_model.hpp"
#include "timing/hardware_config.hpp"
#include "timing/memory_model.hpp"
#include "timing/op_lowering.hpp"
#include "timing/timing_convention.hpp"
#include "timing/vector_unit_model.hpp"

namespace accel::tpu {

enum class Bound { kCompute, kMemory };
std::string_view to_string(Bound bound);

struct TimingOptions {
  TimingConvention convention = TimingConvention::kTpu;  // kScaleSim implies ideal memory
  bool ideal_memory = false;  // no bandwidth stalls
  int cores = 1;              // TensorCores one op is spread over (a device is one core)
  // MXU compute cycles from stepping the busiest MXU's folds PE by PE
  // (SystolicArray) instead of the closed form; for small shapes only.
  bool cycle_accurate = false;
  // Megacore mode: on a chip whose preset has `megacore: true`, every op is
  // spread over all its TensorCores (cores = tensor_cores_per_chip); on
  // other chips it changes nothing.
  bool megacore = false;
};

// Largest MXU op the cycle-accurate mode steps: rows x columns x cycles of
// the busiest MXU (about a second of host time).
inline constexpr std::int64_t kCycleAccuratePeCycleLimit = 100'000'000;

// An op the cycle-accurate mode refuses because it exceeds kCycleAccuratePeCycleLimit.
class CycleAccurateLimitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct OpTiming {
  std::string op;                       // "matmul", "conv2d", or the vector op kind
  GemmShape gemm;                       // the GEMM the MXU runs (zero for vector ops)
  ArrayMapping mapping;                 // its mapping on one MXU
  std::int64_t folds = 0;               // array folds in all
  std::int64_t folds_per_mxu = 0;       // on the busiest MXU
  std::int64_t compute_cycles = 0;      // MXU or vector-unit cycles (the larger with an epilogue)
  std::int64_t mxu_cycles = 0;          // MXU ops: the array's cycles
  std::int64_t epilogue_cycles = 0;     // vector-unit cycles of an MXU op's epilogue, overlapped with the MXU
  std::int64_t memory_cycles = 0;       // cycles HBM needs for hbm_bytes
  std::int64_t stall_cycles = 0;        // waiting on memory beyond compute
  std::int64_t cycles = 0;              // total; SCALE-Sim convention: its total_cycles
  double seconds = 0;                   // cycles / clock
  std::int64_t useful_macs = 0;
  double mxu_utilization = 0;           // useful MACs / (peak MACs per cycle * cycles)
  HbmTraffic hbm;                       // bytes per operand
  std::int64_t hbm_bytes = 0;
  double arithmetic_intensity = 0;      // FLOPs (2 per MAC, 1 per vector op) per HBM byte
  Bound bound = Bound::kCompute;
  // What the memory overlap was computed from, kept so that a caller that
  // changes the traffic (TimingModel::retime) gets the same rules again.
  double flops = 0;                     // the FLOPs of arithmetic_intensity
  std::int64_t first_tile_bytes = 0;    // bytes that must arrive before compute starts
  // What the energy model charges beside MACs and HBM bytes: bytes the MXU
  // (SCALE-Sim's SRAM access counts) or the vector unit (its operands) read
  // from and write to VMEM, and vector instructions x elements.
  double vmem_access_bytes = 0;
  double vector_element_ops = 0;
  // Joules (energy_model.hpp), recomputed with every change of the counts;
  // nullopt when the preset has no energy figures.
  std::optional<Energy> energy;
};

// One fused vector kernel: a program of `instructions_per_element` vector
// instructions over `elements` elements, plus `reductions` reductions of
// values of the program over those elements, reading and writing HBM once.
struct VectorKernelWork {
  std::int64_t elements = 0;
  std::int64_t instructions_per_element = 0;
  std::int64_t reductions = 0;
  std::int64_t bytes_read = 0;     // external inputs, each once, at its own size
  std::int64_t bytes_written = 0;  // outputs, each once
  std::int64_t element_bytes = 4;
  std::int64_t vmem_bytes_read = 0;  // inputs already in VMEM: no HBM traffic, still read (energy)
};

// The epilogue of an MXU op (bias add, activation, relu mask): vector work
// over the op's output elements as they leave the array, and its operands.
struct EpilogueWork {
  std::int64_t elements = 0;
  std::int64_t instructions_per_element = 0;
  std::int64_t bytes_read = 0;  // bias and mask from HBM
  std::int64_t vmem_bytes_read = 0;  // bias and mask already in VMEM (energy only)
};

class TimingModel {
 public:
  explicit TimingModel(Hardware hardware, TimingOptions options = {});

  // OUT[M x N] = IN[M x K] . W[K x N] with inputs and output of `dtype`.
  OpTiming estimate_matmul(std::int64_t m, std::int64_t n, std::int64_t k, NumberType dtype) const;
  OpTiming estimate_conv2d(const Conv2dShape& conv, NumberType dtype) const;
  OpTiming estimate_vector_op(VectorOpKind kind, std::int64_t elements, NumberType dtype) const;

  // A GEMM lowered by the caller (a convolution with explicit pads, strides
  // or dilations, or a convolution gradient), with the sizes of the tensors
  // it reads and writes in HBM. `op` names it in the result.
  OpTiming estimate_gemm(std::string op, const GemmShape& gemm, const OperandBytes& tensors) const;
  // A vector-unit op whose HBM traffic the caller knows (binary ops read two
  // tensors, data movement reads and writes what it moves); `vmem_bytes_read`
  // are inputs already in VMEM (no HBM traffic, but the unit still reads them).
  OpTiming estimate_vector_op(VectorOpKind kind, std::int64_t elements, std::int64_t bytes_read,
                              std::int64_t bytes_written, std::int64_t element_bytes,
                              std::int64_t vmem_bytes_read = 0) const;

  // A fused vector kernel (timing/fused_kernel_timing.cpp): its program's
  // cycles plus each reduction's, as estimate_vector_op's kReduction costs
  // it, with no HBM pass of their own. `op` names it in the result.
  OpTiming estimate_vector_kernel(std::string op, const VectorKernelWork& work) const;
  // `timing` (an MXU op) with an epilogue: the vector unit works on each
  // output tile while the MXU computes the next, so compute is the larger
  // of the two; the epilogue's operands are extra HBM reads.
  OpTiming with_epilogue(OpTiming timing, const EpilogueWork& epilogue) const;
  // `timing` after its caller changed its HBM traffic (an operand read from
  // VMEM instead): bytes, stalls, cycles, bound, intensity, utilization and
  // energy follow by the same rules.
  OpTiming retime(OpTiming timing) const;
  // The energy of `timing`'s counts on this hardware (what finish computes).
  std::optional<Energy> energy_of(const OpTiming& timing) const;

  const Hardware& hardware() const { return hardware_; }
  const TimingOptions& options() const { return options_; }
  // HBM bytes per cycle for an op on options().cores TensorCores: their share
  // of the chip's bandwidth, which its cores share (all of it in megacore).
  double hbm_bytes_per_cycle() const;

 private:
  OpTiming time_gemm(std::string op, const GemmShape& gemm, const OperandBytes& tensors) const;
  std::int64_t cycle_accurate_compute_cycles(const ArrayMapping& mapping, std::int64_t folds_per_mxu) const;
  void finish(OpTiming& timing, std::int64_t first_tile_bytes, double flops) const;
  double mxu_utilization(const OpTiming& timing) const;

  Hardware hardware_;
  TimingOptions options_;
};

}  // namespace accel::tpu
