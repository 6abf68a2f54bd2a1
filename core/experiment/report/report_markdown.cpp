#include <accel/experiment/headline.hpp>
#include <accel/experiment/report_markdown.hpp>

#include "compiled_step_report.hpp"
#include "report_figures.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::experiment {
namespace {

std::string or_dash(const std::optional<double>& value, std::string (*format)(double)) {
  return value ? format(*value) : "—";
}

std::string percent(double fraction) { return fmt::format("{:.2f} %", fraction * 100); }
std::string ratio(double value) { return fmt::format("{:.3g}x", value); }
std::string rate(double value) { return format_number(value); }

std::string headline_table(const std::vector<HeadlineRow>& headline) {
  // The energy column only when a run has energy (an emulator preset with energy figures).
  const bool energy = std::any_of(headline.begin(), headline.end(),
                                  [](const HeadlineRow& row) { return row.energy_joules_per_step.has_value(); });
  std::string text = fmt::format(
      "| run | device | clock | time / step |{} time / epoch | throughput (examples/s) | final accuracy | ratio to first run "
      "| measured wall / step |\n|---|---|---|---|{}---|---|---|---|---|\n",
      energy ? " energy / step |" : "", energy ? "---|" : "");
  for (const HeadlineRow& row : headline) {
    if (row.status == RunStatus::kSkipped || row.status == RunStatus::kNotRun ||
        (row.status == RunStatus::kFailed && !row.step_seconds)) {
      text += fmt::format("| {} | {} | — | {} |{} | | | | |\n", row.run, row.device,
                          fmt::format("**{}**: {}", run_status_name(row.status), row.reason), energy ? " |" : "");
      continue;
    }
    std::string accuracy = row.final_accuracy ? fmt::format("{} ({})", percent(*row.final_accuracy), row.accuracy_source) : "—";
    std::string name = row.status == RunStatus::kInterrupted ? row.run + " (interrupted)" : row.run;
    const std::string energy_cell = energy ? fmt::format(" {} |", or_dash(row.energy_joules_per_step, format_joules)) : "";
    text += fmt::format("| {} | {} | {} | {} |{} {} | {} | {} | {} | {} |\n", name, row.device, row.time_source,
                        or_dash(row.step_seconds, format_seconds), energy_cell, or_dash(row.epoch_seconds, format_seconds),
                        or_dash(row.examples_per_second, rate), accuracy, or_dash(row.ratio_to_first, ratio),
                        or_dash(row.measured_step_seconds, format_seconds));
  }
  return text;
}

// The emulator's energy: per step beside the simulated time per step, and its parts.
std::string energy_line(const RunResult& run) {
  if (!run.emulator_energy) return "- emulator energy: n/a (the preset has no energy figures; docs/tpu-emulator.md, \"Energy\")\n";
  const TpuEnergy& energy = *run.emulator_energy;
  const double steps = static_cast<double>(std::max<size_t>(1, run.steps.size()));
  auto part = [](double joules, bool missing) { return missing ? std::string("n/a (no figure)") : format_joules(joules); };
  return fmt::format(
      "- emulator energy (training, every core of the emulated system): {} = {} per step beside {} simulated per step; "
      "MACs {}, SRAM {}, HBM {}, vector unit {}, links {}\n",
      format_joules(energy.total_j), format_joules(energy.total_j / steps), format_seconds(run.emulator->seconds / steps),
      format_joules(energy.mac_j), format_joules(energy.sram_j), format_joules(energy.hbm_j),
      part(energy.vector_j, energy.vector_missing), part(energy.link_j, energy.link_missing));
}

std::string distribution_details(const DistributionResult& distribution, const RunResult& run) {
  std::string devices;
  for (const std::string& device : distribution.replica_devices) devices += (devices.empty() ? "`" : ", `") + device + "`";
  std::string text = fmt::format("- strategy: {}, {} replicas in sync", distribution.strategy, distribution.replicas_in_sync);
  if (distribution.workers > 1) {
    text += fmt::format(" over {} workers (these results: worker {}, the chief)", distribution.workers, distribution.worker_index);
  }
  text += fmt::format("; this worker's replicas on {}; gradients all-reduced by {}\n", devices, distribution.cross_device_ops);
  if (distribution.all_reduce_seconds_per_step) {
    const std::optional<double> step = run.emulator && !run.steps.empty()
                                           ? std::optional<double>(run.emulator->seconds / static_cast<double>(run.steps.size()))
                                           : std::nullopt;
    text += fmt::format("- gradient all-reduce over the emulated interconnect (simulated): {} per step{}, {} of gradients\n",
                        format_seconds(*distribution.all_reduce_seconds_per_step),
                        step ? fmt::format(" ({} of the simulated step)", percent(*distribution.all_reduce_seconds_per_step / *step)) : "",
                        format_bytes(distribution.all_reduce_bytes_per_step.value_or(0)));
  }
  return text;
}

std::string size_text(const std::vector<int64_t>& size) {
  std::string text;
  for (int64_t dimension : size) text += (text.empty() ? "" : "x") + std::to_string(dimension);
  return text;
}

std::string benchmark_details(const RunResult& run) {
  std::string text = "\n| op | size | dtype | clock | time per op | FLOP/s | of peak | measured wall per op |\n"
                     "|---|---|---|---|---|---|---|---|\n";
  for (const BenchmarkPoint& point : run.benchmark) {
    const std::optional<double> flops_per_second =
        point.seconds > 0 ? std::optional<double>(point.flops / point.seconds) : std::nullopt;
    const std::string of_peak = flops_per_second && run.peak.peak_flops_per_second
                                    ? percent(*flops_per_second / *run.peak.peak_flops_per_second)
                                    : "—";
    text += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", point.op, size_text(point.size), point.dtype,
                        point.time_source, format_seconds(point.seconds), or_dash(flops_per_second, rate), of_peak,
                        format_seconds(point.wall_seconds));
  }
  return text;
}

