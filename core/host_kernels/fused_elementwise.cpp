// FUSED_ELEMENTWISE on host memory: one pass over the iteration space, block
// by block (kFusedBlock elements of one run), every instruction computed into
// a small per-thread array, outputs stored or reduced before the next block.
//
// Parallel work and the order of reductions:
//  - Without reduced outputs the iteration space is cut into flat ranges.
//  - With reduced outputs, when the leading axes kept by every reduced output
//    give at least kMinimumUnits units (or the fusion is small), each unit is
//    one task's alone: every output element is reduced by one thread, in the
//    plain REDUCE_*'s own order (reduce_run's lanes for row reductions,
//    element by element otherwise), so the result is the plain one bit for bit.
//  - Otherwise (reductions over the leading axes, such as a bias gradient)
//    fixed pieces of the space reduce into partial outputs that are combined
//    in a fixed tree (tbb::parallel_deterministic_reduce): the same result at
//    any thread count, but float sums are added in another order than the
//    plain op's, so they differ from it by rounding (docs/op-set.md bounds it).
#include "fused_program.hpp"
#include "kernels.hpp"
#include "reducers.hpp"

#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

namespace accel::host_kernels::detail {
namespace {

// Units below which the partial-output scheme pays off (see the top comment).
constexpr int64_t kMinimumUnits = 16;

template <typename T, typename Reducer>
class Rule final : public ReductionRule {
  using Lanes = LaneReduction<T, Reducer>;
  static_assert(sizeof(Lanes) <= kRowStateBytes && alignof(Lanes) <= 16);

 public:
  explicit Rule(bool mean) : mean_(mean) {}

  size_t accumulator_size() const noexcept override { return sizeof(T); }

  void fill_identity(void* accumulators, int64_t count) const noexcept override {
    std::fill_n(static_cast<T*>(accumulators), count, Reducer::identity());
  }

  void accumulate(void* accumulators, int64_t offset, int64_t step, int64_t row_stride, BlockValue values,
                  int64_t rows, int64_t length) const noexcept override {
    const Reducer reducer;
    for (int64_t row = 0; row < rows; ++row) {
      T* __restrict into = static_cast<T*>(accumulators) + offset + row * row_stride;
      const T* __restrict x = static_cast<const T*>(values.data) + (values.repeated ? 0 : row * length);
      if (step != 0 && !values.repeated) {
        for (int64_t i = 0; i < length; ++i) into[i] = reducer(into[i], x[i]);
      } else if (step != 0) {
        const T value = *x;
        for (int64_t i = 0; i < length; ++i) into[i] = reducer(into[i], value);
      } else {  // one output element, element after element
        T result = *into;
        for (int64_t i = 0; i < length; ++i) result = reducer(result, x[values.repeated ? 0 : i]);
        *into = result;
      }
    }
  }

  void accumulate_runs(void* accumulators, int64_t offset, int64_t row_stride, BlockValue values, int64_t rows,
                       int64_t length) const noexcept override {
    for (int64_t row = 0; row < rows; ++row) {
      Lanes lanes;
      lanes.begin(length);
      feed(lanes, row_of(values, row, length), length);
      T* into = static_cast<T*>(accumulators) + offset + row * row_stride;
      *into = Reducer{}(*into, lanes.finish());
    }
  }

  void join(void* into, const void* from, int64_t count) const noexcept override {
    T* __restrict left = static_cast<T*>(into);
    const T* __restrict right = static_cast<const T*>(from);
    const Reducer reducer;
    for (int64_t i = 0; i < count; ++i) left[i] = reducer(left[i], right[i]);
  }

  void row_begin(void* state, int64_t length) const noexcept override { (new (state) Lanes())->begin(length); }
  void row_feed(void* state, BlockValue values, int64_t count) const noexcept override {  // one row
    feed(*std::launder(static_cast<Lanes*>(state)), values, count);
  }
  void row_finish(void* state, void* accumulators, int64_t offset) const noexcept override {
    static_cast<T*>(accumulators)[offset] = std::launder(static_cast<Lanes*>(state))->finish();
  }

