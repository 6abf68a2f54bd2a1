// Loss's reduction and shape reconciliation (keras.losses.LossFunctionWrapper
// and losses_utils), and the loss registry by Keras name.
#include <accel/keras/losses.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include "../utils/constant_like.hpp"
#include "../utils/cast_to.hpp"

namespace accel::keras {
namespace {

// losses_utils.squeeze_or_expand_dimensions: drop a trailing axis of 1 from
// whichever side has one axis more, so [B, 1] predictions meet [B] labels.
void squeeze_trailing_unit_axis(Tensor& y_true, Tensor& y_pred) {
  const int32_t rank_difference = y_pred.rank() - y_true.rank();
  auto squeezed = [](const Tensor& tensor) {
    std::vector<int64_t> dims = tensor.shape().dims();
    dims.pop_back();
    return tensor.reshape(Shape(std::move(dims)));
  };
  if (rank_difference == 1 && y_pred.shape().dims().back() == 1) {
    y_pred = squeezed(y_pred);
  } else if (rank_difference == -1 && y_true.shape().dims().back() == 1) {
    y_true = squeezed(y_true);
  }
}

// Keras 3 computes losses in float32 (the loss's dtype, floatx) whatever the
// model's policy: 16-bit predictions and labels are cast up first.
Tensor in_float32(const Tensor& tensor) {
  return is_floating(tensor.dtype()) ? detail::cast_to(tensor, DType::kFloat32) : tensor;
}

}  // namespace

Tensor Loss::operator()(const Tensor& y_true, const Tensor& y_pred) const {
  Tensor labels = in_float32(y_true);
  Tensor predictions = in_float32(y_pred);
  // The sparse losses take labels of one axis less by design.
  if (!sparse_labels()) squeeze_trailing_unit_axis(labels, predictions);
  const Tensor losses = call(labels, predictions);
  switch (reduction_) {
    case Reduction::kNone:
      return losses;
    case Reduction::kSum:
      return ops::reduce_sum(losses);
    case Reduction::kSumOverBatchSize:
      // Keras divides the sum by the element count of the per-sample losses.
      return ops::div(ops::reduce_sum(losses),
                      detail::constant_like(static_cast<double>(losses.element_count()), losses));
  }
  throw InternalError("Loss '" + name_ + "': unknown reduction");
}

std::shared_ptr<Loss> get_loss(std::string_view name) {
  if (name == "sparse_categorical_crossentropy") return std::make_shared<SparseCategoricalCrossentropy>();
  if (name == "categorical_crossentropy") return std::make_shared<CategoricalCrossentropy>();
  if (name == "binary_crossentropy") return std::make_shared<BinaryCrossentropy>();
  if (name == "mse" || name == "mean_squared_error") return std::make_shared<MeanSquaredError>();
  throw InvalidArgumentError("unknown loss '" + std::string(name) +
                             "'; expected one of sparse_categorical_crossentropy, categorical_crossentropy, "
                             "binary_crossentropy, mse, mean_squared_error");
}

}  // namespace accel::keras
