#include "optimizer_state.hpp"

#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/log.hpp>
#include <accel/placement.hpp>

#include "../utils/cast_to.hpp"

#include <functional>
#include <memory>
#include <optional>

namespace accel::keras::saving {
namespace {

// One entry of Keras 3's optimizer.variables: what it holds here, read and written.
struct StateEntry {
  std::string what;  // for messages: "iteration", "dense/kernel:0 momentum", ...
  DType dtype;
  Shape shape;
  std::function<Tensor()> read;
  std::function<void(const Tensor&)> write;
};

StateEntry iteration_entry(Optimizer& optimizer) {
  return {"iteration", DType::kInt64, Shape{},
          [&optimizer] { return Tensor::scalar<int64_t>(optimizer.iterations()); },
          [&optimizer](const Tensor& value) { optimizer.set_iterations(value.item<int64_t>()); }};
}

// Keras 3 keeps a constant rate as a variable (a schedule is no variable).
std::optional<StateEntry> learning_rate_entry(Optimizer& optimizer) {
  if (optimizer.has_learning_rate_schedule()) return std::nullopt;
  return StateEntry{"learning_rate", DType::kFloat32, Shape{},
                    [&optimizer] { return Tensor::scalar<float>(static_cast<float>(optimizer.learning_rate())); },
                    [&optimizer](const Tensor& value) { optimizer.set_learning_rate(value.item<float>()); }};
}

StateEntry variable_entry(const std::string& what, Variable variable) {
  return {what, variable.dtype(), variable.shape(), [variable] { return variable.value(); },
          [variable](const Tensor& value) mutable {
            variable.assign(detail::cast_to(value.to(variable.device()), variable.dtype()));
          }};
}

StateEntry slot_entry(const Optimizer& optimizer, const Variable& weight, const std::string& slot,
                      const std::string& keras_slot) {
  return variable_entry(weight.name() + " " + keras_slot, optimizer.slot(weight, slot));
}

void add_base_entries(Optimizer& optimizer, std::vector<StateEntry>& entries) {
  entries.push_back(iteration_entry(optimizer));
  if (std::optional<StateEntry> rate = learning_rate_entry(optimizer)) entries.push_back(std::move(*rate));
}

// Slots in Keras 3's order: per variable (all of a variable's slots together)
// or per slot (every variable's first slot, then every variable's second).
void add_slots_per_variable(const Optimizer& optimizer, const std::vector<Variable>& weights,
                            const std::vector<std::pair<std::string, std::string>>& slots,
                            std::vector<StateEntry>& entries) {
  for (const Variable& weight : weights) {
    for (const auto& [slot, keras_slot] : slots) entries.push_back(slot_entry(optimizer, weight, slot, keras_slot));
  }
}

void add_slots_per_slot(const Optimizer& optimizer, const std::vector<Variable>& weights,
                        const std::vector<std::pair<std::string, std::string>>& slots,
                        std::vector<StateEntry>& entries) {
  for (const auto& [slot, keras_slot] : slots) {
    for (const Variable& weight : weights) entries.push_back(slot_entry(optimizer, weight, slot, keras_slot));
  }
}

// The entries of `optimizer` over `weights` (its slots built), and the group's "name" attribute.
std::vector<StateEntry> state_entries(Optimizer& optimizer, const std::vector<Variable>& weights) {
  std::vector<StateEntry> entries;
  if (auto* scaled = dynamic_cast<LossScaleOptimizer*>(&optimizer)) {
    // Keras 3's LossScaleOptimizer: its own iteration and rate (its
    // properties read the inner optimizer's), step counter and dynamic scale.
    add_base_entries(optimizer, entries);
    for (const Variable& own : scaled->variables()) {
      const std::string& name = own.name();
      if (name.find("step_counter") != std::string::npos || name.find("dynamic_scale") != std::string::npos) {
        entries.push_back(variable_entry(name, own));
      }
    }
    const std::vector<StateEntry> inner = state_entries(*scaled->inner_optimizer(), weights);
    entries.insert(entries.end(), inner.begin(), inner.end());
    return entries;
  }
  add_base_entries(optimizer, entries);
  if (dynamic_cast<Adam*>(&optimizer) != nullptr || dynamic_cast<AdamW*>(&optimizer) != nullptr) {
    add_slots_per_variable(optimizer, weights, {{"m", "momentum"}, {"v", "velocity"}}, entries);
  } else if (const auto* sgd = dynamic_cast<SGD*>(&optimizer)) {
    if (sgd->momentum() != 0.0) add_slots_per_slot(optimizer, weights, {{"momentum", "momentum"}}, entries);
  } else if (const auto* rmsprop = dynamic_cast<RMSprop*>(&optimizer)) {
    std::vector<std::pair<std::string, std::string>> slots{{"rms", "velocity"}};
    if (rmsprop->momentum() > 0) slots.emplace_back("momentum", "momentum");
    if (rmsprop->centered()) slots.emplace_back("mg", "average_gradient");
    add_slots_per_slot(optimizer, weights, slots, entries);
  } else {
    throw UnimplementedError("optimizer '" + optimizer.name() +
                             "' has no Keras 3 layout here (Adam, AdamW, SGD, RMSprop and LossScaleOptimizer have)");
  }
  return entries;
}

std::vector<StateEntry> built_state_entries(const Model& model) {
  const std::vector<Variable> weights = model.trainable_weights();
  model.optimizer().build(weights);
  return state_entries(model.optimizer(), weights);
}

}  // namespace

void write_optimizer_state(const Model& model, Hdf5File& file) {
  if (!model.compiled()) return;
  const std::vector<StateEntry> entries = built_state_entries(model);
  file.create_group("optimizer/vars");
  file.set_string_attribute("optimizer/vars", "name", to_snake_case(model.optimizer().name()));
  for (size_t index = 0; index < entries.size(); ++index) {
    const std::string path = "optimizer/vars/" + std::to_string(index);
    file.write_dataset(path, stored_tensor(path, entries[index].read()));
  }
}

std::function<void()> read_optimizer_state(const Model& model, const Hdf5File& file) {
  if (!file.has_group("optimizer/vars")) return [] {};
  if (!model.compiled()) {
    log::warning(file.source() + ": the optimizer's state is not loaded: model '" + model.name() + "' is not compiled");
    return [] {};
  }
  const std::vector<StateEntry> entries = built_state_entries(model);
  const size_t stored = file.members("optimizer/vars").size();
  if (stored != entries.size()) {
    // Keras 3's rule: a file of an optimizer never built (saved before its
    // first step: iteration and rate only) or of another one is skipped.
    log::warning(file.source() + ": the optimizer's state is not loaded: optimizer/vars holds " +
                 std::to_string(stored) + " variables, optimizer '" + model.optimizer().name() + "' of model '" +
                 model.name() + "' has " + std::to_string(entries.size()) +
                 " (iteration, learning rate and slots in Keras 3's order)");
    return [] {};
  }
  std::vector<StoredTensor> values;
  for (size_t index = 0; index < entries.size(); ++index) {
    const std::string path = "optimizer/vars/" + std::to_string(index);
    if (!file.has_dataset(path)) throw InvalidArgumentError(file.source() + ": " + path + " is missing");
    StoredTensor value = file.read_dataset(path);
    const StateEntry& entry = entries[index];
    const bool dtype_fits = value.dtype == entry.dtype || (is_floating(value.dtype) && is_floating(entry.dtype)) ||
                            (value.dtype == DType::kInt32 && entry.dtype == DType::kInt64);
    if (value.shape != entry.shape || !dtype_fits) {
      throw InvalidArgumentError(file.source() + ": " + path + " is " + std::string(dtype_name(value.dtype)) + " " +
                                 value.shape.to_string() + ", but optimizer '" + model.optimizer().name() + "''s " +
                                 entry.what + " is " + std::string(dtype_name(entry.dtype)) + " " +
                                 entry.shape.to_string());
    }
    values.push_back(std::move(value));
  }
  return [entries, values = std::move(values)] {
    for (size_t index = 0; index < entries.size(); ++index) {
      Tensor value = Tensor::from_host(values[index].bytes.data(), values[index].shape, values[index].dtype,
                                       find_device("/CPU:0"));
      if (value.dtype() != entries[index].dtype) value = detail::cast_to(value, entries[index].dtype);
      entries[index].write(value);
    }
  };
}

}  // namespace accel::keras::saving
