// The experiment loader's model.keras_file check for the commands that load
// experiments (validate, run): keras::saving::inspect_keras_file, which
// reads the archive without building the model, so that the run can still
// configure its devices afterwards.
#pragma once

#include <accel/experiment/experiment_loader.hpp>

namespace accel::cli {

void inspect_keras_files(experiment::LoadOptions& options);

}  // namespace accel::cli
