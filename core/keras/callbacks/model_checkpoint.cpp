// ModelCheckpoint: Keras's _save_model at epoch ends, in the format the
// filepath's extension names (Keras 3's rule).
#include <accel/error.hpp>
#include <accel/keras/callbacks/model_checkpoint.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/checkpoint.hpp>
#include <accel/keras/saving/keras_file.hpp>

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

CheckpointFormat checkpoint_format(const std::string& filepath, bool save_weights_only) {
  if (const std::optional<CheckpointFormat> format = fitting_checkpoint_format(filepath, save_weights_only)) {
    return *format;
  }
  const std::string_view path = filepath;
  if (save_weights_only) {
    throw InvalidArgumentError("ModelCheckpoint: with save_weights_only the filepath must end in .weights.h5 (Keras "
                               "weights) or .safetensors, got \"" + filepath + "\"" +
                               (path.ends_with(".keras") ? " (a .keras file holds the whole model: set "
                                                           "save_weights_only to false)"
                                                         : ""));
  }
  throw InvalidArgumentError("ModelCheckpoint: without save_weights_only the filepath must end in .keras (a Keras 3 "
                             "model) or .safetensors (a training checkpoint), got \"" + filepath + "\"" +
                             (path.ends_with(".h5") ? " (a .weights.h5 file holds weights only: set "
                                                      "save_weights_only to true)"
                                                    : ""));
}

ModelCheckpoint::ModelCheckpoint(std::string filepath, ModelCheckpointOptions options)
    : filepath_(std::move(filepath)),
      options_(std::move(options)),
      format_(checkpoint_format(filepath_, options_.save_weights_only)) {
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
  switch (format_) {
    case CheckpointFormat::kKerasArchive: saving::save_model(model(), write_path); break;
    case CheckpointFormat::kWeightsH5: model().save_weights(write_path); break;
    case CheckpointFormat::kSafetensors:
      if (options_.save_weights_only) {
        model().save_weights(write_path);
      } else {
        saving::save_checkpoint(model(), write_path, {.include_optimizer = true});
      }
      break;
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
