// ModelCheckpoint: Keras 2's _save_model at epoch ends.
#include <accel/error.hpp>
#include <accel/keras/callbacks/model_checkpoint.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/checkpoint.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "monitor_direction.hpp"
#include "python_format.hpp"
#include "worker_file_paths.hpp"

namespace accel::keras {
namespace {

std::string fixed5(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.5f", value);
  return text;
}

}  // namespace

ModelCheckpoint::ModelCheckpoint(std::string filepath, ModelCheckpointOptions options)
    : filepath_(std::move(filepath)), options_(std::move(options)) {
  if (options_.save_freq != "epoch") {
    throw InvalidArgumentError("ModelCheckpoint: save_freq '" + options_.save_freq +
                               "' is not supported; only \"epoch\" is");
  }
  higher_is_better_ = detail::resolve_checkpoint_direction("ModelCheckpoint", options_.monitor, options_.mode) ==
                      detail::MonitorDirection::kHigherIsBetter;
  const double worst = higher_is_better_ ? -std::numeric_limits<double>::infinity()
                                         : std::numeric_limits<double>::infinity();
  best_ = options_.initial_value_threshold.value_or(worst);
}

std::string ModelCheckpoint::file_path(int epoch, const Logs& logs) const {
  std::map<std::string, detail::PythonFormatValue> fields;
  for (const auto& [name, value] : logs) fields[name] = value;
  fields["epoch"] = static_cast<int64_t>(epoch) + 1;
  try {
    return detail::python_str_format(filepath_, fields);
  } catch (const InvalidArgumentError& error) {
    throw InvalidArgumentError("ModelCheckpoint: failed to format the filepath \"" + filepath_ + "\": " + error.what());
  }
}

bool ModelCheckpoint::improves(double value) const { return higher_is_better_ ? value > best_ : value < best_; }

// Across workers only the chief keeps the file; the others write theirs to a
// temporary folder that is removed right after (TensorFlow's rule).
void ModelCheckpoint::save(const std::string& path) const {
  const std::string write_path = detail::worker_write_filepath(path, model());
  const std::filesystem::path folder = std::filesystem::path(write_path).parent_path();
  if (!folder.empty()) std::filesystem::create_directories(folder);
  if (options_.save_weights_only) {
    model().save_weights(write_path);
  } else {
    saving::save_checkpoint(model(), write_path, {.include_optimizer = true});
  }
  detail::remove_worker_temp_dirpath(std::filesystem::path(path).parent_path().string(), model());
}

void ModelCheckpoint::on_epoch_end(int epoch, Logs& logs) {
  const std::string path = file_path(epoch, logs);
  const std::string epoch_label = "\nEpoch " + std::to_string(epoch + 1) + ": ";
  if (!options_.save_best_only) {
    if (options_.verbose > 0) std::cout << epoch_label << "saving model to " << path << "\n";
    save(path);
    return;
  }
  const auto current = logs.find(options_.monitor);
  if (current == logs.end()) {
    std::cerr << "WARNING: Can save best model only with " << options_.monitor << " available, skipping.\n";
    return;
  }
  if (improves(current->second)) {
    if (options_.verbose > 0) {
      std::cout << epoch_label << options_.monitor << " improved from " << fixed5(best_) << " to "
                << fixed5(current->second) << ", saving model to " << path << "\n";
    }
    best_ = current->second;
    save(path);
  } else if (options_.verbose > 0) {
    std::cout << epoch_label << options_.monitor << " did not improve from " << fixed5(best_) << "\n";
  }
}

}  // namespace accel::keras