  // As reductions.cpp finishes REDUCE_MEAN, and as dispatch.cpp narrows a
  // staged BF16/F16 result.
  void store(const void* accumulators, const HostTensor& output, int64_t reduced_count) const override {
    const T* values = static_cast<const T*>(accumulators);
    const int64_t count = element_count(output);
    auto finished = [&](int64_t i) -> T {
      if (!mean_) return values[i];
      if constexpr (std::is_floating_point_v<T>) {
        const T scale = T{1} / static_cast<T>(reduced_count);
        return reduced_count == 0 ? NAN : values[i] * scale;
      } else {
        return reduced_count == 0 ? T{0} : static_cast<T>(values[i] / reduced_count);
      }
    };
    switch (output.dtype) {
      case ACCEL_DTYPE_BF16:
        for (int64_t i = 0; i < count; ++i) data_of<uint16_t>(output)[i] = sdk::float_to_bf16(static_cast<float>(finished(i)));
        return;
      case ACCEL_DTYPE_F16:
        for (int64_t i = 0; i < count; ++i) data_of<uint16_t>(output)[i] = sdk::float_to_f16(static_cast<float>(finished(i)));
        return;
      default:
        for (int64_t i = 0; i < count; ++i) data_of<T>(output)[i] = finished(i);
        return;
    }
  }

 private:
  static BlockValue row_of(BlockValue values, int64_t row, int64_t length) noexcept {
    if (values.repeated) return values;
    return {static_cast<const T*>(values.data) + row * length, false};
  }

  static void feed(Lanes& lanes, BlockValue values, int64_t count) noexcept {
    const T* x = static_cast<const T*>(values.data);
    if (values.repeated) lanes.template feed<0>(x, count);
    else lanes.template feed<1>(x, count);
  }

  bool mean_;
};

template <typename T>
std::unique_ptr<ReductionRule> rule_for(AccelOp reduce_op) {
  switch (reduce_op) {
    case ACCEL_OP_REDUCE_SUM: return std::make_unique<Rule<T, SumReducer<T>>>(false);
    case ACCEL_OP_REDUCE_MEAN: return std::make_unique<Rule<T, SumReducer<T>>>(true);
    case ACCEL_OP_REDUCE_MAX: return std::make_unique<Rule<T, MaxReducer<T>>>(false);
    default: return std::make_unique<Rule<T, MinReducer<T>>>(false);
  }
}

// The values of one block, in per-thread storage (a task never waits inside
// a body, so one thread never runs two blocks at once).
struct BlockScratch {
  std::vector<uint64_t> storage;  // kFusedBlock elements of 8 bytes per step
  BlockValue values[ACCEL_FUSED_MAX_INSTRUCTIONS];
  // What a LOAD step's slot holds when it gathered a pattern repeated across
  // rows (a per-channel scale over rows of channels): the same for every
  // block that starts at the same column, so later blocks reuse it. Cleared
  // when a walk starts (the inputs of another call may differ).
  struct Gathered {
    const void* source = nullptr;
    int64_t rows = 0, length = 0;
  } gathered[ACCEL_FUSED_MAX_INSTRUCTIONS];

  static BlockScratch& for_steps(size_t steps) {
    thread_local BlockScratch scratch;
    if (scratch.storage.size() < steps * kFusedBlock) scratch.storage.resize(steps * kFusedBlock);
    return scratch;
  }
  void* slot(size_t step) { return storage.data() + step * kFusedBlock; }
};

// Accumulators of every reduced output: one buffer each, in output order.
struct Accumulators {
  std::vector<std::vector<uint64_t>> buffers;

  explicit Accumulators(const FusedPlan& plan) : buffers(plan.outputs.size()) {
    for (size_t j = 0; j < plan.outputs.size(); ++j) {
      const FusedOutputPlan& output = plan.outputs[j];
      if (!output.rule) continue;
      buffers[j].resize(static_cast<size_t>(output.kept_count));  // 8 bytes: room for any accumulator
      output.rule->fill_identity(buffers[j].data(), output.kept_count);
    }
  }
  void* of(size_t output) { return buffers[output].data(); }
};

// A block of the iteration space: `rows` runs of `length` elements that
// follow each other in iteration order (rows > 1 only for whole runs shorter
// than a block), starting at flat index `position`. Layout operand o's element
// (row r, i) lies at offsets[o] + r * row_strides[o] + i * inner step of o.
struct Block {
  int64_t position = 0;
  int64_t rows = 1;
  int64_t length = 0;
  int64_t offsets[kFusedLayoutOperands];
  int64_t row_strides[kFusedLayoutOperands];

