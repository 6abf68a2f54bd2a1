// Fused optimizer updates (SGD_UPDATE, ADAM_UPDATE, RMSPROP_UPDATE), applied
// in place to the input buffers, following tf.keras 2.x (optimizer_v2) and the
// TensorFlow training ops it calls; docs/op-set.md cites the rules.
//
// Scalar coefficients are computed once in double and the per-element update
// runs in float32, as TensorFlow's kernels do for float variables.
#include "kernels.hpp"

#include <cmath>

namespace accel::host_kernels::detail {
namespace {

void check_same_shapes(std::span<const HostTensor> tensors, const char* names) {
  for (const HostTensor& tensor : tensors) {
    if (!same_shape(tensor, tensors[0])) {
      invalid(std::string("operands (") + names + ") must all have the same shape");
    }
  }
}

ACCEL_VECTOR_CLONES void adam_span(float* var, float* m, float* v, const float* grad, int64_t count, float lr_t,
                                   float beta1, float beta2, float epsilon) {
  for (int64_t i = 0; i < count; ++i) {
    const float g = grad[i];
    m[i] = beta1 * m[i] + (1.0f - beta1) * g;
    v[i] = beta2 * v[i] + (1.0f - beta2) * g * g;
    var[i] -= lr_t * m[i] / (std::sqrt(v[i]) + epsilon);
  }
}

}  // namespace

void sgd_update(std::span<const HostTensor> inputs, const AccelSgdAttributes& attributes) {
  const bool has_momentum = attributes.momentum != 0.0;
  if (inputs.size() != (has_momentum ? 3u : 2u)) {
    invalid(has_momentum ? "SGD with momentum takes (var, grad, velocity)" : "SGD takes (var, grad)");
  }
  check_same_shapes(inputs, "var, grad[, velocity]");
  float* var = data_of<float>(inputs[0]);
  const float* grad = data_of<const float>(inputs[1]);
  const float lr = static_cast<float>(attributes.learning_rate);
  const float momentum = static_cast<float>(attributes.momentum);
  const int64_t count = element_count(inputs[0]);
  if (!has_momentum) {
    parallel_ranges(count, kCheapGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) var[i] -= lr * grad[i];
    });
    return;
  }
  float* velocity = data_of<float>(inputs[2]);
  const bool nesterov = attributes.nesterov != 0;
  parallel_ranges(count, kCheapGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float v = momentum * velocity[i] - lr * grad[i];
      velocity[i] = v;
      var[i] += nesterov ? momentum * v - lr * grad[i] : v;
    }
  });
}

void adam_update(std::span<const HostTensor> inputs, const AccelAdamAttributes& attributes) {
  if (inputs.size() != 4) invalid("ADAM_UPDATE takes (var, m, v, grad)");
  check_same_shapes(inputs, "var, m, v, grad");
  if (attributes.step < 1) invalid("ADAM_UPDATE step is 1-based; got " + std::to_string(attributes.step));
  float* var = data_of<float>(inputs[0]);
  float* m = data_of<float>(inputs[1]);
  float* v = data_of<float>(inputs[2]);
  const float* grad = data_of<const float>(inputs[3]);
  const double t = static_cast<double>(attributes.step);
  const float lr_t = static_cast<float>(attributes.learning_rate *
                                        std::sqrt(1.0 - std::pow(attributes.beta2, t)) /
                                        (1.0 - std::pow(attributes.beta1, t)));
  const float beta1 = static_cast<float>(attributes.beta1), beta2 = static_cast<float>(attributes.beta2);
  const float epsilon = static_cast<float>(attributes.epsilon);
  parallel_ranges(element_count(inputs[0]), kCheapGrain, [&](int64_t begin, int64_t end) {
    adam_span(var + begin, m + begin, v + begin, grad + begin, end - begin, lr_t, beta1, beta2, epsilon);
  });
}

void rmsprop_update(std::span<const HostTensor> inputs, const AccelRmspropAttributes& attributes) {
  if (inputs.size() != 5) invalid("RMSPROP_UPDATE takes (var, ms, mom, mg, grad)");
  check_same_shapes(inputs, "var, ms, mom, mg, grad");
  float* var = data_of<float>(inputs[0]);
  float* ms = data_of<float>(inputs[1]);
  float* mom = data_of<float>(inputs[2]);
  float* mg = data_of<float>(inputs[3]);
  const float* grad = data_of<const float>(inputs[4]);
  const float lr = static_cast<float>(attributes.learning_rate);
  const float rho = static_cast<float>(attributes.rho);
  const float momentum = static_cast<float>(attributes.momentum);
  const float epsilon = static_cast<float>(attributes.epsilon);
  const bool centered = attributes.centered != 0, has_momentum = attributes.momentum > 0.0;
  parallel_ranges(element_count(inputs[0]), kCheapGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float g = grad[i];
      ms[i] = rho * ms[i] + (1.0f - rho) * g * g;
      float denominator = ms[i];
      if (centered) {
        mg[i] = rho * mg[i] + (1.0f - rho) * g;
        denominator -= mg[i] * mg[i];
      }
      if (has_momentum) {  // ApplyRMSProp / ApplyCenteredRMSProp: epsilon inside the root
        mom[i] = momentum * mom[i] + lr * g / std::sqrt(denominator + epsilon);
        var[i] -= mom[i];
      } else {  // Keras's own update: epsilon added to the root
        var[i] -= lr * g / (std::sqrt(denominator) + epsilon);
      }
    }
  });
}

}  // namespace accel::host_kernels::detail
