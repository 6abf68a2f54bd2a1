#include "training_data.hpp"

#include <accel/data/fashion_mnist_tokens.hpp>

#include <accel/data/csv_reader.hpp>
#include <accel/data/fashion_mnist.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <fmt/format.h>

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

Tensor shaped_for_model(const Tensor& x, const std::vector<int64_t>& input_shape) {
  std::vector<int64_t> dims{x.shape()[0]};
  dims.insert(dims.end(), input_shape.begin(), input_shape.end());
  return x.reshape(Shape(dims));
}

}  // namespace

TrainingData load_training_data(const DataConfig& data, const std::vector<int64_t>& input_shape, std::optional<uint64_t> seed) {
  DeviceScope on_host("/CPU:0");
  TrainingData result;
  const Value* take = option(data, "take");
  const Value* one_hot = option(data, "one_hot");
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
  } else if (data.source == "synthetic") {
    const int64_t samples = option(data, "samples") ? option(data, "samples")->as_int() : 1024;
    const int64_t classes = data.classes.value_or(10);
    std::vector<int64_t> dims{samples};
    dims.insert(dims.end(), data.example_shape.begin(), data.example_shape.end());
    const uint64_t base_seed = seed.value_or(0);
    result.train_x = ops::random_uniform(Shape(dims), base_seed);
    result.train_y = ops::cast(ops::random_uniform(Shape{samples}, base_seed + 1, 0.0, static_cast<double>(classes)),
                               DType::kInt32);
    result.notes.push_back("synthetic data: random examples and labels, no test split (accuracy is chance level)");
  } else if (data.source == "csv") {
    data::CsvOptions options;
    if (const Value* label = option(data, "label_column")) options.label_column = label->as_text();
    options.label_dtype = DType::kInt32;
    data::CsvData loaded = data::read_csv(option(data, "path")->as_text(), options);
    result.train_x = loaded.features;
    result.train_y = loaded.labels;
    result.notes.push_back("csv data: no test split; evaluation is skipped");
  } else {
    throw UnimplementedError(fmt::format("data source '{}' is not supported by the runner yet", data.source));
  }
  if (take) {
    result.train_x = first_rows(result.train_x, take->as_int());
    result.train_y = first_rows(result.train_y, take->as_int());
  }
  result.train_x = shaped_for_model(result.train_x, input_shape);
  if (result.test_x) result.test_x = shaped_for_model(*result.test_x, input_shape);
  if (one_hot && one_hot->as_bool()) {
    const int64_t classes = data.classes.value_or(10);
    result.train_y = ops::one_hot(result.train_y, classes);
    if (result.test_y) result.test_y = ops::one_hot(*result.test_y, classes);
  }
  if (option(data, "drop_remainder") && option(data, "drop_remainder")->as_bool()) {
    result.notes.push_back("data.drop_remainder is not applied: fit keeps a last, smaller batch");
  }
  return result;
}

}  // namespace accel::experiment
