// The validation pipeline: YAML source -> --set overrides -> schema check of
// the document -> compare runs -> sweep -> schema check and typed read of
// each run.
#include <accel/experiment/experiment_loader.hpp>

#include "compare_runs.hpp"
#include "overrides.hpp"
#include "run_reader.hpp"
#include "schema_check.hpp"
#include "sweep.hpp"
#include "tpu_preset_lookup.hpp"

#include <accel/experiment/schema.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace accel::experiment {
namespace {

Experiment load_tree(SourceNodePtr document, const std::string& file, const std::string& directory,
                     const LoadOptions& options) {
  const SourceLocation top{file, 1, 1};
  if (document->is_null()) {
    fail_at(top, "the file is empty", "a mapping with at least 'name' and 'model' or 'benchmark'");
  }
  if (!document->is_map()) {
    fail_at(*document, "the document is " + document->describe() + ", not a mapping",
            "a mapping of keys such as name, model, data, training");
  }
  for (const std::string& text : options.overrides) apply_override(*document, parse_override(text), options.limits);
  // As written: types, ranges and names everywhere; required keys only where
  // nothing is merged in (a compare entry may complete the base).
  check_value(*document, experiment_spec(), "", RequiredKeys::kIgnore);
  if (document->find("name") == nullptr) {
    const Field& name = *experiment_spec().field("name");
    fail_at(*document, "missing key 'name'", fmt::format("'name: {}' ({})", name.example, name.doc));
  }
  for (const char* key : {"sweep", "compare"}) {
    if (const SourceNode* section = document->find(key)) {
      const ValueSpec& spec = *experiment_spec().field(key)->spec;
      if (spec.form == ValueForm::kList) {
        for (std::size_t i = 0; i < section->items.size(); ++i) {
          const SourceNode& entry = *section->items[i];
          if (entry.find("name") == nullptr) {
            fail_at(entry, fmt::format("missing key '{}[{}].name'", key, i), "'name: tpu_v4' (the run's name, unique)");
          }
        }
      } else {
        check_value(*section, spec, key);
      }
    }
  }

  Experiment experiment;
  experiment.source_file = file;
  experiment.name = document->find("name")->text;
  if (const SourceNode* description = document->find("description")) experiment.description = description->text;

  std::vector<RunTree> runs = expand_sweep(*document, resolve_compare_runs(*document));
  for (const RunTree& run : runs) check_value(*run.tree, run_spec(), "");  // values a sweep put in
  const std::vector<std::string> preset_dirs = tpu_preset_dirs(options.tpu_preset_dirs, directory);
  if (!options.device_catalog) {
    // The file's own plugins come first in discovery, so their device types
    // are known when the runs are checked against the runtime's devices.
    const DeviceCatalog none = validated_device_catalog();
    const RunContext plugins_only{experiment.name, directory, top, &none, preset_dirs, &options};
    for (const RunTree& run : runs) register_plugins(read_run_plugins(run, plugins_only));
  }
  const DeviceCatalog catalog = options.device_catalog ? options.device_catalog() : runtime_device_catalog();
  const RunContext context{experiment.name, directory, top, &catalog, preset_dirs, &options};
  for (const RunTree& run : runs) experiment.runs.push_back(read_run(run, context));
  return experiment;
}

}  // namespace

Experiment load_experiment(const std::string& path, const LoadOptions& options) {
  SourceNodePtr document = load_yaml_file(path, options.limits);
  const std::string directory = std::filesystem::path(path).parent_path().string();
  return load_tree(std::move(document), path, directory.empty() ? "." : directory, options);
}

Experiment load_experiment_text(std::string_view yaml, const std::string& file, const LoadOptions& options) {
  SourceNodePtr document = parse_yaml_source(yaml, file, options.limits);
  const std::string directory = std::filesystem::path(file).parent_path().string();
  return load_tree(std::move(document), file, directory.empty() ? "." : directory, options);
}

}  // namespace accel::experiment
