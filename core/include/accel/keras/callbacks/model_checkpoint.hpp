// ModelCheckpoint (keras.callbacks.ModelCheckpoint): saves the model at the
// end of every epoch to a path formatted as Python's str.format would with
// epoch (1-based, as Keras) and the epoch's logs:
//
//   ModelCheckpoint("ckpt/weights.{epoch:02d}-{val_loss:.2f}.safetensors",
//                   {.save_best_only = true, .save_weights_only = true})
//
// save_best_only saves only when `monitor` improves on the best so far
// (strictly; min or max as `mode`, "auto" resolving as Keras 2's
// ModelCheckpoint: higher is better when the name contains "acc" or starts
// with "fmeasure"); a missing monitor value warns and skips the save.
// What is written follows the filepath's extension, as Keras 3's
// ModelCheckpoint (checkpoint_format below): ".keras" a Keras 3 model archive
// (saving/keras_file.hpp), ".weights.h5" Keras 3 weights, ".safetensors"
// safetensors (weights, or with save_weights_only = false also the
// optimizer's state: a training checkpoint, restored with
// saving::load_checkpoint). Every file is written atomically; missing folders
// are created. Only save_freq = "epoch" is supported.
#pragma once

#include <accel/keras/callbacks/callback.hpp>
#include <accel/keras/callbacks/checkpoint_format.hpp>

#include <limits>
#include <optional>
#include <string>

namespace accel::keras {

// The format `filepath` asks for (fitting_checkpoint_format). An extension
// that does not fit save_weights_only is InvalidArgumentError naming the path
// and the extensions that fit, as Keras 3 refuses them.
CheckpointFormat checkpoint_format(const std::string& filepath, bool save_weights_only);

struct ModelCheckpointOptions {
  std::string monitor = "val_loss";
  int verbose = 0;
  bool save_best_only = false;
  bool save_weights_only = false;
  std::string mode = "auto";  // "auto", "min" or "max"
  std::string save_freq = "epoch";
  // The best value to beat at the start (Keras's initial_value_threshold).
  std::optional<double> initial_value_threshold;
};

class ModelCheckpoint final : public Callback {
 public:
  explicit ModelCheckpoint(std::string filepath, ModelCheckpointOptions options = {});

  void on_epoch_end(int epoch, Logs& logs) override;

  // The path for `epoch` (0-based, formatted 1-based) and its logs.
  std::string file_path(int epoch, const Logs& logs) const;
  // The best monitored value saved so far (+-inf before the first).
  double best() const noexcept { return best_; }
  const ModelCheckpointOptions& options() const noexcept { return options_; }

 private:
  bool improves(double value) const;
  void save(const std::string& path) const;

  std::string filepath_;
  ModelCheckpointOptions options_;
  CheckpointFormat format_;
  bool higher_is_better_ = false;
  double best_ = std::numeric_limits<double>::infinity();
};

}  // namespace accel::keras