  int64_t count() const noexcept { return rows * length; }
};

class FusedExecutor {
 public:
  FusedExecutor(const FusedPlan& plan, std::span<const HostTensor> inputs, std::span<const HostTensor> outputs)
      : plan_(plan), inputs_(inputs), outputs_(outputs) {}

  void run() {
    const int64_t grain = grain_for(plan_.cost_per_element);
    if (!plan_.has_reductions) {
      parallel_ranges(plan_.total, grain, [&](int64_t begin, int64_t end) {
        walk(begin, end, [&](BlockScratch&, const Block&) {});
      });
      return;
    }
    // Units: the leading merged axes every reduced output keeps.
    const auto& layout = plan_.layout;
    int64_t units = 1;
    for (int axis = 0; axis < layout.rank && kept_by_all_reductions(axis); ++axis) units *= layout.shape[axis];
    int64_t kept_total = 0;
    for (const FusedOutputPlan& output : plan_.outputs) kept_total += output.rule ? output.kept_count : 0;
    const int64_t piece = std::max(grain, 8 * kept_total);  // partial outputs cost little beside a piece
    if (plan_.total == 0 || units >= kMinimumUnits || plan_.total <= 2 * piece) {
      run_by_units(units, grain);
    } else {
      run_by_pieces(piece);
    }
  }

 private:
  bool kept_by_all_reductions(int axis) const {
    for (const FusedOutputPlan& output : plan_.outputs) {
      if (output.rule && plan_.layout.strides[output.layout_operand][axis] == 0) return false;
    }
    return true;
  }

  static BlockValue row_of(BlockValue values, int64_t row, int64_t length, size_t element_size) {
    if (values.repeated) return values;
    return {static_cast<const char*>(values.data) + row * length * static_cast<int64_t>(element_size), false};
  }

  // Each unit's reduced elements are this task's alone: accumulate in place.
  void run_by_units(int64_t units, int64_t grain) {
    Accumulators accumulators(plan_);
    const int64_t unit_size = units == 0 ? 0 : plan_.total / units;
    parallel_ranges(units, grain_for(unit_size, grain), [&](int64_t first_unit, int64_t end_unit) {
      struct Row {
        alignas(16) unsigned char state[ReductionRule::kRowStateBytes];
        int64_t active = -1;
      } rows[ACCEL_FUSED_MAX_OUTPUTS];
      walk(first_unit * unit_size, end_unit * unit_size, [&](BlockScratch& scratch, const Block& block) {
        for (size_t j = 0; j < plan_.outputs.size(); ++j) {
          const FusedOutputPlan& output = plan_.outputs[j];
          if (!output.rule) continue;
          const int operand = output.layout_operand;
          const BlockValue values = scratch.values[output.value];
          if (!output.row_reduction) {
            output.rule->accumulate(accumulators.of(j), block.offsets[operand], plan_.layout.inner_step(operand),
                                    block.row_strides[operand], values, block.rows, block.length);
            continue;
          }
          // The runs of one output row arrive in order, rows one after another.
          Row& row = rows[j];
          for (int64_t r = 0; r < block.rows; ++r) {
            const int64_t offset = block.offsets[operand] + r * block.row_strides[operand];
            if (row.active != offset) {
              if (row.active >= 0) output.rule->row_finish(row.state, accumulators.of(j), row.active);
              output.rule->row_begin(row.state, output.reduced_count);
              row.active = offset;
            }
            output.rule->row_feed(row.state, row_of(values, r, block.length, output.rule->accumulator_size()),
                                  block.length);
          }
        }
      });
      for (size_t j = 0; j < plan_.outputs.size(); ++j) {
        if (plan_.outputs[j].rule && rows[j].active >= 0) {
          plan_.outputs[j].rule->row_finish(rows[j].state, accumulators.of(j), rows[j].active);
        }
      }
    });
    store_reductions(accumulators);
  }

  // Pieces reduce into partial outputs, joined in a fixed tree.
  class PieceBody {
   public:
    explicit PieceBody(const FusedExecutor& executor) : executor_(executor), partial_(executor.plan_) {}
    PieceBody(PieceBody& other, tbb::split) : executor_(other.executor_), partial_(other.executor_.plan_) {}

