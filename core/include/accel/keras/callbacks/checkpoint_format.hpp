// Which file a checkpoint path asks for, by its extension (Keras 3's
// ModelCheckpoint rule, with safetensors beside it): the one rule that
// ModelCheckpoint applies and that experiment validation checks before a run.
// Header-only, so that the YAML reader uses it without linking the Keras layer.
#pragma once

#include <optional>
#include <string_view>

namespace accel::keras {

enum class CheckpointFormat {
  kKerasArchive,  // ".keras": the model, as Keras 3's model.save
  kWeightsH5,     // ".weights.h5": the weights, as Keras 3's model.save_weights
  kSafetensors,   // ".safetensors": the weights, and the optimizer's state unless weights only
};

// The format `filepath` (a pattern, its extension last) asks for, or nullopt
// when its extension does not fit save_weights_only: a model goes to ".keras"
// or ".safetensors", weights alone to ".weights.h5" or ".safetensors".
inline std::optional<CheckpointFormat> fitting_checkpoint_format(std::string_view filepath,
                                                                 bool save_weights_only) noexcept {
  if (filepath.ends_with(".safetensors")) return CheckpointFormat::kSafetensors;
  if (save_weights_only && filepath.ends_with(".weights.h5")) return CheckpointFormat::kWeightsH5;
  if (!save_weights_only && filepath.ends_with(".keras")) return CheckpointFormat::kKerasArchive;
  return std::nullopt;
}

}  // namespace accel::keras
