// A run's data as tensors on the host CPU: the training examples and labels
// (shaped for the model's inputs, one-hot when asked, cut to `take`) and, where
// the source has one, the test split used by evaluate. One tensor per model
// input and one label tensor per model output, in the model's order (several
// only for a model.graph: the rules are in schema.cpp's "Several inputs and
// outputs"). fit batches and shuffles them itself, so the Dataset options
// cache and prefetch do not apply.
#pragma once

#include <accel/experiment/experiment.hpp>
#include <accel/tensor.hpp>

#include <optional>
#include <string>
#include <vector>

namespace accel::experiment {

// The ends of the model the data feeds: its inputs (a Sequential or .keras
// model has one, unnamed, of the data's example dtype) and its outputs' names.
struct ModelEnds {
  std::vector<GraphInput> inputs;
  std::vector<std::optional<int64_t>> vocabularies;  // per input: the embedding's input_dim for token ids
  std::vector<std::string> outputs;
};

// A model config's ends; `input_shape` is a one-input model's example shape.
ModelEnds model_ends(const ModelConfig& model, const DataConfig& data, const std::vector<int64_t>& input_shape);

struct TrainingData {
  std::vector<Tensor> train_x;  // one per model input
  std::vector<Tensor> train_y;  // one per model output
  std::vector<Tensor> test_x;   // empty: no test split
  std::vector<Tensor> test_y;
  std::vector<std::string> notes;  // options that do not apply, how the test data was chosen
  std::optional<double> test_unigram_entropy;  // text: the held-out bytes' (nats)
};

TrainingData load_training_data(const DataConfig& data, const ModelEnds& ends, std::optional<uint64_t> seed);

}  // namespace accel::experiment