    void operator()(const tbb::blocked_range<int64_t>& range) {
      const FusedPlan& plan = executor_.plan_;
      executor_.walk(range.begin(), range.end(), [&](BlockScratch& scratch, const Block& block) {
        for (size_t j = 0; j < plan.outputs.size(); ++j) {
          const FusedOutputPlan& output = plan.outputs[j];
          if (!output.rule) continue;
          const int operand = output.layout_operand;
          const BlockValue values = scratch.values[output.value];
          if (plan.layout.inner_step(operand) == 0) {
            output.rule->accumulate_runs(partial_.of(j), block.offsets[operand], block.row_strides[operand], values,
                                         block.rows, block.length);
          } else {
            output.rule->accumulate(partial_.of(j), block.offsets[operand], 1, block.row_strides[operand], values,
                                    block.rows, block.length);
          }
        }
      });
    }

    void join(PieceBody& right) {
      const FusedPlan& plan = executor_.plan_;
      for (size_t j = 0; j < plan.outputs.size(); ++j) {
        if (plan.outputs[j].rule) plan.outputs[j].rule->join(partial_.of(j), right.partial_.of(j), plan.outputs[j].kept_count);
      }
    }

    Accumulators& partial() { return partial_; }

   private:
    const FusedExecutor& executor_;
    Accumulators partial_;
  };

  void run_by_pieces(int64_t piece) {
    PieceBody body(*this);
    tbb::parallel_deterministic_reduce(tbb::blocked_range<int64_t>(0, plan_.total, piece), body,
                                       tbb::simple_partitioner());
    store_reductions(body.partial());
  }

  void store_reductions(Accumulators& accumulators) const {
    for (size_t j = 0; j < plan_.outputs.size(); ++j) {
      const FusedOutputPlan& output = plan_.outputs[j];
      if (output.rule) output.rule->store(accumulators.of(j), outputs_[j], output.reduced_count);
    }
  }

  // Computes and stores every block of the flat range [begin, end), then calls
  // reduce(scratch, block) for the block's reductions. Runs shorter than half
  // a block are taken several at a time, so that short innermost axes (a
  // channel axis kept by a bias gradient) still make long loops.
  template <typename Reduce>
  void walk(int64_t begin, int64_t end, const Reduce& reduce) const {
    if (begin >= end) return;
    const auto& layout = plan_.layout;
    BlockScratch& scratch = BlockScratch::for_steps(plan_.steps.size());
    std::fill(std::begin(scratch.gathered), std::end(scratch.gathered), BlockScratch::Gathered{});
    const int64_t inner = layout.inner();
    const int row_axis = layout.rank - 2;  // -1: one run
    int64_t column = begin % inner;
    RunCursor<kFusedLayoutOperands> cursor(layout, begin / inner);
    Block block;
    for (int o = 0; o < layout.operands; ++o) block.row_strides[o] = row_axis >= 0 ? layout.strides[o][row_axis] : 0;
    for (int64_t position = begin; position < end;) {
      block.position = position;
      block.rows = 1;
      if (column == 0 && row_axis >= 0 && 2 * inner <= kFusedBlock && end - position >= 2 * inner) {
        block.rows = std::min({kFusedBlock / inner, layout.shape[row_axis] - cursor.index[row_axis],
                               (end - position) / inner});
      }
      block.length = block.rows > 1 ? inner : std::min({kFusedBlock, inner - column, end - position});
      for (int o = 0; o < layout.operands; ++o) block.offsets[o] = cursor.offsets[o] + column * layout.inner_step(o);
      compute_block(scratch, block);
      store_block(scratch, block);
      reduce(scratch, block);
      position += block.count();
      if (block.rows > 1) {
        cursor.advance(block.rows);
      } else if ((column += block.length) == inner) {
        column = 0;
        cursor.next_row();
      }
    }
  }

