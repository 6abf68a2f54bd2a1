// GlobalPooling1D: the shared base of GlobalAveragePooling1D and
// GlobalMaxPooling1D (as Keras's keras/layers/pooling/base_global_pooling1d.py):
// options, the (batch, steps, features) input check and the output shape
// (batch, features), or (batch, 1, features) with keepdims. Subclasses only
// choose the reduction over the steps axis.
#pragma once

#include <accel/keras/layer.hpp>

#include <string>

namespace accel::keras {

struct GlobalPooling1DOptions {
  std::string data_format = "channels_last";  // the only one supported: (batch, steps, features)
  bool keepdims = false;
  std::string name;
};

class GlobalPooling1D : public Layer {
 public:
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  bool keepdims() const noexcept { return keepdims_; }

 protected:
  GlobalPooling1D(std::string class_name, GlobalPooling1DOptions options);

 private:
  bool keepdims_;
};

}  // namespace accel::keras
