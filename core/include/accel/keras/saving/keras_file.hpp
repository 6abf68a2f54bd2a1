// Keras 3's `.keras` archive (model.save / keras.models.load_model in
// TensorFlow 2.16+): a zip of metadata.json, config.json (the architecture,
// saving/model_config) and model.weights.h5 (saving/weights_h5.hpp).
//
//   keras::saving::save_model(model, "cnn.keras");          // TensorFlow loads it
//   auto model = keras::saving::load_model("cnn.keras");    // a file TensorFlow saved
//
// Sequential and Functional models of the layers docs/keras.md lists
// ("Keras 3 files") are supported; anything else is a typed error naming the
// file and the layer. The compile config is not restored: compile the loaded
// model (Keras's load_model(compile=False)).
#pragma once

#include <memory>
#include <string>

namespace accel::keras {
class Model;
}

namespace accel::keras::saving {

// Writes `path` atomically (a previous file survives any failure). The model
// must be built. Layers accel cannot describe are UnimplementedError.
void save_model(const Model& model, const std::string& path);

// The model of a .keras file, built, with its weights. A missing file is
// NotFoundError; a damaged or foreign file, an unknown layer or argument, or
// weights that do not fit are InvalidArgumentError naming the file and fault.
std::unique_ptr<Model> load_model(const std::string& path);

}  // namespace accel::keras::saving