std::string run_details(const RunResult& run) {
  std::string text = fmt::format("### {}\n\n", run.name);
  if (!run.description.empty()) text += run.description + "\n\n";
  text += fmt::format("- status: **{}**{}\n", run_status_name(run.status), run.reason.empty() ? "" : " — " + run.reason);
  text += fmt::format("- device: `{}`{}\n", run.device, run.device_description.empty() ? "" : " (" + run.device_description + ")");
  if (run.status == RunStatus::kSkipped || run.status == RunStatus::kNotRun) return text + "\n";
  if (!run.benchmark.empty()) {
    text += fmt::format("- op benchmark, medians of {} timed repetitions per size; measured wall: whole run {}\n",
                        run.benchmark.front().repeats, format_seconds(run.total_wall_seconds));
    for (const std::string& note : run.notes) text += "- note: " + note + "\n";
    return text + benchmark_details(run) + "\n";
  }
  if (run.distribution) text += distribution_details(*run.distribution, run);
  text += fmt::format("- batch {}, {} steps per epoch, {} of {} epochs, {} steps run{}\n", run.batch_size, run.steps_per_epoch,
                      run.epochs.size(), run.epochs_planned, run.steps.size(),
                      run.dtype_policy.empty() ? "" : ", dtype policy " + run.dtype_policy);
  text += fmt::format("- measured wall: whole run {}, fit {}, evaluate {} ({} examples)\n", format_seconds(run.total_wall_seconds),
                      format_seconds(run.fit_wall_seconds), format_seconds(run.evaluation_wall_seconds), run.evaluation_examples);
  text += compiled_step_line(run);
  for (const auto& [name, value] : run.evaluation) text += fmt::format("- test {}: {}\n", name, format_number(value));
  if (run.held_out_unigram_entropy) {
    text += fmt::format("- held-out unigram entropy: {} nats (the loss of a model that knows only how often each byte "
                        "occurs; below it, the model has learned context)\n",
                        format_number(*run.held_out_unigram_entropy));
  }
  if (run.emulator) {
    const EmulatorTotals& totals = *run.emulator;
    text += fmt::format(
        "- emulator totals (training): {} ops, {} cycles at {} Hz = {} simulated, HBM traffic {}, MXU utilization {}, "
        "stall cycles {}\n",
        totals.ops, totals.cycles, format_number(totals.clock_hz), format_seconds(totals.seconds),
        format_bytes(static_cast<double>(totals.hbm_bytes)), percent(totals.mxu_utilization), totals.stall_cycles);
    text += energy_line(run);
  }
  text += fmt::format("- roofline: peak {} FLOP/s, bandwidth {} bytes/s ({})\n",
                      run.peak.peak_flops_per_second ? format_number(*run.peak.peak_flops_per_second) : "unknown",
                      run.peak.bandwidth_bytes_per_second ? format_number(*run.peak.bandwidth_bytes_per_second) : "unknown",
                      run.peak.source.empty() ? "unknown" : run.peak.source);
  text += fmt::format("- profiled: steps {} to {} ({} steps; op figures below are per profiled step)\n",
                      run.profiled_first_step, run.profiled_first_step + run.profiled_steps - 1, run.profiled_steps);
  for (const std::string& note : run.notes) text += "- note: " + note + "\n";

  const auto categories = category_seconds_per_step(run);
  if (!categories.empty()) {
    text += "\n| op category | time per step |\n|---|---|\n";
    for (const auto& [category, seconds] : categories) text += fmt::format("| {} | {} |\n", category, format_seconds(seconds));
  }
  const auto emulator_ops = emulator_op_rows(run);
  if (!emulator_ops.empty()) {
    text += "\n| op (emulator) | ops per step | simulated time per step | MXU utilization | HBM traffic per step | FLOPs per step |\n"
            "|---|---|---|---|---|---|\n";
    for (const EmulatorOpRow& row : emulator_ops) {
      text += fmt::format("| {} | {} | {} | {} | {} | {} |\n", row.op, format_number(row.count_per_step),
                          format_seconds(row.simulated_seconds_per_step), percent(row.mxu_utilization),
                          format_bytes(row.hbm_bytes_per_step), format_number(row.flops_per_step));
    }
  }
  return text + "\n";
}

}  // namespace

