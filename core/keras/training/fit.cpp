// Model::fit: Keras 2's training loop. Per epoch: reset the metrics, run
// train_step over the batches (callbacks around each execution of
// steps_per_execution batches; under a strategy, the step runs on every
// replica), evaluate the validation data into "val_" logs, and end the
// epoch; stop early when a callback sets stop_training. A model of several
// inputs or outputs takes one tensor per input and per output.
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/model.hpp>

#include <algorithm>
#include <iostream>

#include "batch_source.hpp"
#include "callback_list.hpp"

namespace accel::keras {
namespace {

void check_validation_choice(const FitOptions& options) {
  const int given = (options.validation_split > 0.0) + options.validation_data.has_value() +
                    options.validation_dataset.has_value();
  if (given > 1) {
    throw InvalidArgumentError("fit: give at most one of validation_split, validation_data and validation_dataset");
  }
}

// Resuming (Model::resume_training_at): consumes, without training, the
// batches the saved run trained on from initial_epoch up to `position`, so the
// resumed run sees the very batches (and shuffled orders) it would have seen.
void skip_trained_batches(detail::BatchSource& training, const FitOptions& options,
                          const Model::TrainingPosition& position) {
  if (!options.steps_per_epoch) {
    // One pass per epoch: start the passes of the finished epochs, then skip
    // into the current one.
    for (int epoch = options.initial_epoch; epoch < position.epoch; ++epoch) training.begin_pass();
    for (int64_t step = 0; step < position.step && training.next(); ++step) {
    }
    return;
  }
  // A continuous stream: steps_per_epoch batches per epoch, across passes.
  int64_t batches = static_cast<int64_t>(position.epoch - options.initial_epoch) * *options.steps_per_epoch +
                    position.step;
  for (; batches > 0; --batches) {
    if (training.next()) continue;
    if (training.from_dataset()) return;
    training.begin_pass();
    training.next();
  }
}

}  // namespace

History Model::fit(const Tensor& x, const Tensor& y, FitOptions options) {
  require_compiled("fit");
  check_validation_choice(options);
  LabeledTensors training_data{x, y};
  std::optional<detail::BatchSource> validation;
  const int64_t validation_batch_size = options.validation_batch_size.value_or(options.batch_size);
  if (options.validation_split > 0.0) {
    // The held-out samples are the last ones, chosen before any shuffling.
    auto [kept, held_out] = detail::split_last_fraction(x, y, options.validation_split);
    training_data = std::move(kept);
    validation = detail::BatchSource::from_tensors(held_out.x, held_out.y, validation_batch_size, false, 0);
  } else if (options.validation_data) {
    validation = detail::BatchSource::from_tensors(options.validation_data->x, options.validation_data->y,
                                                   validation_batch_size, false, 0);
  } else if (options.validation_dataset) {
    validation = detail::BatchSource::from_dataset(*options.validation_dataset);
  }
  uint64_t seed = options.shuffle ? options.seed.value_or(next_seed()) : 0;
  if (distribution_ != nullptr) seed = distribution_->shared_seed(seed);
  detail::BatchSource training = detail::BatchSource::from_tensors(training_data.x, training_data.y,
                                                                   options.batch_size, options.shuffle, seed);
  return run_fit(training, validation ? &*validation : nullptr, options);
}

History Model::fit(const data::Dataset& dataset, FitOptions options) {
  require_compiled("fit");
  check_validation_choice(options);
  if (options.validation_split > 0.0) {
    throw InvalidArgumentError("fit: validation_split is only supported for tensors, not for a Dataset; "
                               "pass validation_dataset instead");
  }
  std::optional<detail::BatchSource> validation;
  if (options.validation_data) {
    validation = detail::BatchSource::from_tensors(options.validation_data->x, options.validation_data->y,
                                                   options.validation_batch_size.value_or(options.batch_size),
                                                   false, 0);
  } else if (options.validation_dataset) {
    validation = detail::BatchSource::from_dataset(*options.validation_dataset);
  }
  detail::BatchSource training = detail::BatchSource::from_dataset(dataset);
  return run_fit(training, validation ? &*validation : nullptr, options);
}

History Model::fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y, FitOptions options) {
  require_compiled("fit");
  check_validation_choice(options);
  if (!has_several_inputs_or_outputs() && x.size() == 1 && y.size() == 1) return fit(x.front(), y.front(), options);
  check_list_data("fit", x, y);
  if (options.validation_data || options.validation_dataset) {
    throw InvalidArgumentError("fit: a model of several inputs or outputs validates by validation_split only");
  }
  detail::LabeledTensorLists training_data{x, y};
  std::optional<detail::BatchSource> validation;
  if (options.validation_split > 0.0) {
    auto [kept, held_out] = detail::split_last_fraction(x, y, options.validation_split);
    training_data = std::move(kept);
    validation = detail::BatchSource::from_tensor_lists(
        held_out.x, held_out.y, options.validation_batch_size.value_or(options.batch_size), false, 0);
  }
  uint64_t seed = options.shuffle ? options.seed.value_or(next_seed()) : 0;
  if (distribution_ != nullptr) seed = distribution_->shared_seed(seed);  // every worker reads the same batches
  detail::BatchSource training = detail::BatchSource::from_tensor_lists(training_data.x, training_data.y,
                                                                        options.batch_size, options.shuffle, seed);
  return run_fit(training, validation ? &*validation : nullptr, options);
}