  void load_block(const FusedStep& step, const Block& block, void* slot, BlockValue& value,
                  BlockScratch::Gathered& gathered) const {
    const HostTensor& input = inputs_[static_cast<size_t>(step.input)];
    const int64_t inner_step = plan_.layout.inner_step(step.input);
    const int64_t row_stride = block.rows > 1 ? block.row_strides[step.input] : 0;
    const char* source = static_cast<const char*>(input.data) + block.offsets[step.input] * step.stored_size;
    const bool repeated = inner_step == 0 && row_stride == 0;
    const bool contiguous = inner_step == 1 && (block.rows == 1 || row_stride == block.length);
    value.repeated = repeated;
    if ((repeated || contiguous) && step.zero_copy) {
      value.data = source;
    } else if (repeated || contiguous) {
      gathered = {};
      step.load(source, inner_step, slot, repeated ? 1 : block.count());
      value.data = slot;
    } else if (row_stride == 0 && gathered.source == source && gathered.rows == block.rows &&
               gathered.length == block.length) {
      value.data = slot;  // gathered for an earlier block
    } else {  // a pattern that repeats across rows (a bias): gather row by row
      gathered = {row_stride == 0 ? source : nullptr, block.rows, block.length};
      for (int64_t row = 0; row < block.rows; ++row) {
        step.load(source + row * row_stride * step.stored_size, inner_step,
                  static_cast<char*>(slot) + row * block.length * step.compute_size, block.length);
      }
      value.data = slot;
    }
  }

  void compute_block(BlockScratch& scratch, const Block& block) const {
    const int64_t count = block.count();
    for (size_t index = 0; index < plan_.steps.size(); ++index) {
      const FusedStep& step = plan_.steps[index];
      if (!step.live) continue;
      BlockValue& value = scratch.values[index];
      void* slot = step.direct_output < 0
                       ? scratch.slot(index)
                       : static_cast<char*>(outputs_[static_cast<size_t>(step.direct_output)].data) +
                             block.position * step.compute_size;
      switch (step.kind) {
        case ACCEL_FUSED_LOAD:
          load_block(step, block, slot, value, scratch.gathered[index]);
          break;
        case ACCEL_FUSED_CONSTANT:
          value = {step.constant, true};
          break;
        default: {
          BlockValue operands[3];
          bool repeated = true;
          for (int k = 0; k < step.operand_count; ++k) {
            operands[k] = scratch.values[step.operands[k]];
            repeated = repeated && operands[k].repeated;
          }
          const int64_t length = repeated ? 1 : count;
          if (step.checks_divisor) check_divisor(index, step.dtype, operands[1], length);
          step.kernel(operands, slot, length);
          if (step.round != nullptr) step.round(slot, length);
          value = {slot, repeated};
          break;
        }
      }
    }
  }

  static void check_divisor(size_t index, AccelDType dtype, BlockValue divisor, int64_t count) {
    const int64_t length = divisor.repeated ? 1 : count;
    bool zero = false;
    if (dtype == ACCEL_DTYPE_I32) {
      const int32_t* values = static_cast<const int32_t*>(divisor.data);
      for (int64_t i = 0; i < length; ++i) zero = zero || values[i] == 0;
    } else {
      const int64_t* values = static_cast<const int64_t*>(divisor.data);
      for (int64_t i = 0; i < length; ++i) zero = zero || values[i] == 0;
    }
    if (zero) invalid("instruction " + std::to_string(index) + ": integer division by zero");
  }

  void store_block(BlockScratch& scratch, const Block& block) const {
    for (size_t j = 0; j < plan_.outputs.size(); ++j) {
      const FusedOutputPlan& output = plan_.outputs[j];
      if (output.rule) continue;
      const HostTensor& tensor = outputs_[j];
      output.store(scratch.values[output.value],
                   static_cast<char*>(tensor.data) + block.position * static_cast<int64_t>(element_size(tensor)),
                   block.count());
    }
  }

  const FusedPlan& plan_;
  std::span<const HostTensor> inputs_;
  std::span<const HostTensor> outputs_;
};

}  // namespace

std::unique_ptr<ReductionRule> make_reduction_rule(AccelOp reduce_op, AccelDType dtype) {
  switch (dtype) {
    case ACCEL_DTYPE_I32: return rule_for<int32_t>(reduce_op);
    case ACCEL_DTYPE_I64: return rule_for<int64_t>(reduce_op);
    default: return rule_for<float>(reduce_op);  // F32, and BF16/F16 reduced in float as the plain op does
  }
}

void fused_elementwise(std::span<const HostTensor> inputs, std::span<const HostTensor> outputs,
                       const AccelFusedElementwiseAttributes& program) {
  const FusedPlan plan = plan_fusion(inputs, outputs, program);
  FusedExecutor(plan, inputs, outputs).run();
}

}  // namespace accel::host_kernels::detail