std::string report_markdown(const ExperimentResults& results) {
  std::string text = fmt::format("# {}\n\n", results.experiment);
  if (!results.description.empty()) text += results.description + "\n\n";
  text += fmt::format("Experiment file `{}`, started {}.{}\n\n", results.source_file, results.started_at,
                      results.interrupted ? " **Interrupted (Ctrl-C): this report is partial.**" : "");
  if (!results.overrides.empty()) {
    text += "Overrides:";
    for (const std::string& override_text : results.overrides) text += " `--set " + override_text + "`";
    text += "\n\n";
  }
  const std::vector<HeadlineRow> headline = headline_rows(results);
  text += "## Headline\n\n" + headline_table(headline) +
          "\n*clock*: which clock the run's step, epoch and throughput figures come from — `simulated` is the TPU "
          "emulator's timeline (cycles / clock), `measured wall` is the host's clock around each step. *time / step* "
          "is the median over the steps after the first (wall) or the simulated training time / steps; *time / epoch* "
          "is the training time / epochs; *ratio to first run* divides a run's time per step by the first run's; "
          "*measured wall / step* is always the host's clock (for the emulator: how long emulating took). For an op "
          "benchmark run, *time / step* is the time per op of its largest size.";
  if (std::any_of(headline.begin(), headline.end(), [](const HeadlineRow& row) { return row.energy_joules_per_step.has_value(); })) {
    text += " *energy / step* (emulator runs whose preset has energy figures): the training's dynamic energy over every "
            "core of the emulated system / steps, from published energies per operation (docs/tpu-emulator.md, "
            "\"Energy\").";
  }
  text += "\n\n";
  text += compiled_steps_section(results, headline);
  bool any_skipped = false;
  for (const RunResult& run : results.runs) {
    if (run.status != RunStatus::kSkipped && run.status != RunStatus::kFailed && run.status != RunStatus::kNotRun) continue;
    if (!any_skipped) text += "## Runs not completed\n\n";
    any_skipped = true;
    text += fmt::format("- **{}** ({}): {}: {}\n", run.name, run.device, run_status_name(run.status), run.reason);
  }
  if (any_skipped) text += "\n";
  text += "## Runs\n\n";
  for (const RunResult& run : results.runs) text += run_details(run);
  text += "## Files\n\n- `results.json`: every figure with its unit (the `units` table)\n"
          "- `metrics.csv`: one row per step and per epoch of every run\n"
          "- `trace.json`: Chrome trace events (open in https://ui.perfetto.dev or chrome://tracing): host steps, "
          "device ops of the profiled steps, the emulator's simulated timeline\n"
          "- `report.html`: this report with plots\n";
  return text;
}

}  // namespace accel::experiment
