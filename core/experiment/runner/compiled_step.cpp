#include "compiled_step.hpp"

#include <accel/function.hpp>

namespace accel::experiment {

bool resolve_jit_compile(JitCompile setting, const std::string& device_type) {
  switch (setting) {
    case JitCompile::kOn: return true;
    case JitCompile::kOff: return false;
    case JitCompile::kAuto: break;
  }
  // TensorFlow always compiles for TPUs. On the CPU and GPU compiled steps
  // are never slower than eager by design (the same kernels, fewer of them,
  // planned memory), so auto compiles there as well; eager stays available
  // with jit_compile: false, for debugging op by op.
  (void)device_type;
  return true;
}

const char* jit_compile_text(JitCompile setting) {
  switch (setting) {
    case JitCompile::kOn: return "true";
    case JitCompile::kOff: return "false";
    case JitCompile::kAuto: break;
  }
  return "auto";
}

CompiledStepResult read_compiled_step(const keras::Model& model, JitCompile setting, int64_t steps_run) {
  CompiledStepResult result;
  result.setting = jit_compile_text(setting);
  result.jit_compile = model.jit_compile();
  if (!result.jit_compile) return result;
  const Function* train_function = model.train_function();
  if (train_function == nullptr) {
    train_function = model.replica_train_function(0);
    result.per_replica = train_function != nullptr;
  }
  if (train_function == nullptr) {
    if (steps_run > 0) result.eager_reason = "the model made no compiled train step";
    return result;
  }
  const FunctionStatistics statistics = train_function->statistics();
  result.eager_reason = statistics.eager_reason;
  result.traces = statistics.traces;
  result.replays = statistics.replays;
  result.eager_calls = statistics.eager_calls;
  result.traced_ops = statistics.traced_ops;
  result.compiled_ops = statistics.compiled_ops;
  result.fusions = statistics.fusions;
  result.ops_fused = statistics.ops_fused;
  result.fusion_bytes_saved = static_cast<int64_t>(statistics.fusion_bytes_saved);
  result.eager_peak_bytes = static_cast<int64_t>(statistics.eager_peak_bytes);
  result.planned_peak_bytes = static_cast<int64_t>(statistics.planned_peak_bytes);
  result.remat = remat_policy_name(model.remat());
  result.ops_recomputed = statistics.ops_recomputed;
  result.recorded_nodes = statistics.recorded_nodes;
  result.recorded_runs = statistics.recorded_runs;
  result.recorded_replays = statistics.recorded_replays;
  result.recording_reason = statistics.recording_reason;
  return result;
}

}  // namespace accel::experiment
