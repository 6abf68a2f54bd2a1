// RMSNormalization (keras.layers.RMSNormalization, Keras 3): scales each
// example by the reciprocal root mean square of its values over `axis`
// (by default the last), then by a learned `scale` of the normalized axes'
// shape: x * rsqrt(mean(x^2) + epsilon) * scale. Unlike LayerNormalization
// it subtracts no mean and has no offset, as the decoders of Gopher, LLaMA
// and Gemma use it. Computed in float32 at least, as Keras's
// ops.rms_normalization. Owns `scale` (ones).
#pragma once

#include <accel/keras/initializers.hpp>
#include <accel/keras/layer.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace accel::keras {

struct RMSNormalizationOptions {
  std::vector<int32_t> axis = {-1};  // negative ones count from the end
  double epsilon = 1e-6;
  std::string name;
};

class RMSNormalization final : public Layer {
 public:
  explicit RMSNormalization(RMSNormalizationOptions options = {});
  LayerShape compute_output_shape(const LayerShape& input_shape) const override { return input_shape; }
  const Variable& scale() const { return scale_; }
  const RMSNormalizationOptions& options() const noexcept { return options_; }

 protected:
  void build_weights(const LayerShape& input_shape) override;
  Tensor call(const Tensor& inputs, bool training) override;

 private:
  RMSNormalizationOptions options_;
  std::vector<int32_t> axes_;
  Shape broadcast_shape_;
  Variable scale_;
};

}  // namespace accel::keras
