#include "backpropagation.hpp"

#include <accel/autodiff/gradient_registry.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace accel::autodiff::detail {
namespace {

// The ids of every tensor that depends on a source: the sources themselves and,
// in execution order, the outputs of each op reading one. Only these carry
// gradients worth computing; everything else on the tape is skipped.
std::unordered_set<uint64_t> ids_depending_on_sources(std::span<const TapeEntry> entries,
                                                      const std::vector<Tensor>& sources) {
  std::unordered_set<uint64_t> dependent;
  for (const Tensor& source : sources) dependent.insert(source.id());
  for (const TapeEntry& entry : entries) {
    bool reads_dependent = false;
    for (const Tensor& input : entry.op.inputs()) reads_dependent |= dependent.contains(input.id());
    if (!reads_dependent) continue;
    for (const Tensor& output : entry.op.outputs()) dependent.insert(output.id());
  }
  return dependent;
}

class GradientAccumulator {
 public:
  void add(const Tensor& tensor, const Tensor& gradient) {
    auto [slot, inserted] = sums_.try_emplace(tensor.id(), gradient);
    if (!inserted) slot->second = ops::add(slot->second, gradient);
  }
  const Tensor* find(uint64_t id) const {
    auto found = sums_.find(id);
    return found == sums_.end() ? nullptr : &found->second;
  }

 private:
  std::unordered_map<uint64_t, Tensor> sums_;
};

void check_gradient_shape(const GradientRegistry& registry, const RecordedOp& op, size_t input,
                          const Tensor& gradient) {
  const Tensor& operand = op.inputs()[input];
  if (gradient.shape() != operand.shape()) {
    throw InternalError("the gradient of " + registry.op_name(op.op()) + " for input " +
                        std::to_string(input) + " has shape " + gradient.shape().to_string() +
                        ", expected the input's shape " + operand.shape().to_string());
  }
}

}  // namespace

std::vector<Tensor> backpropagate(std::span<const TapeEntry> entries,
                                  const std::vector<Tensor>& targets,
                                  const std::vector<Tensor>& output_gradients,
                                  const std::vector<Tensor>& sources,
                                  UnconnectedGradients unconnected_gradients) {
  const GradientRegistry& registry = GradientRegistry::global();
  const std::unordered_set<uint64_t> dependent = ids_depending_on_sources(entries, sources);

  GradientAccumulator gradients;
  for (size_t i = 0; i < targets.size(); ++i) gradients.add(targets[i], output_gradients[i]);

  // Execution order is a topological order, so walking it backwards reaches
  // an op only after every op that consumed its outputs.
  for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry) {
    const RecordedOp& op = entry->op;
    std::vector<bool> needs_input_gradient(op.inputs().size());
    bool needs_any = false;
    for (size_t i = 0; i < op.inputs().size(); ++i) {
      const Tensor& input = op.inputs()[i];
      needs_input_gradient[i] = dependent.contains(input.id()) && is_floating(input.dtype());
      needs_any |= needs_input_gradient[i];
    }
    if (!needs_any) continue;

    std::vector<Tensor> output_gradient_values(op.outputs().size());
    bool has_output_gradient = false;
    for (size_t i = 0; i < op.outputs().size(); ++i) {
      if (const Tensor* gradient = gradients.find(op.outputs()[i].id())) {
        output_gradient_values[i] = *gradient;
        has_output_gradient = true;
      }
    }
    if (!has_output_gradient) continue;

    std::optional<DeviceScope> on_op_device;
    if (entry->device.valid()) on_op_device.emplace(entry->device);
    const accel::detail::StepRegionScope in_region(
        {.layer = entry->region.layer, .backward = true, .block = entry->region.block});
    const GradientContext context(op, output_gradient_values, needs_input_gradient);
    const std::vector<Tensor> input_gradients = registry.gradient_function(op.op())(context);
    if (input_gradients.size() != op.inputs().size()) {
      throw InternalError("the gradient function of " + registry.op_name(op.op()) + " returned " +
                          std::to_string(input_gradients.size()) + " gradients for " +
                          std::to_string(op.inputs().size()) + " inputs");
    }
    for (size_t i = 0; i < input_gradients.size(); ++i) {
      if (!needs_input_gradient[i] || !input_gradients[i].defined()) continue;
      check_gradient_shape(registry, op, i, input_gradients[i]);
      gradients.add(op.inputs()[i], input_gradients[i]);
    }
  }

  std::vector<Tensor> result;
  result.reserve(sources.size());
  for (const Tensor& source : sources) {
    if (const Tensor* gradient = gradients.find(source.id())) {
      result.push_back(*gradient);
    } else if (unconnected_gradients == UnconnectedGradients::kZero) {
      std::optional<DeviceScope> on_source_device;
      if (source.defined()) on_source_device.emplace(source.device());
      result.push_back(ops::zeros(source.shape(), source.dtype()));
    } else {
      result.emplace_back();
    }
  }
  return result;
}

}  // namespace accel::autodiff::detail

