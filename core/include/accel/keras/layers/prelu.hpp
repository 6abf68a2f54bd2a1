// PReLU (keras.layers.PReLU): the leaky ReLU with a learned slope, one per
// input element (batch aside) unless `shared_axes` shares it along axes (the
// image axes of a CNN, so that each channel learns one slope). Owns `alpha`,
// of the input's shape after the batch axis with the shared axes set to 1.
#pragma once

#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>

#include <memory>
#include <string>
#include <vector>

namespace accel::keras {

struct PReLUOptions {
  std::shared_ptr<Initializer> alpha_initializer = std::make_shared<Zeros>();
  // 1-based axes (the batch axis is 0) along which one slope is shared, as Keras's shared_axes.
  std::vector<int32_t> shared_axes;
  std::string name;
};

// relu(x) - alpha * relu(-x), in Keras's order of operations.
class PReLU final : public Layer {
 public:
  explicit PReLU(PReLUOptions options = {});

  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  const Variable& alpha() const { return alpha_; }
  const PReLUOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  PReLUOptions options_;
  Variable alpha_;
};

}  // namespace accel::keras
