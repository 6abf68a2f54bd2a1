// Keras 3's weights file: `.weights.h5` (Model.save_weights in TensorFlow
// 2.16+) and the `model.weights.h5` inside a `.keras` archive. HDF5, one
// group per layer named after the layer's class in snake_case and numbered in
// model.layers order (not after the layer's name), each variable a dataset
// numbered in the layer's creation order:
//
//   layers/conv2d/vars/0          the first Conv2D's kernel   (vars: attribute name = "stem")
//   layers/conv2d/vars/1          its bias
//   layers/dense_1/vars/0         the second Dense's kernel
//   layers/multi_head_attention/query_dense/vars/0   a sublayer's kernel
//   layers/sequential/layers/dense/vars/0            a nested model's layer
//   vars                          the model's own (empty; attribute name = the model's name)
//
// A Functional model's InputLayers have (empty) groups; a Sequential's do not.
// The optimizer's "optimizer/" group is ignored on load and not written.
#pragma once

#include <string>
#include <string_view>

namespace accel::keras {
class Model;
}

namespace accel::keras::saving {

// Whether `path` names an HDF5 weights file (".h5", as Keras 3's ".weights.h5").
bool is_weights_h5_path(std::string_view path);

// The bytes of the model's weights file; `source` names it in errors.
std::string weights_h5_image(const Model& model, const std::string& source);
// weights_h5_image written atomically to `path`.
void save_weights_h5(const Model& model, const std::string& path);

// Assigns the file's weights to the (built) model. Missing, extra or
// mis-shaped variables are one InvalidArgumentError naming each of them by
// its path in the file (nothing is assigned then), or skipped with a warning
// when skip_mismatch. A file that is not Keras's is InvalidArgumentError.
void load_weights_h5(Model& model, const std::string& path, bool skip_mismatch = false);
// The same from the bytes of a file (a `.keras` member); `source` names it.
void load_weights_h5_image(Model& model, std::string_view bytes, const std::string& source,
                           bool skip_mismatch = false);

}  // namespace accel::keras::saving
