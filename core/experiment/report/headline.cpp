#include <accel/experiment/headline.hpp>

#include "report_figures.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace accel::experiment {
namespace {

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return (lower + upper) / 2;
}

std::optional<double> accuracy_of(const std::map<std::string, double>& logs) {
  for (const char* key : {"accuracy", "sparse_categorical_accuracy", "categorical_accuracy", "binary_accuracy", "acc"}) {
    if (auto found = logs.find(key); found != logs.end()) return found->second;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> median_step_wall_seconds(const RunResult& run) {
  std::vector<double> times;
  for (const StepRecord& step : run.steps) {
    if (step.step > 0 || run.steps.size() == 1) times.push_back(step.wall_seconds);
  }
  return median(std::move(times));
}

std::vector<HeadlineRow> headline_rows(const ExperimentResults& results) {
  std::vector<HeadlineRow> rows;
  std::optional<double> first_step_seconds;
  for (const RunResult& run : results.runs) {
    HeadlineRow row;
    row.run = run.name;
    row.device = run.device;
    row.status = run.status;
    row.reason = run.reason;
    row.measured_step_seconds = median_step_wall_seconds(run);
    const int64_t steps = static_cast<int64_t>(run.steps.size());
    const int epochs_run = static_cast<int>(run.epochs.size());
    if (!run.benchmark.empty()) {
      // An op benchmark: the time per op of its largest size, on the device's clock.
      const BenchmarkPoint& largest = run.benchmark.back();
      row.time_source = largest.time_source;
      if (largest.seconds > 0) row.step_seconds = largest.seconds;
      row.measured_step_seconds = largest.wall_seconds;
    } else if (run.emulator && steps > 0) {
      // The emulator's clock: the mean simulated step after the first (a
      // compiled run's first step also runs its trace eagerly, as the wall
      // clock's median leaves it out), or the whole timeline over the steps.
      row.time_source = kSimulated;
      double after_first = 0;
      int64_t counted = 0;
      for (const StepRecord& step : run.steps) {
        if (step.step == 0 || !step.simulated_seconds) continue;
        after_first += *step.simulated_seconds;
        ++counted;
      }
      row.step_seconds = counted > 0 ? after_first / static_cast<double>(counted)
                                     : run.emulator->seconds / static_cast<double>(steps);
      row.epoch_seconds = run.emulator->seconds / std::max(1, epochs_run);
    } else if (steps > 0) {
      row.time_source = kMeasuredWall;
      row.step_seconds = row.measured_step_seconds;
      double fit_seconds = 0;
      for (const EpochRecord& epoch : run.epochs) fit_seconds += epoch.wall_seconds;
      if (epochs_run > 0) row.epoch_seconds = fit_seconds / epochs_run;
    }
    if (row.step_seconds && *row.step_seconds > 0 && run.batch_size > 0) {
      row.examples_per_second = static_cast<double>(run.batch_size) / *row.step_seconds;
    }
    if (auto test = accuracy_of(run.evaluation)) {
      row.final_accuracy = test;
      row.accuracy_source = "test";
    } else if (!run.epochs.empty()) {
      row.final_accuracy = accuracy_of(run.epochs.back().logs);
      if (row.final_accuracy) row.accuracy_source = "train (last epoch)";
    } else if (!run.steps.empty()) {
      row.final_accuracy = accuracy_of(run.steps.back().logs);
      if (row.final_accuracy) row.accuracy_source = "train (last step)";
    }
    if (auto loss = run.evaluation.find("loss"); loss != run.evaluation.end()) {
      row.final_loss = loss->second;
    } else if (!run.steps.empty() && run.steps.back().logs.count("loss")) {
      row.final_loss = run.steps.back().logs.at("loss");
    }
    row.hbm_bytes_per_step = hbm_bytes_per_step(run);
    if (run.emulator && run.emulator_energy && steps > 0) {
      row.energy_joules_per_step = run.emulator_energy->total_j / static_cast<double>(steps);
    }
    if (row.step_seconds) {
      if (!first_step_seconds) first_step_seconds = row.step_seconds;
      row.ratio_to_first = *row.step_seconds / *first_step_seconds;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string format_seconds(double seconds) {
  const double magnitude = std::fabs(seconds);
  if (magnitude >= 1.0) return fmt::format("{:.3g} s", seconds);
  if (magnitude >= 1e-3) return fmt::format("{:.3g} ms", seconds * 1e3);
  if (magnitude >= 1e-6) return fmt::format("{:.3g} us", seconds * 1e6);
  if (magnitude == 0) return "0 s";
  return fmt::format("{:.3g} ns", seconds * 1e9);
}

std::string format_joules(double joules) {
  const double magnitude = std::fabs(joules);
  if (magnitude >= 1.0 || magnitude == 0) return fmt::format("{:.3g} J", joules);
  if (magnitude >= 1e-3) return fmt::format("{:.3g} mJ", joules * 1e3);
  if (magnitude >= 1e-6) return fmt::format("{:.3g} uJ", joules * 1e6);
  return fmt::format("{:.3g} nJ", joules * 1e9);
}

std::string format_number(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude != 0 && (magnitude >= 1e6 || magnitude < 1e-3)) return fmt::format("{:.3g}", value);
  if (magnitude >= 100) return fmt::format("{:.0f}", value);
  return fmt::format("{:.4g}", value);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  while (std::fabs(bytes) >= 1000 && unit < 5) {
    bytes /= 1000;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, units[unit]);
}

}  // namespace accel::experiment
