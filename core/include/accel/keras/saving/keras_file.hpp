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

#include <accel/keras/layer_shape.hpp>

#include <memory>
#include <string>
#include <vector>

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

// What a .keras file holds, checked without building the model: the archive,
// config.json (every layer class and argument, as load_model reads them) and
// that model.weights.h5 is an HDF5 file. No tensor is made, so the runtime's
// devices can still be configured afterwards (experiments validate first).
// Weights that do not fit the model are found by load_model only.
struct KerasFileSummary {
  std::string class_name;  // "Sequential" or "Functional"
  std::string name;
  std::vector<LayerShape> input_shapes;  // with the batch axis
  size_t outputs = 0;
};
KerasFileSummary inspect_keras_file(const std::string& path);

}  // namespace accel::keras::saving
