// One resolved run tree (already checked against the schema) -> a RunConfig,
// with the rules that span keys: model or benchmark, data keys that fit the
// source, layer shapes, loss vs. output and labels, device types, TPU preset.
#pragma once

#include "compare_runs.hpp"

#include <accel/experiment/experiment.hpp>
#include <accel/experiment/experiment_loader.hpp>

#include <string>
#include <vector>

namespace accel::experiment {

struct RunContext {
  std::string experiment_name;
  std::string experiment_dir;  // relative paths start here
  SourceLocation document;     // line 1 of the file
  const DeviceCatalog* catalog = nullptr;
  std::vector<std::string> tpu_preset_dirs;
  const LoadOptions* options = nullptr;
};

RunConfig read_run(const RunTree& run, const RunContext& context);
// Only the run's `plugins` (what must be registered before device discovery).
std::vector<PluginReference> read_run_plugins(const RunTree& run, const RunContext& context);

}  // namespace accel::experiment