History Model::run_fit(detail::BatchSource& training, detail::BatchSource* validation, const FitOptions& options) {
  if (has_several_inputs_or_outputs() && !training.from_tensor_lists()) {
    throw InvalidArgumentError("fit: model '" + name() + "' has " + std::to_string(inputs().size()) + " inputs and " +
                               std::to_string(outputs().size()) +
                               " outputs: pass one tensor per input and per output, fit(std::vector<Tensor>, "
                               "std::vector<Tensor>)");
  }
  if (options.initial_epoch < 0) {
    throw InvalidArgumentError("fit: initial_epoch must be >= 0, got " + std::to_string(options.initial_epoch));
  }
  if (options.steps_per_epoch && *options.steps_per_epoch <= 0) {
    throw InvalidArgumentError("fit: steps_per_epoch must be positive, got " + std::to_string(*options.steps_per_epoch));
  }
  mark_sharded_weights_stale();  // before on_train_begin's callbacks, which may restore weights too
  const CallbackParams params{detail::resolve_verbosity(options.verbose), options.epochs,
                              options.steps_per_epoch ? options.steps_per_epoch : training.batches_per_pass()};
  detail::CallbackList callbacks(options.callbacks, *this, params, /*add_history=*/true);
  // With steps_per_epoch the batches run on across epochs instead of restarting.
  const bool continuous_stream = options.steps_per_epoch.has_value();

  stop_training_ = false;
  Logs training_logs;
  callbacks.on_train_begin({});
  training.begin_pass();
  // A callback (BackupAndRestore) may have moved the start in on_train_begin.
  TrainingPosition start{options.initial_epoch, 0};
  if (resume_position_ && resume_position_->epoch >= options.initial_epoch) {
    start = *resume_position_;
    skip_trained_batches(training, options, start);
  }
  resume_position_.reset();
  for (int epoch = start.epoch; epoch < options.epochs; ++epoch) {
    reset_metrics();
    if (!continuous_stream && epoch != start.epoch) training.begin_pass();
    callbacks.on_epoch_begin(epoch, {});
    Logs logs;
    const int64_t first_step = epoch == start.epoch ? start.step : 0;
    int64_t step = first_step;
    bool out_of_data = false;
    // The next batch; with steps_per_epoch the stream runs on across passes.
    auto next_batch = [&]() -> std::optional<detail::Batch> {
      std::optional<detail::Batch> batch = training.next();
      if (!batch && continuous_stream) {
        if (training.from_dataset()) {
          std::cerr << "WARNING: Your input ran out of data; interrupting training. Make sure that your dataset "
                       "can generate at least `steps_per_epoch * epochs` batches. You may need to use the "
                       "repeat() function when building your dataset.\n";
          out_of_data = true;
        } else {
          training.begin_pass();  // tensors: the next shuffled pass
          batch = training.next();
        }
      }
      if (batch && !batch->y.defined()) {
        throw InvalidArgumentError("fit: the training data has no labels; a Dataset must yield (features, labels)");
      }
      return batch;
    };
    bool data_left = true;
    while (data_left && (!options.steps_per_epoch || step < *options.steps_per_epoch)) {
      // One execution: steps_per_execution batches (fewer at the end of the
      // epoch), with the callbacks around it as Keras calls them.
      int64_t execution_steps = steps_per_execution_;
      if (options.steps_per_epoch) execution_steps = std::min(execution_steps, *options.steps_per_epoch - step);
      int64_t done = 0;
      for (; done < execution_steps; ++done) {
        std::optional<detail::Batch> batch = next_batch();
        if (!batch) {
          data_left = false;
          break;
        }
        if (done == 0) callbacks.on_train_batch_begin(step, {});
        // Under a strategy the virtual step runs on every replica.
        if (!batch->inputs.empty()) {
          logs = distribution_ != nullptr ? distributed_step_on_lists(batch->inputs, batch->targets, true)
                                          : train_step_on_lists(batch->inputs, batch->targets);
        } else {
          logs = distribution_ != nullptr ? distributed_train_step(batch->x, batch->y) : train_step(batch->x, batch->y);
        }
      }
      if (done == 0) break;
      step += done;
      callbacks.on_train_batch_end(step - 1, logs);
      if (stop_training_) break;
    }
    if (step == first_step) {
      if (out_of_data) break;
      throw InvalidArgumentError("fit: the training data yielded no batches in epoch " + std::to_string(epoch + 1));
    }
    Logs epoch_logs = logs;
    if (validation) {
      for (const auto& [name, value] : run_test_loop(*validation, callbacks, options.validation_steps)) {
        epoch_logs["val_" + name] = value;
      }
    }
    callbacks.on_epoch_end(epoch, epoch_logs);
    training_logs = epoch_logs;
    if (stop_training_ || out_of_data) break;
  }
  callbacks.on_train_end(training_logs);
  history_ = *callbacks.history();
  return history_;
}

}  // namespace accel::keras
