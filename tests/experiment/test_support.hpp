// Shared by the experiment tests: paths into the source tree and load
// options that do not depend on which plugins this machine has.
#pragma once

#include <accel/experiment/experiment_error.hpp>
#include <accel/experiment/experiment_loader.hpp>

#include <gtest/gtest.h>

#include <string>

namespace accel::experiment::testing {

inline std::string source_path(const std::string& relative) { return std::string(EXPERIMENT_SOURCE_DIR) + "/" + relative; }

// CPU and TPU present, GPU absent: what the test machines look like.
inline LoadOptions offline_options() {
  LoadOptions options;
  options.device_catalog = [] { return fixed_device_catalog({{"CPU", 1}, {"TPU", 8}}); };
  return options;
}

// The error loading `yaml` (as the file "inline.yaml") raises; a test failure when it loads.
inline ExperimentError error_of(const std::string& yaml, LoadOptions options = offline_options()) {
  try {
    (void)load_experiment_text(yaml, "inline.yaml", options);
  } catch (const ExperimentError& error) {
    return error;
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return ExperimentError({}, "", "");
}

}  // namespace accel::experiment::testing
