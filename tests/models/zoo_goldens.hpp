// Readers of the model-zoo goldens Keras wrote (tools/keras_goldens/
// make_zoo_goldens.py): parameter counts per configuration and per-layer
// tables (name, class, output shape, parameters, inbound layers).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace accel::model_zoo::testing {

struct ParameterCounts {
  int64_t total = 0;
  int64_t trainable = 0;
  int64_t non_trainable = 0;
};

struct LayerRow {
  std::string name;
  std::string class_name;
  std::string output_shape;  // Keras's "(None,28,28,1)"
  int64_t parameters = 0;
  std::vector<std::string> inbound;  // layer names; empty for an input
};

std::string golden_path(const std::string& file);
// zoo_parameter_counts.txt: configuration -> counts.
std::map<std::string, ParameterCounts> read_parameter_counts();
// zoo_<configuration>_layers.txt, rows in Keras's model.layers order.
std::vector<LayerRow> read_layer_table(const std::string& configuration);

}  // namespace accel::model_zoo::testing
