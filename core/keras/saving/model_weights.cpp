// Model::save_weights / load_weights: Keras 3's .weights.h5 for ".h5" paths
// (as Keras 3 picks the format by suffix), else accel's safetensors checkpoint.
#include <accel/keras/model.hpp>
#include <accel/keras/saving/checkpoint.hpp>
#include <accel/keras/saving/weights_h5.hpp>

namespace accel::keras {

void Model::save_weights(const std::string& path) const {
  if (saving::is_weights_h5_path(path)) {
    saving::save_weights_h5(*this, path);
  } else {
    saving::save_checkpoint(*this, path);
  }
}

void Model::load_weights(const std::string& path, bool skip_mismatch) {
  if (saving::is_weights_h5_path(path)) {
    saving::load_weights_h5(*this, path, skip_mismatch);
  } else {
    saving::load_checkpoint(*this, path, {.include_optimizer = false, .skip_mismatch = skip_mismatch});
  }
}

}  // namespace accel::keras
