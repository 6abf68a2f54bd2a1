// The figures that answer "how fast is each run, and how does it compare":
// per run the time per training step and per epoch, the throughput, the
// final accuracy and the ratio to the first run, each with the clock it
// came from. Computed from RunResult only, so every report agrees.
#pragma once

#include <accel/experiment/run_results.hpp>

#include <optional>
#include <string>
#include <vector>

namespace accel::experiment {

struct HeadlineRow {
  std::string run;
  std::string device;
  RunStatus status = RunStatus::kNotRun;
  std::string reason;
  // The run's own clock: simulated for the emulator, measured wall otherwise.
  std::string time_source;
  std::optional<double> step_seconds;     // median over the steps after the first
  std::optional<double> epoch_seconds;    // training time / epochs run
  std::optional<double> examples_per_second;
  std::optional<double> measured_step_seconds;  // host wall, always (the emulator's own speed)
  std::optional<double> final_accuracy;   // test accuracy, else the last epoch's
  std::string accuracy_source;            // "test" or "train (last epoch)"
  std::optional<double> final_loss;
  std::optional<double> ratio_to_first;   // step_seconds / the first completed run's
  std::optional<double> hbm_bytes_per_step;  // emulator runs: HBM traffic of one training step
  // Emulator runs whose preset has energy figures: joules of one training
  // step, every core of the emulated system (the training's energy / steps).
  std::optional<double> energy_joules_per_step;
};

std::vector<HeadlineRow> headline_rows(const ExperimentResults& results);

// Median of the measured step wall times after the first step (the first
// builds weights and warms caches); all steps when there is only one.
std::optional<double> median_step_wall_seconds(const RunResult& run);

// "12.3 ms", "1.52 s", "850 us": a duration with a unit chosen for it.
std::string format_seconds(double seconds);
// "1.23e+04": three significant digits.
std::string format_number(double value);
// "2.5 GB", "800 kB" (powers of 1000).
std::string format_bytes(double bytes);
// "1.52 J", "12.3 mJ", "850 uJ": an energy with a unit chosen for it.
std::string format_joules(double joules);

}  // namespace accel::experiment
