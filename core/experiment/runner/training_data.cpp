#include "training_data.hpp"

#include "../model_graph_reader.hpp"

#include <accel/data/byte_text.hpp>
#include <accel/data/fashion_mnist_tokens.hpp>

#include <accel/data/csv_reader.hpp>
#include <accel/data/data_error.hpp>
#include <accel/data/fashion_mnist.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace accel::experiment {
namespace {

const Value* option(const DataConfig& data, const std::string& key) {
  auto found = data.options.find(key);
  return found != data.options.end() && found->second.is_set() ? &found->second : nullptr;
}

Tensor first_rows(const Tensor& tensor, int64_t rows) {
  const Shape& shape = tensor.shape();
  if (rows >= shape[0]) return tensor;
  std::vector<int64_t> begin(shape.rank(), 0);
  std::vector<int64_t> size = shape.dims();
  size[0] = rows;
  return ops::slice(tensor, begin, size);
}

// An empty `input_shape` (idx or csv without input_shape) keeps the data's own.
Tensor shaped_for_model(const Tensor& x, const std::vector<int64_t>& input_shape) {
  if (input_shape.empty()) return x;
  std::vector<int64_t> dims{x.shape()[0]};
  dims.insert(dims.end(), input_shape.begin(), input_shape.end());
  return x.reshape(Shape(dims));
}

// The examples of a one-input model, as the image sources give them.
struct OneInput {
  Tensor train_x;
  Tensor train_y;
  std::optional<Tensor> test_x;
  std::optional<Tensor> test_y;
  std::vector<std::string> notes;
  std::optional<double> test_unigram_entropy;
};

OneInput load_one_input(const DataConfig& data, const std::vector<int64_t>& input_shape) {
  DeviceScope on_host("/CPU:0");
  OneInput result;
  const bool normalize = !option(data, "normalize") || option(data, "normalize")->as_bool();
  if (data.source == "fashion_mnist" || data.source == "mnist") {
    const Value* path = option(data, "path");
    const bool tokens = option(data, "tokens") != nullptr;
    data::FashionMnistOptions options;
    options.image_dtype = normalize && !tokens ? DType::kFloat32 : DType::kUInt8;
    data::FashionMnist loaded = data::load_fashion_mnist(path ? path->as_text() : std::string{}, options);
    const bool test_split = option(data, "split") && option(data, "split")->as_text() == "test";
    result.train_x = test_split ? loaded.test_images : loaded.train_images;
    result.train_y = test_split ? loaded.test_labels : loaded.train_labels;
    result.test_x = loaded.test_images;
    result.test_y = loaded.test_labels;
    if (tokens) {
      result.train_x = data::fashion_mnist_block_tokens(result.train_x);
      result.test_x = data::fashion_mnist_block_tokens(*result.test_x);
      result.notes.push_back("data.tokens fashion_mnist_blocks: each image as 49 tokens of 4x4-pixel blocks");
    } else if (!normalize) {
      result.train_x = ops::cast(result.train_x, DType::kFloat32);
      result.test_x = ops::cast(*result.test_x, DType::kFloat32);
    }
    if (test_split) result.notes.push_back("data.split is test: trained and evaluated on the test split");
  } else if (data.source == "text") {
    const std::string path = option(data, "path")->as_text();
    const data::ByteText text =
        data::load_byte_text(path, {.sequence_length = option(data, "sequence_length")->as_int(),
                                    .held_out = option(data, "held_out")->as_number()});
    result.train_x = text.train_inputs;
    result.train_y = text.train_targets;
    result.test_x = text.held_out_inputs;
    result.test_y = text.held_out_targets;
    result.test_unigram_entropy = text.held_out_unigram_entropy;
    result.notes.push_back(fmt::format("data.source text: {} training and {} held-out sequences of {} bytes from {}",
                                       text.train_inputs.shape()[0], text.held_out_inputs.shape()[0],
                                       text.train_inputs.shape()[1], path));
  } else {
    throw UnimplementedError(fmt::format("data source '{}' is not supported by the runner yet", data.source));
  }
  result.train_x = shaped_for_model(result.train_x, input_shape);
  if (result.test_x) result.test_x = shaped_for_model(*result.test_x, input_shape);
  return result;
}

// What applies to every source's result: the first `take` examples,
// one-hot labels when asked, and the note on drop_remainder.
void finish(const DataConfig& data, TrainingData& result) {
  DeviceScope on_host("/CPU:0");
  if (const Value* take = option(data, "take")) {
    for (Tensor& x : result.train_x) x = first_rows(x, take->as_int());
    for (Tensor& labels : result.train_y) labels = first_rows(labels, take->as_int());
  }
  if (const Value* one_hot = option(data, "one_hot"); one_hot && one_hot->as_bool()) {
    const int64_t classes = data.classes.value_or(10);
    for (Tensor& labels : result.train_y) labels = ops::one_hot(labels, classes);
    for (Tensor& labels : result.test_y) labels = ops::one_hot(labels, classes);
  }
  if (option(data, "drop_remainder") && option(data, "drop_remainder")->as_bool()) {
    result.notes.push_back("data.drop_remainder is not applied: fit keeps a last, smaller batch");
  }
}

// The columns `names` of a csv table as float32 [rows, names.size()].
Tensor csv_columns(const data::CsvData& table, const std::vector<std::string>& names, const std::string& path) {
  std::vector<int32_t> indices;
  for (const std::string& name : names) {
    const auto found = std::find(table.feature_names.begin(), table.feature_names.end(), name);
    if (found == table.feature_names.end()) {
      throw NotFoundError(fmt::format("{}: no column '{}' (columns: {})", path, name, fmt::join(table.feature_names, ", ")));
    }
    indices.push_back(static_cast<int32_t>(found - table.feature_names.begin()));
  }
  const Tensor where = Tensor::from_vector(indices, Shape{static_cast<int64_t>(indices.size())});
  return ops::gather(table.features, where, 1);
}

// One csv column as int32 labels [rows]; every value must be a whole number.
Tensor csv_labels(const data::CsvData& table, const std::string& column, const std::string& path) {
  const Tensor values = csv_columns(table, {column}, path);
  const std::vector<float> host = values.to_vector<float>();
  for (size_t row = 0; row < host.size(); ++row) {
    if (host[row] != std::floor(host[row])) {
      throw data::DataError(path, fmt::format("data row {}", row + 1),
                            fmt::format("label column '{}' holds {}, not a whole number", column, host[row]));
    }
  }
  return ops::cast(values.reshape(Shape{values.shape()[0]}), DType::kInt32);
}

// A csv table by column names: each input's columns (data.input_columns;
// one input without them takes every column but the labels) and each
// output's label column (data.label_columns, else label_column or the last
// column, for every output).
void read_csv_ends(const DataConfig& data, const ModelEnds& ends, TrainingData& result) {
  const std::string path = option(data, "path")->as_text();
  const data::CsvData table = data::read_csv(path, {});
  if (table.feature_names.empty()) throw data::DataError(path, "line 1", "no columns");
  const Value* label_column = option(data, "label_column");
  const std::string shared_label = label_column ? label_column->as_text() : table.feature_names.back();
  std::vector<std::string> label_columns;
  for (const std::string& output : ends.outputs) {
    const auto entry = std::find_if(data.label_columns.begin(), data.label_columns.end(),
                                    [&](const LabelColumn& candidate) { return candidate.output == output; });
    label_columns.push_back(entry != data.label_columns.end() ? entry->column : shared_label);
    result.train_y.push_back(csv_labels(table, label_columns.back(), path));
  }
  for (const GraphInput& input : ends.inputs) {
    const auto entry = std::find_if(data.input_columns.begin(), data.input_columns.end(),
                                    [&](const InputColumns& candidate) { return candidate.input == input.name; });
    std::vector<std::string> columns;
    if (entry != data.input_columns.end()) {
      columns = entry->columns;
    } else {  // one input without input_columns: every column but the labels
      for (const std::string& name : table.feature_names) {
        if (std::find(label_columns.begin(), label_columns.end(), name) == label_columns.end()) columns.push_back(name);
      }
    }
    result.train_x.push_back(shaped_for_model(csv_columns(table, columns, path), input.shape));
  }
}

// Synthetic data: a random tensor per input of its shape (token ids below
// the vocabulary of the embedding an int32 input feeds, checked at load)
// and random labels per output.
void make_synthetic_ends(const DataConfig& data, const ModelEnds& ends, std::optional<uint64_t> seed,
                         TrainingData& result) {
  const int64_t samples = option(data, "samples") ? option(data, "samples")->as_int() : 1024;
  const double classes = static_cast<double>(data.classes.value_or(10));
  const uint64_t base_seed = seed.value_or(0);
  for (size_t i = 0; i < ends.inputs.size(); ++i) {
    std::vector<int64_t> dims{samples};
    dims.insert(dims.end(), ends.inputs[i].shape.begin(), ends.inputs[i].shape.end());
    if (ends.inputs[i].dtype == "int32") {
      const double vocabulary = static_cast<double>(ends.vocabularies[i].value_or(1));
      result.train_x.push_back(
          ops::cast(ops::random_uniform(Shape(dims), base_seed + 2 * i, 0.0, vocabulary), DType::kInt32));
    } else {
      result.train_x.push_back(ops::random_uniform(Shape(dims), base_seed + 2 * i));
    }
  }
  for (size_t j = 0; j < ends.outputs.size(); ++j) {
    result.train_y.push_back(
        ops::cast(ops::random_uniform(Shape{samples}, base_seed + 2 * j + 1, 0.0, classes), DType::kInt32));
  }
}

}  // namespace

