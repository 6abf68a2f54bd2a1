#include "batch_source.hpp"

#include <accel/data/element.hpp>
#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include <cmath>
#include <numeric>
#include <random>

namespace accel::keras::detail {
namespace {

// Fisher-Yates over a Mersenne Twister seeded with (seed, pass): the same
// order on every platform (std::shuffle's algorithm is not specified). The
// modulo's bias is below 2^-40 for any realistic sample count.
std::vector<int64_t> shuffled_order(int64_t count, uint64_t seed, uint64_t pass) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::seed_seq seeds{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(pass),
                      static_cast<uint32_t>(pass >> 32)};
  std::mt19937_64 generator(seeds);
  for (int64_t i = count - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(generator() % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

Tensor rows(const Tensor& tensor, int64_t begin, int64_t count) {
  // A batch of every row is the tensor itself: no copy (a compiled step fed
  // whole tensors runs only its own ops).
  if (begin == 0 && count == tensor.shape().dim(0)) return tensor;
  std::vector<int64_t> starts(static_cast<size_t>(tensor.rank()), 0);
  std::vector<int64_t> sizes = tensor.shape().dims();
  starts[0] = begin;
  sizes[0] = count;
  return ops::slice(tensor, std::move(starts), std::move(sizes));
}

}  // namespace

BatchSource BatchSource::from_tensors(Tensor x, Tensor y, int64_t batch_size, bool shuffle, uint64_t seed) {
  if (!x.defined() || x.rank() < 1) throw InvalidArgumentError("model data: x must be a tensor with a batch axis");
  if (y.defined() && (y.rank() < 1 || y.shape().dim(0) != x.shape().dim(0))) {
    throw InvalidArgumentError("model data: x has " + std::to_string(x.shape().dim(0)) + " samples but y has shape " +
                               y.shape().to_string());
  }
  if (batch_size <= 0) throw InvalidArgumentError("model data: batch_size must be positive, got " + std::to_string(batch_size));
  BatchSource source;
  source.x_ = std::move(x);
  source.y_ = std::move(y);
  source.batch_size_ = batch_size;
  source.shuffle_ = shuffle;
  source.seed_ = seed;
  const int64_t samples = source.x_.shape().dim(0);
  source.batches_per_pass_ = (samples + batch_size - 1) / batch_size;
  return source;
}

BatchSource BatchSource::from_tensor_lists(std::vector<Tensor> x, std::vector<Tensor> y, int64_t batch_size,
                                           bool shuffle, uint64_t seed) {
  if (x.empty()) throw InvalidArgumentError("model data: no inputs given");
  for (const Tensor& tensor : x) {
    if (!tensor.defined() || tensor.rank() < 1 || tensor.shape().dim(0) != x.front().shape().dim(0)) {
      throw InvalidArgumentError("model data: every input needs a batch axis of the same number of samples");
    }
  }
  for (const Tensor& tensor : y) {
    if (!tensor.defined() || tensor.rank() < 1 || tensor.shape().dim(0) != x.front().shape().dim(0)) {
      throw InvalidArgumentError("model data: the inputs have " + std::to_string(x.front().shape().dim(0)) +
                                 " samples; every target needs as many");
    }
  }
  BatchSource source = from_tensors(x.front(), y.empty() ? Tensor() : y.front(), batch_size, shuffle, seed);
  source.lists_ = true;
  source.x_list_ = std::move(x);
  source.y_list_ = std::move(y);
  return source;
}

BatchSource BatchSource::from_dataset(data::Dataset dataset) {
  BatchSource source;
  source.dataset_ = std::move(dataset);
  return source;
}

void BatchSource::begin_pass() {
  batches_this_pass_ = 0;
  position_ = 0;
  if (dataset_) {
    iterator_ = std::make_shared<data::Iterator>(dataset_->make_iterator());
  } else if (shuffle_) {
    order_ = std::make_shared<const std::vector<int64_t>>(shuffled_order(x_.shape().dim(0), seed_, passes_));
  }
  ++passes_;
}

std::optional<Batch> BatchSource::next() {
  if (dataset_) {
    if (!iterator_) begin_pass();
    std::optional<data::Element> element = iterator_->next();
    if (!element) {
      batches_per_pass_ = batches_this_pass_;  // now the length is known, as Keras infers it
      return std::nullopt;
    }
    if (element->empty()) throw InvalidArgumentError("model data: the Dataset yielded an empty element");
    ++batches_this_pass_;
    return Batch{(*element)[0], element->size() > 1 ? (*element)[1] : Tensor()};
  }
  const int64_t samples = x_.shape().dim(0);
  if (position_ >= samples) return std::nullopt;
  const int64_t count = std::min(batch_size_, samples - position_);
  // Batches are cut on the device holding the data (the host, as tf.data does);
  // the model's first op then moves only the batch to the model's device.
  Batch batch;
  Tensor index_tensor;
  if (shuffle_) {
    if (!order_) begin_pass();
    const std::vector<int64_t> indices(order_->begin() + position_, order_->begin() + position_ + count);
    index_tensor = Tensor::from_vector<int64_t>(indices, Shape{count}, x_.device());
  }
  auto cut = [&](const Tensor& tensor) {
    DeviceScope data_device(tensor.device());
    return shuffle_ ? ops::gather(tensor, index_tensor.to(tensor.device()), 0) : rows(tensor, position_, count);
  };
  if (lists_) {
    for (const Tensor& input : x_list_) batch.inputs.push_back(cut(input));
    for (const Tensor& target : y_list_) batch.targets.push_back(cut(target));
    batch.x = batch.inputs.front();
    if (!batch.targets.empty()) batch.y = batch.targets.front();
  } else {
    batch.x = cut(x_);
    if (y_.defined()) batch.y = cut(y_);
  }
  position_ += count;
  ++batches_this_pass_;
  return batch;
}

std::pair<LabeledTensors, LabeledTensors> split_last_fraction(const Tensor& x, const Tensor& y, double fraction) {
  if (!(fraction > 0.0 && fraction < 1.0)) {
    throw InvalidArgumentError("validation_split must be in (0, 1), got " + std::to_string(fraction));
  }
  const int64_t samples = x.shape().dim(0);
  const auto split_at = static_cast<int64_t>(std::floor(static_cast<double>(samples) * (1.0 - fraction)));
  if (split_at == 0 || split_at == samples) {
    throw InvalidArgumentError("validation_split " + std::to_string(fraction) + " of " + std::to_string(samples) +
                               " samples leaves no " + (split_at == 0 ? "training" : "validation") + " samples");
  }
  return {LabeledTensors{rows(x, 0, split_at), rows(y, 0, split_at)},
          LabeledTensors{rows(x, split_at, samples - split_at), rows(y, split_at, samples - split_at)}};
}

std::pair<LabeledTensorLists, LabeledTensorLists> split_last_fraction(const std::vector<Tensor>& x,
                                                                      const std::vector<Tensor>& y, double fraction) {
  std::pair<LabeledTensorLists, LabeledTensorLists> parts;
  for (const Tensor& input : x) {
    auto [kept, held_out] = split_last_fraction(input, input, fraction);
    parts.first.x.push_back(std::move(kept.x));
    parts.second.x.push_back(std::move(held_out.x));
  }
  for (const Tensor& target : y) {
    auto [kept, held_out] = split_last_fraction(target, target, fraction);
    parts.first.y.push_back(std::move(kept.x));
    parts.second.y.push_back(std::move(held_out.x));
  }
  return parts;
}

}  // namespace accel::keras::detail
