// load_experiment: an experiment YAML file (plus --set overrides) -> a
// validated Experiment, or one ExperimentError "file:line:column: ...;
// expected ..." for the first problem found. Nothing runs and nothing is
// written: this is what `accel validate` does.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/experiment/source_node.hpp>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace accel::experiment {

// Which device types exist here and which do not, for "unknown device"
// errors and "skipped: no GPU here" runs.
struct DeviceCatalog {
  // Types a run may name: CPU, GPU and TPU always, plus every type a plugin reports.
  std::vector<std::string> known_types;
  // Types present now, with their device count.
  std::map<std::string, int> available;
  // Why a known type is absent ("plugin cuda skipped: libcudart.so.12 not found").
  std::map<std::string, std::string> absence_reasons;
  // Every type is known and present: for a file another process already
  // validated (a run's own process), so that loading it touches no plugin.
  bool any_type = false;
};

// The devices of the runtime's plugins (loads plugins once: milliseconds).
DeviceCatalog runtime_device_catalog();
// Any type known and present; touches nothing (see DeviceCatalog::any_type).
DeviceCatalog validated_device_catalog();
// A fixed catalog, for tests and the fuzzer: CPU and TPU available, GPU absent.
DeviceCatalog fixed_device_catalog(std::map<std::string, int> available);

struct LoadOptions {
  std::vector<std::string> overrides;  // "key=value", applied in order before validation
  // Device availability. When not set: the plugins the file lists are
  // registered with the runtime first (register_plugins), then
  // runtime_device_catalog() sees their devices too.
  std::function<DeviceCatalog()> device_catalog;
  // Folders searched for TPU presets before the built-in ones.
  std::vector<std::string> tpu_preset_dirs;
  // An extra check of a resolved TPU system (e.g. the TPU timing library's
  // full hardware validation); throws ExperimentError or returns normally.
  std::function<void(const TpuSystem&, const SourceLocation&)> check_tpu_system;
  // Reads a model.keras_file without building it and returns its model's
  // input shape (without the batch axis), throwing accel::Error for a file it
  // cannot load. Programs that link accel's Keras set it (accel validate and
  // run do, with keras::saving::inspect_keras_file); unset, the loader checks
  // only that the file exists and is a .keras, and the run finds the rest.
  std::function<std::vector<std::int64_t>(const std::string& path)> inspect_keras_file;
  // Builds a run's model and loads its files in full (model.keras_file's
  // weights, model.initial_weights: every variable's name, shape and dtype
  // against the model), throwing accel::Error for one that does not fit.
  // `example_shape` is the data's, without the batch axis. accel validate
  // sets it (execute_run's model building); unset, the run finds the rest.
  std::function<void(const ModelConfig& model, const std::vector<std::int64_t>& example_shape)> check_model_files;
  SourceLimits limits;
};

Experiment load_experiment(const std::string& path, const LoadOptions& options = {});
// Registers a run's `plugins` with the runtime, before it discovers plugins
// (DESIGN.md's order: the experiment's plugins first): a required one must
// load, an optional one is searched first and may be skipped. Once plugins
// were discovered in this process, a plugin not already loaded is an
// ExperimentError at its line.
void register_plugins(const std::vector<PluginReference>& plugins);
// The same from text; `file` names it in messages.
Experiment load_experiment_text(std::string_view yaml, const std::string& file, const LoadOptions& options = {});

}  // namespace accel::experiment
