// The Keras objects of a run's configuration made real: the model (a
// Sequential of model.layers, or the Functional model of model.graph:
// keras::Input per input, each layer called on the tensors it names,
// keras::Model(inputs, outputs)), the optimizer and the loss with their
// arguments, and the metric names for compile. Anything accel's Keras lacks (a layer, an
// optimizer) is an UnimplementedError naming it, so the run is reported as
// failed with that reason instead of crashing the experiment.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/optimizers/optimizer.hpp>
#include <accel/keras/sequential.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel::experiment {

// The model, built: a Sequential for examples of `example_shape` (batch axis
// excluded), the graph's Functional model (whose inputs declare their shapes),
// or the model of model.keras_file; then model.initial_weights loaded into it.
std::shared_ptr<keras::Model> make_model(const ModelConfig& model, const std::vector<int64_t>& example_shape);
// The input shape the model expects: the graph input's shape, or the first
// layer's input_shape, else `data_shape`.
std::vector<int64_t> model_input_shape(const ModelConfig& model, const std::vector<int64_t>& data_shape);
std::shared_ptr<keras::Optimizer> make_optimizer(const KerasObject& optimizer);
std::shared_ptr<keras::Loss> make_loss(const KerasObject& loss);
std::vector<keras::MetricArgument> make_metrics(const std::vector<KerasObject>& metrics);

}  // namespace accel::experiment