ModelEnds model_ends(const ModelConfig& model, const DataConfig& data, const std::vector<int64_t>& input_shape) {
  ModelEnds ends;
  if (!model.graph) {
    ends.inputs.push_back({.name = "", .shape = input_shape, .dtype = data.example_dtype});
    ends.vocabularies.push_back(std::nullopt);
    ends.outputs.push_back("");
    return ends;
  }
  ends.inputs = model.graph->inputs;
  for (const GraphInput& input : ends.inputs) ends.vocabularies.push_back(embedding_vocabulary(model, input.name));
  for (const GraphReference& output : model.graph->outputs) ends.outputs.push_back(output.name);
  return ends;
}

TrainingData load_training_data(const DataConfig& data, const ModelEnds& ends, std::optional<uint64_t> seed) {
  TrainingData result;
  if (data.source == "csv" || data.source == "synthetic") {
    DeviceScope on_host("/CPU:0");
    if (data.source == "csv") {
      read_csv_ends(data, ends, result);
      result.notes.push_back("csv data: no test split; evaluation is skipped");
    } else {
      make_synthetic_ends(data, ends, seed, result);
      result.notes.push_back("synthetic data: random examples and labels, no test split (accuracy is chance level)");
    }
    finish(data, result);
    return result;
  }
  // One input (the sources' examples), labels shared by every output.
  OneInput single = load_one_input(data, ends.inputs.front().shape);
  result.test_unigram_entropy = single.test_unigram_entropy;
  result.train_x.push_back(std::move(single.train_x));
  if (single.test_x) result.test_x.push_back(std::move(*single.test_x));
  for (size_t j = 0; j < ends.outputs.size(); ++j) {
    result.train_y.push_back(single.train_y);
    if (single.test_y) result.test_y.push_back(*single.test_y);
  }
  if (ends.outputs.size() > 1) {
    result.notes.push_back(fmt::format("{} outputs: each trained on the examples' labels", ends.outputs.size()));
  }
  result.notes.insert(result.notes.end(), single.notes.begin(), single.notes.end());
  finish(data, result);
  return result;
}

}  // namespace accel::experiment
