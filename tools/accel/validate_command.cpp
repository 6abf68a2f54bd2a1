#include "validate_command.hpp"

#include "commands.hpp"
#include "keras_file_inspection.hpp"

#include <accel/experiment/experiment_loader.hpp>
#include <accel/experiment/run_executor.hpp>
#include <accel/experiment/schema.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <ostream>

#ifdef HAVE_ACCEL_TPU_TIMING
#include "timing/config_error.hpp"
#include "timing/presets.hpp"
#endif

namespace accel::cli {
namespace {

#ifdef HAVE_ACCEL_TPU_TIMING
// The TPU timing library's full hardware check (cross-field rules such as
// "an MXU tile does not fit the on-chip buffer") on the run's what-ifs.
void check_tpu_system_fully(const experiment::TpuSystem& system, const experiment::SourceLocation& where) {
  tpu::SystemSelection selection;
  selection.preset_or_file = system.preset_path;
  for (const auto& [key, value] : system.hardware_overrides) selection.overrides.push_back({key, value});
  selection.array_rows = system.array_rows;
  selection.array_columns = system.array_columns;
  if (system.dataflow) {
    tpu::Dataflow dataflow{};
    if (tpu::parse_dataflow(*system.dataflow, dataflow)) selection.dataflow = dataflow;
  }
  try {
    (void)tpu::load_system(selection);
  } catch (const tpu::ConfigError& error) {
    // At the value the error is about when the file overrides that key, else at `tpu:`.
    const auto written = system.hardware_override_locations.find(error.key());
    throw experiment::ExperimentError(
        written != system.hardware_override_locations.end() ? written->second : where,
        fmt::format("TPU system '{}' with these what-ifs is not valid: {}", system.preset, error.problem()),
        error.expected());
  }
}
#endif

std::string run_list(const experiment::Experiment& experiment) {
  std::string names;
  for (const auto& run : experiment.runs) names += (names.empty() ? "" : ", ") + run.name;
  return fmt::format("{} run{}: {}", experiment.runs.size(), experiment.runs.size() == 1 ? "" : "s", names);
}

}  // namespace

int run_validate(const ValidateRequest& request, std::ostream& out, std::ostream& err) {
  if (request.print_schema) {
    out << experiment::render_schema_reference();
    return 0;
  }
  experiment::LoadOptions options;
  options.overrides = request.overrides;
  inspect_keras_files(options);
  options.check_model_files = experiment::check_model_files;
#ifdef HAVE_ACCEL_TPU_TIMING
  options.check_tpu_system = check_tpu_system_fully;
#endif
  try {
    const experiment::Experiment experiment = experiment::load_experiment(request.file, options);
    out << fmt::format("{}: OK ({})\n", request.file, run_list(experiment));
    for (const auto& run : experiment.runs) {
      if (run.skipped_reason) out << fmt::format("  {}: will be skipped: {}\n", run.name, *run.skipped_reason);
    }
    return 0;
  } catch (const experiment::ExperimentError& error) {
    err << error.what() << "\n";
    return 2;
  }
}

void add_validate_command(CLI::App& app) {
  auto request = std::make_shared<ValidateRequest>();
  CLI::App* command = app.add_subcommand("validate", "check an experiment file (schema, shapes, devices) without running it");
  command->add_option("file", request->file, "the experiment YAML file");
  command->add_option("--set", request->overrides, "override a key before validation: key=value (repeatable)");
  command->add_flag("--print-schema", request->print_schema, "print the YAML reference (docs/yaml-reference.md)");
  command->callback([request, command] {
    if (request->file.empty() && !request->print_schema) throw CLI::RequiredError("file");
    const int code = run_validate(*request, std::cout, std::cerr);
    if (code != 0) throw ExitRequest{code};
  });
}

}  // namespace accel::cli
