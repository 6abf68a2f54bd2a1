// The Keras callbacks of a run's `training.callbacks`, built from their
// validated arguments: early_stopping, model_checkpoint, csv_logger,
// reduce_lr_on_plateau, terminate_on_nan, backup_and_restore. Relative paths
// stay relative to the working directory, as in Keras.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/keras/callbacks/callback.hpp>

#include <vector>

namespace accel::experiment {

std::vector<keras::CallbackPointer> make_callbacks(const std::vector<KerasObject>& callbacks);

}  // namespace accel::experiment
