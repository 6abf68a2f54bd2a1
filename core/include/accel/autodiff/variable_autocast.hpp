// VariableAutocastScope: inside it, reading a float variable (Variable::value)
// gives its value cast to the scope's dtype, recorded like any other op so that
// gradients reach the variable in its own dtype. This is how a layer under a
// mixed policy reads its float32 weights in bfloat16 or float16 without a
// second copy of them (Keras 3's AutocastScope). Scopes nest per thread; the
// innermost decides.
#pragma once

#include <accel/dtype.hpp>

#include <optional>

namespace accel {

class VariableAutocastScope {
 public:
  // `dtype` unset: variables read as stored, whatever an outer scope says
  // (a layer that does not autocast, as the normalization layers).
  explicit VariableAutocastScope(std::optional<DType> dtype);
  ~VariableAutocastScope();
  VariableAutocastScope(const VariableAutocastScope&) = delete;
  VariableAutocastScope& operator=(const VariableAutocastScope&) = delete;

  // The dtype float variables are read in on this thread now, if any.
  static std::optional<DType> current() noexcept;

 private:
  std::optional<DType> previous_;
};

}  // namespace accel
