// A Keras callback that records what fit does, step by step: the measured
// wall time and running logs of every step, epoch times and logs, and, for a
// sample of steps, every op the devices reported (profiler records), summed
// per step, aggregated per op and kept as trace spans. It also turns an
// interrupt (Ctrl-C) into model.stop_training after the current step.
#pragma once

#include <accel/experiment/run_results.hpp>
#include <accel/experiment/trace_merge.hpp>
#include <accel/keras/callbacks/callback.hpp>
#include <accel/profiler.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accel::experiment {

struct StepRecorderOptions {
  std::string device;  // the run's logical device, full name
  int64_t first_profiled_step = 1;
  int64_t profiled_steps = 20;
  // Emulator runs: the TPU core whose simulated totals give each epoch's time (-1: none).
  int emulator_core = -1;
  const std::atomic<bool>* interrupt = nullptr;
};

class StepRecorder final : public keras::Callback {
 public:
  explicit StepRecorder(StepRecorderOptions options);

  void on_train_begin(const keras::Logs& logs) override;
  void on_epoch_begin(int epoch, const keras::Logs& logs) override;
  void on_epoch_end(int epoch, keras::Logs& logs) override;
  void on_train_batch_begin(int64_t batch, const keras::Logs& logs) override;
  void on_train_batch_end(int64_t batch, const keras::Logs& logs) override;

  const std::vector<StepRecord>& steps() const { return steps_; }
  const std::vector<EpochRecord>& epochs() const { return epochs_; }
  int64_t profiled_steps_done() const { return profiled_done_; }
  // Per (op, device), over the profiled steps.
  std::vector<OpSummary> op_summaries() const;
  std::vector<TraceSpan> take_trace() { return std::move(trace_); }
  bool interrupted() const { return interrupted_; }

 private:
  using Clock = std::chrono::steady_clock;
  bool profiling(int64_t step) const;
  void absorb_profile(const std::vector<profiler::OpRecord>& records, StepRecord& step, double step_start_seconds);
  double since_start(Clock::time_point at) const;

  StepRecorderOptions options_;
  Clock::time_point train_start_;
  Clock::time_point epoch_start_;
  Clock::time_point step_start_;
  std::optional<double> epoch_start_simulated_;
  std::optional<double> step_start_simulated_;
  int epoch_ = 0;
  int64_t step_ = 0;
  int64_t steps_in_epoch_ = 0;
  int64_t profiled_done_ = 0;
  bool interrupted_ = false;
  std::vector<StepRecord> steps_;
  std::vector<EpochRecord> epochs_;
  std::map<std::pair<std::string, std::string>, OpSummary> ops_;  // (device, op)
  std::vector<TraceSpan> trace_;
};

// "wall", "device events" or "simulated" label of a profiler time source.
const char* time_source_label(profiler::TimeSource source);

}  // namespace accel::experiment
