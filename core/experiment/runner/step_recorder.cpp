#include "step_recorder.hpp"

#include "device_setup.hpp"

#include "emulator_totals.hpp"

#include <accel/keras/model.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace accel::experiment {
namespace {

double mxu_utilization_of(const profiler::OpRecord& record) {
  if (record.detail_json.empty()) return record.utilization;
  const nlohmann::json detail = nlohmann::json::parse(record.detail_json, nullptr, false);
  if (detail.is_object() && detail.contains("mxu_utilization") && detail["mxu_utilization"].is_number()) {
    return detail["mxu_utilization"].get<double>();
  }
  return record.utilization;
}

}  // namespace

const char* time_source_label(profiler::TimeSource source) {
  switch (source) {
    case profiler::TimeSource::kDevice: return kDeviceEvents;
    case profiler::TimeSource::kSimulated: return kSimulated;
    default: return kMeasuredWall;
  }
}

StepRecorder::StepRecorder(StepRecorderOptions options) : options_(std::move(options)) {}

double StepRecorder::since_start(Clock::time_point at) const {
  return std::chrono::duration<double>(at - train_start_).count();
}

bool StepRecorder::profiling(int64_t step) const {
  return step >= options_.first_profiled_step && step < options_.first_profiled_step + options_.profiled_steps;
}

void StepRecorder::on_train_begin(const keras::Logs&) {
  train_start_ = Clock::now();
  if (options_.emulator_core >= 0) reset_emulator_totals();
}

void StepRecorder::on_epoch_begin(int epoch, const keras::Logs&) {
  epoch_ = epoch;
  steps_in_epoch_ = 0;
  epoch_start_ = Clock::now();
  epoch_start_simulated_.reset();
  if (options_.emulator_core >= 0) {
    if (auto totals = read_emulator_totals(options_.emulator_core)) epoch_start_simulated_ = totals->seconds;
  }
}

void StepRecorder::on_epoch_end(int epoch, keras::Logs& logs) {
  runtime::synchronize();
  const Clock::time_point now = Clock::now();
  EpochRecord record;
  record.epoch = epoch;
  record.steps = steps_in_epoch_;
  record.wall_seconds = std::chrono::duration<double>(now - epoch_start_).count();
  record.logs = logs;
  if (epoch_start_simulated_) {
    if (auto totals = read_emulator_totals(options_.emulator_core)) {
      record.simulated_seconds = totals->seconds - *epoch_start_simulated_;
    }
  }
  trace_.push_back({"host", fmt::format("epoch {}", epoch + 1), "epoch", since_start(epoch_start_),
                    record.wall_seconds, ""});
  epochs_.push_back(std::move(record));
}

void StepRecorder::on_train_batch_begin(int64_t, const keras::Logs&) {
  if (profiling(step_)) profiler::start();
  step_start_ = Clock::now();
  // The emulator's clock around each step, so that the headline can leave out
  // the first step (a compiled run's trace runs the step eagerly besides).
  step_start_simulated_.reset();
  if (options_.emulator_core >= 0) {
    if (auto totals = read_emulator_totals(options_.emulator_core)) step_start_simulated_ = totals->seconds;
  }
}

void StepRecorder::on_train_batch_end(int64_t, const keras::Logs& logs) {
  runtime::synchronize();
  const Clock::time_point now = Clock::now();
  StepRecord record;
  record.step = step_;
  record.epoch = epoch_;
  record.wall_seconds = std::chrono::duration<double>(now - step_start_).count();
  record.logs = logs;
  if (step_start_simulated_) {
    if (auto totals = read_emulator_totals(options_.emulator_core)) {
      record.simulated_seconds = totals->seconds - *step_start_simulated_;
    }
  }
  const double step_start = since_start(step_start_);
  if (profiling(step_)) {
    profiler::stop();
    absorb_profile(profiler::records(), record, step_start);
    ++profiled_done_;
  }
  trace_.push_back({"host", fmt::format("train step {}", step_), "step", step_start, record.wall_seconds,
                    record.device_seconds ? nlohmann::json{{"device_seconds", *record.device_seconds}}.dump() : ""});
  steps_.push_back(std::move(record));
  ++step_;
  ++steps_in_epoch_;
  if (options_.interrupt != nullptr && options_.interrupt->load()) {
    interrupted_ = true;
    model().set_stop_training(true);
  }
}

void StepRecorder::absorb_profile(const std::vector<profiler::OpRecord>& records, StepRecord& step,
                                  double step_start_seconds) {
  double device_seconds = 0;
  bool any_on_device = false;
  for (const profiler::OpRecord& record : records) {
    const std::string source = time_source_label(record.time_source);
    const std::string track = fmt::format("{} ({})", short_device_name(record.device), source);
    // Host-timed ops sit on the profiler's clock, restarted at this step's
    // start; simulated and device-event ops on the device's own timeline.
    const double start = record.time_source == profiler::TimeSource::kWall ? step_start_seconds + record.start_seconds
                                                                           : record.start_seconds;
    nlohmann::json args = {{"flops", record.flops}, {"bytes_accessed", record.bytes_accessed}, {"step", step.step}};
    if (record.cycles != 0) args["cycles"] = record.cycles;
    if (record.utilization != 0) args["utilization"] = record.utilization;
    if (!record.bound.empty()) args["bound"] = record.bound;
    trace_.push_back({track, record.op, record.category, start, record.duration_seconds, args.dump()});

    OpSummary& summary = ops_[{record.device, record.op}];
    if (summary.count == 0) {
      summary.op = record.op;
      summary.category = record.category;
      summary.device = short_device_name(record.device);
      summary.time_source = source;
    }
    const double utilization = mxu_utilization_of(record);
    const double cycles = static_cast<double>(record.cycles);
    if (cycles > 0) {
      summary.mxu_utilization =
          (summary.mxu_utilization * summary.busy_cycles + utilization * cycles) / (summary.busy_cycles + cycles);
      summary.busy_cycles += cycles;
    }
    ++summary.count;
    summary.seconds += record.duration_seconds;
    summary.flops += record.flops;
    summary.bytes += record.bytes_accessed;
    if (record.device == options_.device) {
      device_seconds += record.duration_seconds;
      any_on_device = true;
    }
  }
  if (any_on_device) step.device_seconds = device_seconds;
}

std::vector<OpSummary> StepRecorder::op_summaries() const {
  std::vector<OpSummary> summaries;
  for (const auto& [key, summary] : ops_) summaries.push_back(summary);
  return summaries;
}

}  // namespace accel::experiment
