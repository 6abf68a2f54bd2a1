#include "compiled_step_report.hpp"

#include <fmt/format.h>

namespace accel::experiment {
namespace {

std::string bytes(int64_t value) { return format_bytes(static_cast<double>(value)); }

// The compiled graph in a few words: "31 ops -> 22 (9 fused into 4 kernels, 1.2 MB intermediates saved)".
std::string graph_summary(const CompiledStepResult& step) {
  return fmt::format("{} ops -> {} ({} fused into {} kernel{}, {} intermediates saved)", step.traced_ops,
                     step.compiled_ops, step.ops_fused, step.fusions, step.fusions == 1 ? "" : "s",
                     bytes(step.fusion_bytes_saved));
}

std::string memory_summary(const CompiledStepResult& step) {
  std::string text = fmt::format("{} planned vs {} eager", bytes(step.planned_peak_bytes), bytes(step.eager_peak_bytes));
  if (step.remat != "none") text += fmt::format(" (remat {}: {} ops recomputed)", step.remat, step.ops_recomputed);
  return text;
}

// How the step ran, in a table cell or a list item.
std::string how_it_ran(const CompiledStepResult& step) {
  if (!step.jit_compile) return "eager";
  if (!step.eager_reason.empty()) return "**eager fallback**: " + step.eager_reason;
  if (step.replays == 0) return "compiled, never replayed";
  if (step.per_replica) return "compiled per replica (forward and backward; the all-reduce and the update run eagerly)";
  return "compiled";
}

std::string table_cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// Runs on the same emulated hardware with the same batch, one eager and one compiled.
bool comparable(const RunResult& eager, const RunResult& compiled) {
  return eager.device_type == compiled.device_type && eager.tpu_system_json == compiled.tpu_system_json &&
         eager.batch_size == compiled.batch_size;
}

}  // namespace

std::string compiled_step_line(const RunResult& run) {
  if (!run.compiled_step) return "";
  const CompiledStepResult& step = *run.compiled_step;
  std::string text = fmt::format("- train step (jit_compile: {}): {}", step.setting, how_it_ran(step));
  if (step.jit_compile && step.traces > 0) {
    text += fmt::format(", {}; peak step memory {}; {} trace{}, {} replays, {} eager calls", graph_summary(step),
                        memory_summary(step), step.traces, step.traces == 1 ? "" : "s", step.replays, step.eager_calls);

    if (step.recorded_runs > 0) {
      text += fmt::format("; {} ops replayed as {} device recording{} (CUDA graphs on a GPU), {} replays",
                          step.recorded_nodes, step.recorded_runs, step.recorded_runs == 1 ? "" : "s",
                          step.recorded_replays);
    }
    if (!step.recording_reason.empty()) text += "; not recorded: " + step.recording_reason;
  }
  return text + "\n";
}

std::string compiled_steps_section(const ExperimentResults& results, const std::vector<HeadlineRow>& headline) {
  std::string table;
  for (size_t index = 0; index < results.runs.size(); ++index) {
    const RunResult& run = results.runs[index];
    if (!run.compiled_step) continue;
    const CompiledStepResult& step = *run.compiled_step;
    const bool has_graph = step.jit_compile && step.traces > 0;
    const std::optional<double>& hbm = headline[index].hbm_bytes_per_step;
    table += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", run.name, step.setting, table_cell(how_it_ran(step)),
                         has_graph ? fmt::format("{} -> {}", step.traced_ops, step.compiled_ops) : "—",
                         has_graph ? fmt::format("{} -> {}", step.ops_fused, step.fusions) : "—",
                         has_graph ? bytes(step.fusion_bytes_saved) : "—", has_graph ? memory_summary(step) : "—",
                         hbm ? format_bytes(*hbm) : "—");
  }
  if (table.empty()) return "";
  std::string text =
      "## Compiled steps\n\n"
      "| run | jit_compile | train step | device ops traced -> compiled | ops fused -> kernels | intermediates saved "
      "per step | peak step memory | HBM traffic per step (emulator) |\n|---|---|---|---|---|---|---|---|\n" +
      table;
  // Eager vs compiled on the same emulated hardware: what fusion and on-chip
  // residency save in HBM traffic, the TPU's usual bottleneck.
  std::string ratios;
  for (size_t eager = 0; eager < results.runs.size(); ++eager) {
    const RunResult& eager_run = results.runs[eager];
    if (!eager_run.compiled_step || eager_run.compiled_step->jit_compile || !headline[eager].hbm_bytes_per_step) continue;
    for (size_t compiled = 0; compiled < results.runs.size(); ++compiled) {
      const RunResult& compiled_run = results.runs[compiled];
      const std::optional<double>& compiled_bytes = headline[compiled].hbm_bytes_per_step;
      if (!compiled_run.compiled_step || !compiled_run.compiled_step->ran_compiled() || !compiled_bytes ||
          *compiled_bytes <= 0 || !comparable(eager_run, compiled_run)) {
        continue;
      }
      const double eager_bytes = *headline[eager].hbm_bytes_per_step;
      ratios += fmt::format("- HBM traffic per training step: `{}` (eager) {} vs `{}` (compiled) {}: eager / compiled = {:.3g}x\n",
                            eager_run.name, format_bytes(eager_bytes), compiled_run.name, format_bytes(*compiled_bytes),
                            eager_bytes / *compiled_bytes);
    }
  }
  text += "\n*train step*: how fit's steps ran (training.jit_compile; auto compiles everywhere). *ops fused -> kernels*: "
          "ops replaced by fused kernels and how many kernels replaced them. *peak step memory*: the step's own tensors "
          "at their peak, as buffer planning places them vs as eager dispatch holds them. *HBM traffic per step*: the "
          "emulator's HBM bytes of one training step (the profiled steps, after the first).\n";
  if (!ratios.empty()) text += "\n" + ratios;
  return text + "\n";
}

}  // namespace accel::experiment
