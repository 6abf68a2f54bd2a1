#include <accel/autodiff/gradient_tape.hpp>

#include <accel/autodiff/variable_autocast.hpp>

#include <accel/autodiff/gradient_registry.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include "active_tapes.hpp"
#include "backpropagation.hpp"
#include "runtime/op_observer.hpp"
#include "runtime/step_region.hpp"

#include <optional>
#include <unordered_set>

namespace accel {

// Watches the ops of its thread and keeps those that read a watched tensor
// (or a tensor computed from one), which is all backpropagation needs.
class GradientTape::Recorder final : public detail::OpObserver,
                                     public autodiff::detail::VariableReadListener {
 public:
  explicit Recorder(GradientTapeOptions options) : options_(options) {
    detail::add_op_observer(this);
    autodiff::detail::add_active_tape(this);
  }
  ~Recorder() override {
    autodiff::detail::remove_active_tape(this);
    detail::remove_op_observer(this);
  }

  void on_op_executed(const detail::ExecutedOp& executed) override {
    if (!recording()) return;
    const auto& registry = autodiff::GradientRegistry::global();
    if (registry.kind(executed.op) == autodiff::GradientRegistry::Kind::kNotDifferentiable) return;
    bool reads_tracked = false;
    for (const Tensor& input : executed.inputs) reads_tracked |= tracked_ids_.contains(input.id());
    if (!reads_tracked) return;

    std::vector<Tensor> inputs(executed.inputs.begin(), executed.inputs.end());
    std::vector<Tensor> outputs(executed.outputs.begin(), executed.outputs.end());
    Device device;
    if (!outputs.empty()) {
      device = outputs.front().device();
    } else if (!inputs.empty()) {
      device = inputs.front().device();
    }
    for (const Tensor& output : outputs) track(output);
    entries_.push_back(autodiff::detail::TapeEntry{
        RecordedOp(executed.op, std::move(inputs), std::move(outputs), executed.attributes),
        device, accel::detail::current_step_region()});
  }

  void on_variable_read(const Variable& variable) override {
    if (recording() && options_.watch_accessed_variables && variable.trainable()) watch(variable);
  }

  void watch(const Tensor& tensor) {
    if (!tensor.defined()) throw InvalidArgumentError("GradientTape::watch: undefined Tensor");
    track(tensor);
  }

  void watch(const Variable& variable) {
    if (!variable.defined()) throw InvalidArgumentError("GradientTape::watch: undefined Variable");
    const Tensor& tensor = variable_tensor(variable);
    track(tensor);
    if (watched_variable_ids_.insert(tensor.id()).second) watched_variables_.push_back(variable);
  }

  std::vector<Tensor> gradient(const std::vector<Tensor>& targets,
                               const std::vector<Tensor>& sources, const GradientOptions& options) {
    if (released_) {
      throw FailedPreconditionError(
          "GradientTape::gradient can only be called once on a non-persistent tape; create the "
          "tape with GradientTapeOptions{.persistent = true} to compute several gradients");
    }
    for (const Tensor& target : targets) {
      if (!target.defined()) throw InvalidArgumentError("GradientTape::gradient: undefined target");
    }
    for (const Tensor& source : sources) {
      if (!source.defined()) throw InvalidArgumentError("GradientTape::gradient: undefined source");
    }
    std::vector<Tensor> result;
    {
      // This tape must not record its own backpropagation; outer tapes do,
      // which is what makes higher-order gradients work.
      PauseGuard not_recording_itself(*this);
      result = autodiff::detail::backpropagate(entries_, targets,
                                               starting_gradients(targets, options), sources,
                                               options.unconnected_gradients);
    }
    if (!options_.persistent) {
      released_ = true;
      entries_.clear();
      entries_.shrink_to_fit();
      tracked_ids_.clear();
    }
    return result;
  }

  void reset() {
    entries_.clear();
    tracked_ids_.clear();
    watched_variables_.clear();
    watched_variable_ids_.clear();
    released_ = false;
  }

  std::vector<Variable> watched_variables() const { return watched_variables_; }
  bool persistent() const noexcept { return options_.persistent; }
  size_t recorded_op_count() const noexcept { return entries_.size(); }

  void pause() { ++pause_depth_; }
  void resume() { --pause_depth_; }

 private:
  bool recording() const {
    return !released_ && pause_depth_ == 0 && !autodiff::detail::recording_suspended();
  }

  void track(const Tensor& tensor) {
    if (is_floating(tensor.dtype())) tracked_ids_.insert(tensor.id());
  }

  // Variable::value() would announce a read (and so re-enter this tape); the
  // stored tensor, not a cast copy a layer's autocast scope would give.
  static Tensor variable_tensor(const Variable& variable) {
    autodiff::detail::RecordingSuspension no_announcement_needed;
    const VariableAutocastScope as_stored(std::nullopt);
    return variable.value();
  }

  struct PauseGuard {
    explicit PauseGuard(Recorder& recorder) : recorder(recorder) { recorder.pause(); }
    ~PauseGuard() { recorder.resume(); }
    Recorder& recorder;
  };

  static std::vector<Tensor> starting_gradients(const std::vector<Tensor>& targets,
                                                const GradientOptions& options) {
    if (options.output_gradients.empty()) {
      std::vector<Tensor> ones;
      for (const Tensor& target : targets) {
        DeviceScope on_target_device(target.device());
        ones.push_back(ops::ones(target.shape(), target.dtype()));
      }
      return ones;
    }
    if (options.output_gradients.size() != targets.size()) {
      throw InvalidArgumentError("GradientTape::gradient: " +
                                 std::to_string(options.output_gradients.size()) +
                                 " output_gradients for " + std::to_string(targets.size()) +
                                 " targets; give one per target or none");
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      if (options.output_gradients[i].shape() != targets[i].shape()) {
        throw InvalidArgumentError("GradientTape::gradient: output_gradients[" + std::to_string(i) +
                                   "] has shape " + options.output_gradients[i].shape().to_string() +
                                   ", expected the target's shape " +
                                   targets[i].shape().to_string());
      }
    }
    return options.output_gradients;
  }

  GradientTapeOptions options_;
  bool released_ = false;
  int pause_depth_ = 0;
  std::vector<autodiff::detail::TapeEntry> entries_;
  std::unordered_set<uint64_t> tracked_ids_;
  std::vector<Variable> watched_variables_;
  std::unordered_set<uint64_t> watched_variable_ids_;
};

GradientTape::GradientTape(GradientTapeOptions options)
    : recorder_(std::make_unique<Recorder>(options)) {}

GradientTape::~GradientTape() = default;

void GradientTape::watch(const Tensor& tensor) { recorder_->watch(tensor); }
void GradientTape::watch(const Variable& variable) { recorder_->watch(variable); }

std::vector<Variable> GradientTape::watched_variables() const {
  return recorder_->watched_variables();
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<Tensor>& sources,
                                           const GradientOptions& options) {
  return recorder_->gradient({target}, sources, options);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target,
                                           const std::vector<Variable>& sources,
                                           const GradientOptions& options) {
  std::vector<Tensor> source_tensors;
  source_tensors.reserve(sources.size());
  {
    // Naming a variable as a source is not a read of it, and its source is the stored tensor.
    autodiff::detail::RecordingSuspension not_a_read;
    const VariableAutocastScope as_stored(std::nullopt);
    for (const Variable& variable : sources) {
      if (!variable.defined()) throw InvalidArgumentError("GradientTape::gradient: undefined Variable");
      source_tensors.push_back(variable.value());
    }
  }
  return recorder_->gradient({target}, source_tensors, options);
}

std::vector<Tensor> GradientTape::gradient(const std::vector<Tensor>& targets,
                                           const std::vector<Tensor>& sources,
                                           const GradientOptions& options) {
  return recorder_->gradient(targets, sources, options);
}

GradientTape::RecordingPause::RecordingPause(GradientTape& tape) : tape_(tape) {
  tape_.recorder_->pause();
}
GradientTape::RecordingPause::~RecordingPause() { tape_.recorder_->resume(); }

void GradientTape::reset() { recorder_->reset(); }
bool GradientTape::persistent() const noexcept { return recorder_->persistent(); }
size_t GradientTape::recorded_op_count() const noexcept { return recorder_->recorded_op_count(); }

}  // namespace accel
