// save_checkpoint / load_checkpoint: the model's (and optimizer's) variables
// to and from safetensors, matched by name, validated before anything is
// assigned.
#include <accel/error.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/checkpoint.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include "weight_mismatch.hpp"

#include <set>

namespace accel::keras::saving {
namespace {

// A variable with the name it has in the file.
struct NamedVariable {
  std::string stored_name;
  Variable variable;
};

std::vector<NamedVariable> checkpoint_variables(const Model& model, bool include_optimizer, const char* what) {
  if (!model.built()) {
    throw FailedPreconditionError(std::string(what) + ": the model '" + model.name() +
                                  "' has no weights yet; build it (model.build(input_shape)) or call it first");
  }
  std::vector<NamedVariable> variables;
  for (const Variable& weight : model.weights()) variables.push_back({weight.name(), weight});
  if (include_optimizer) {
    for (const Variable& state : model.optimizer().variables()) {
      variables.push_back({kOptimizerPrefix + state.name(), state});
    }
  }
  std::set<std::string> names;
  for (const NamedVariable& named : variables) {
    if (!names.insert(named.stored_name).second) {
      throw InvalidArgumentError(std::string(what) + ": two variables of model '" + model.name() + "' are named '" +
                                 named.stored_name + "'; give the layers distinct names");
    }
  }
  return variables;
}

}  // namespace

void save_checkpoint(const Model& model, const std::string& path, const SaveCheckpointOptions& options) {
  SafetensorsContents contents;
  contents.metadata = options.metadata;
  contents.metadata.emplace("format", "accel");
  for (const NamedVariable& named : checkpoint_variables(model, options.include_optimizer, "save")) {
    contents.tensors.push_back(stored_tensor(named.stored_name, named.variable.value()));
  }
  write_safetensors_file(path, contents);
}

std::map<std::string, std::string> load_checkpoint(Model& model, const std::string& path,
                                                   const LoadCheckpointOptions& options) {
  const SafetensorsContents contents = read_safetensors_file(path);
  // The slots exist only after the first update unless built now.
  if (options.include_optimizer) model.optimizer().build(model.trainable_weights());
  const std::vector<NamedVariable> variables = checkpoint_variables(model, options.include_optimizer, "load");

  WeightMismatchReport report;
  std::vector<std::pair<const StoredTensor*, Variable>> assignments;
  std::set<std::string> expected_names;
  for (const NamedVariable& named : variables) {
    expected_names.insert(named.stored_name);
    const StoredTensor* stored = contents.find(named.stored_name);
    if (stored == nullptr) {
      report.missing(named.stored_name);
    } else if (stored->shape != named.variable.shape() || stored->dtype != named.variable.dtype()) {
      report.mismatched(named.stored_name, stored->dtype, stored->shape, named.variable.dtype(),
                        named.variable.shape());
    } else {
      assignments.emplace_back(stored, named.variable);
    }
  }
  for (const StoredTensor& stored : contents.tensors) {
    const bool optimizer_entry = stored.name.rfind(kOptimizerPrefix, 0) == 0;
    if (optimizer_entry && !options.include_optimizer) continue;
    if (!expected_names.contains(stored.name)) report.unexpected(stored.name);
  }
  report.raise_or_warn(path, model.name(), options.skip_mismatch);
  for (auto& [stored, variable] : assignments) {
    variable.assign(Tensor::from_host(stored->bytes.data(), stored->shape, stored->dtype, variable.device()));
  }
  return contents.metadata;
}

}  // namespace accel::keras::saving
