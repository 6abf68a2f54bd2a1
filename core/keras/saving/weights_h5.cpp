// Keras 3's .weights.h5: the model's layers walked as Keras 3's saving_lib
// walks them (a layer's group named after its class, numbered per class in
// model.layers order; nested models recursively), each variable matched to
// its dataset path, then written or validated and assigned.
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/atomic_file.hpp>
#include <accel/keras/saving/weights_h5.hpp>

#include "hdf5_file.hpp"
#include "optimizer_state.hpp"
#include "weight_mismatch.hpp"
#include "../utils/cast_to.hpp"

#include <map>
#include <set>

namespace accel::keras::saving {
namespace {

// A layer whose variables live in sublayers in Keras 3 (accel names them
// "<layer>/<role>/<variable>:0"): the role's attribute name in Keras 3, and
// the variable-free sublayers Keras 3 still gives (empty) groups.
struct CompositeLayer {
  std::map<std::string, std::string> sublayer_of_role;
  std::vector<std::pair<std::string, std::string>> empty_sublayers;  // attribute, its layer name
};

const std::map<std::string, CompositeLayer>& composite_layers() {
  static const std::map<std::string, CompositeLayer> layers{
      {"MultiHeadAttention",
       {{{"query", "query_dense"}, {"key", "key_dense"}, {"value", "value_dense"}, {"attention_output", "output_dense"}},
        {{"_softmax", "softmax"}, {"_dropout_layer", "dropout"}}}},
  };
  return layers;
}

// Where each variable and group of a model goes in the file.
struct FileLayout {
  std::vector<std::pair<std::string, std::string>> named_groups;  // path, its "name" attribute
  std::vector<std::pair<std::string, Variable>> variables;        // dataset path, variable
  std::set<std::string> layer_groups;                             // every layer's group
};

std::string join_path(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "/" + name;
}

// "dense/kernel:0" of layer "dense" -> "kernel"; "mha/query/bias:0" -> "query/bias".
std::string relative_variable_name(const Layer& layer, const Variable& variable) {
  std::string name = variable.name();
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
  const std::string prefix = layer.name() + "/";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return name;
}

void describe_layer(const Layer& layer, const std::string& path, FileLayout& layout) {
  layout.layer_groups.insert(path);
  layout.named_groups.emplace_back(path + "/vars", layer.name());
  const auto composite = composite_layers().find(layer.class_name());
  if (composite == composite_layers().end()) {
    int index = 0;
    for (const Variable& weight : layer.weights()) {
      layout.variables.emplace_back(path + "/vars/" + std::to_string(index++), weight);
    }
    return;
  }
  std::map<std::string, int> next_index_of_role;
  std::set<std::string> roles_seen;
  for (const Variable& weight : layer.weights()) {
    const std::string relative = relative_variable_name(layer, weight);
    const std::string role = relative.substr(0, relative.find('/'));
    const auto sublayer = composite->second.sublayer_of_role.find(role);
    if (sublayer == composite->second.sublayer_of_role.end()) {
      throw InternalError("Keras 3 weights file: no sublayer known for variable '" + weight.name() + "' of " +
                          layer.class_name() + " '" + layer.name() + "'");
    }
    const std::string sublayer_path = path + "/" + sublayer->second;
    if (roles_seen.insert(role).second) layout.named_groups.emplace_back(sublayer_path + "/vars", role);
    layout.variables.emplace_back(sublayer_path + "/vars/" + std::to_string(next_index_of_role[role]++), weight);
  }
  for (const auto& [attribute, name] : composite->second.empty_sublayers) {
    layout.named_groups.emplace_back(path + "/" + attribute + "/vars", name);
  }
}

void describe_model(const Model& model, const std::string& prefix, FileLayout& layout) {
  // Keras 3's Sequential.layers leaves its InputLayer out; Functional's has it.
  const bool sequential = model.class_name() == "Sequential";
  std::map<std::string, int> uses_of_class;
  for (const std::shared_ptr<Layer>& layer : model.layers()) {
    if (sequential && layer->class_name() == "InputLayer") continue;
    std::string group = to_snake_case(layer->class_name());
    const int use = uses_of_class[group]++;
    if (use > 0) group += "_" + std::to_string(use);
    const std::string path = join_path(prefix, "layers/" + group);
    if (const auto* nested = dynamic_cast<const Model*>(layer.get())) {
      layout.layer_groups.insert(path);
      describe_model(*nested, path, layout);
    } else {
      describe_layer(*layer, path, layout);
    }
  }
  layout.named_groups.emplace_back(join_path(prefix, "vars"), model.name());
}

FileLayout layout_of(const Model& model, const char* what) {
  if (!model.built()) {
    throw FailedPreconditionError(std::string(what) + ": the model '" + model.name() +
                                  "' has no weights yet; build it (model.build(input_shape)) or call it first");
  }
  FileLayout layout;
  describe_model(model, "", layout);
  return layout;
}

// The layer groups the file has below `prefix`/layers, recursing into nested models.
void collect_layer_groups(const Hdf5File& file, const std::string& prefix, std::set<std::string>& groups) {
  const std::string layers = join_path(prefix, "layers");
  if (!file.has_group(layers)) return;
  for (const std::string& member : file.members(layers)) {
    const std::string path = layers + "/" + member;
    groups.insert(path);
    collect_layer_groups(file, path, groups);
  }
}

void load_from(Model& model, const Hdf5File& file, bool skip_mismatch) {
  const FileLayout layout = layout_of(model, "load_weights");
  if (!file.has_group("layers") && !file.has_group("vars")) {
    throw InvalidArgumentError(file.source() +
                               ": not a Keras weights file (no 'layers' or 'vars' group at its root); expected a "
                               "file written by Keras 3's save_weights (.weights.h5) or inside a .keras archive");
  }
  WeightMismatchReport report;
  std::vector<std::pair<StoredTensor, Variable>> assignments;
  std::set<std::string> expected_datasets;
  for (const auto& [path, variable] : layout.variables) {
    expected_datasets.insert(path);
    if (!file.has_dataset(path)) {
      report.missing(path);
      continue;
    }
    StoredTensor stored = file.read_dataset(path);
    // Float weights load into float variables of another width, cast, as
    // Keras's variable.assign casts (float32 weights into a "bfloat16" model).
    const bool dtypes_fit = stored.dtype == variable.dtype() || (is_floating(stored.dtype) && is_floating(variable.dtype()));
    if (stored.shape != variable.shape() || !dtypes_fit) {
      report.mismatched(path, stored.dtype, stored.shape, variable.dtype(), variable.shape());
    } else {
      assignments.emplace_back(std::move(stored), variable);
    }
  }
  // Layers of the file the model does not have, and variables beyond a layer's own.
  std::set<std::string> file_layer_groups;
  collect_layer_groups(file, "", file_layer_groups);
  for (const std::string& group : file_layer_groups) {
    if (!layout.layer_groups.contains(group)) report.unexpected(group);
  }
  for (const auto& [vars_group, name] : layout.named_groups) {
    if (!file.has_group(vars_group)) continue;
    for (const std::string& member : file.members(vars_group)) {
      const std::string path = vars_group + "/" + member;
      if (!expected_datasets.contains(path)) report.unexpected(path);
    }
  }
  report.raise_or_warn(file.source(), model.name(), skip_mismatch);
  const std::function<void()> restore_optimizer = read_optimizer_state(model, file);
  for (auto& [stored, variable] : assignments) {
    variable.assign(detail::cast_to(Tensor::from_host(stored.bytes.data(), stored.shape, stored.dtype, variable.device()),
                                    variable.dtype()));
  }
  restore_optimizer();
}

}  // namespace

bool is_weights_h5_path(std::string_view path) {
  return path.size() >= 3 && path.substr(path.size() - 3) == ".h5";
}

std::string weights_h5_image(const Model& model, const std::string& source) {
  const FileLayout layout = layout_of(model, "save_weights");
  Hdf5File file = Hdf5File::create_in_memory(source);
  file.create_group("layers");
  for (const auto& [path, name] : layout.named_groups) {
    if (!file.has_group(path)) file.create_group(path);
    file.set_string_attribute(path, "name", name);
  }
  for (const auto& [path, variable] : layout.variables) file.write_dataset(path, stored_tensor(path, variable.value()));
  write_optimizer_state(model, file);  // builds the slots, as Keras 3 does before saving
  return file.image();
}

void save_weights_h5(const Model& model, const std::string& path) {
  write_file_atomically(path, weights_h5_image(model, path));
}

void load_weights_h5(Model& model, const std::string& path, bool skip_mismatch) {
  load_from(model, Hdf5File::open(path), skip_mismatch);
}

void load_weights_h5_image(Model& model, std::string_view bytes, const std::string& source, bool skip_mismatch) {
  load_from(model, Hdf5File::open_image(bytes, source), skip_mismatch);
}

}  // namespace accel::keras::saving
