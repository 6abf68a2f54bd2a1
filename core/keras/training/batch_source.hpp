// BatchSource (Keras 2's DataHandler, internal): the batches fit, evaluate and
// predict run over, from whole tensors (sliced, or gathered in a seeded
// per-pass order when shuffling) or from a Dataset that yields batches.
#pragma once

#include <accel/data/dataset.hpp>
#include <accel/keras/model.hpp>
#include <accel/tensor.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace accel::keras::detail {

struct Batch {
  Tensor x;
  Tensor y;  // undefined when the data has no labels (predict)
  // Data of several inputs or outputs (from_tensor_lists): every input's and
  // every target's rows; x and y are then the first of each.
  std::vector<Tensor> inputs;
  std::vector<Tensor> targets;
};

class BatchSource {
 public:
  // `y` may be undefined (predict). Shuffling draws pass p's order from (seed, p).
  static BatchSource from_tensors(Tensor x, Tensor y, int64_t batch_size, bool shuffle, uint64_t seed);
  static BatchSource from_dataset(data::Dataset dataset);
  // Several inputs and targets (a model of several inputs or outputs), cut
  // into the same rows; `y` may be empty (predict).
  static BatchSource from_tensor_lists(std::vector<Tensor> x, std::vector<Tensor> y, int64_t batch_size, bool shuffle,
                                       uint64_t seed);

  // Batches in one pass over the data; unknown for a Dataset until a pass ends.
  std::optional<int64_t> batches_per_pass() const noexcept { return batches_per_pass_; }
  bool from_dataset() const noexcept { return dataset_.has_value(); }
  bool from_tensor_lists() const noexcept { return lists_; }
  // Starts a new pass (a new order when shuffling, a new Dataset iterator).
  void begin_pass();
  // The next batch of the current pass, or nullopt when the pass is over.
  std::optional<Batch> next();

 private:
  BatchSource() = default;

  Tensor x_;
  Tensor y_;
  bool lists_ = false;  // from_tensor_lists: x_ and y_ are the first of these
  std::vector<Tensor> x_list_;
  std::vector<Tensor> y_list_;
  int64_t batch_size_ = 32;
  bool shuffle_ = false;
  uint64_t seed_ = 0;
  std::optional<data::Dataset> dataset_;
  std::shared_ptr<data::Iterator> iterator_;
  std::optional<int64_t> batches_per_pass_;
  uint64_t passes_ = 0;
  int64_t batches_this_pass_ = 0;
  int64_t position_ = 0;             // next sample (tensors)
  std::shared_ptr<const std::vector<int64_t>> order_;  // this pass's sample order when shuffling
};

// Splits (x, y) into the first 1 - fraction and the last fraction of the
// samples (Keras's train_validation_split: split at floor(n * (1 - fraction))).
std::pair<LabeledTensors, LabeledTensors> split_last_fraction(const Tensor& x, const Tensor& y, double fraction);
// The same split of every input and target.
struct LabeledTensorLists {
  std::vector<Tensor> x;
  std::vector<Tensor> y;
};
std::pair<LabeledTensorLists, LabeledTensorLists> split_last_fraction(const std::vector<Tensor>& x,
                                                                      const std::vector<Tensor>& y, double fraction);

}  // namespace accel::keras::detail
