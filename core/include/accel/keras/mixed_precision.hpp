// Keras dtype policies (keras.DTypePolicy, keras.mixed_precision): which dtype
// a layer computes in and which dtype its variables are stored in, and the
// global policy that new layers take. A layer keeps its own copy of its policy
// (layer.hpp); this header owns only the policy type and the global setting.
#pragma once

#include <accel/dtype.hpp>

#include <string>
#include <string_view>

namespace accel::keras {

class DTypePolicy {
 public:
  // Keras 3's names: "float32", "bfloat16", "float16" (compute and variables
  // in that dtype), "mixed_bfloat16", "mixed_float16" (compute in the 16-bit
  // dtype, variables in float32). Any other name is InvalidArgumentError
  // naming the valid ones.
  explicit DTypePolicy(std::string_view name = "float32");

  const std::string& name() const noexcept { return name_; }
  // The dtype a layer's float inputs and variables are cast to when it is called.
  DType compute_dtype() const noexcept { return compute_dtype_; }
  // The dtype a layer's variables are created and updated in.
  DType variable_dtype() const noexcept { return variable_dtype_; }
  // Compute and variable dtypes differ (the mixed_* policies).
  bool is_mixed() const noexcept { return compute_dtype_ != variable_dtype_; }

  bool operator==(const DTypePolicy& other) const noexcept { return name_ == other.name_; }

 private:
  std::string name_;
  DType compute_dtype_ = DType::kFloat32;
  DType variable_dtype_ = DType::kFloat32;
};

namespace mixed_precision {

// The policy of every layer made afterwards that is given none
// (keras.mixed_precision.set_global_policy); "float32" until set.
void set_global_policy(const DTypePolicy& policy);
void set_global_policy(std::string_view name);
DTypePolicy global_policy();

// Sets the global policy for the life of the scope and restores the previous
// one after (a YAML run under training.mixed_precision, a test).
class GlobalPolicyScope {
 public:
  explicit GlobalPolicyScope(const DTypePolicy& policy);
  ~GlobalPolicyScope();
  GlobalPolicyScope(const GlobalPolicyScope&) = delete;
  GlobalPolicyScope& operator=(const GlobalPolicyScope&) = delete;

 private:
  DTypePolicy previous_;
};

}  // namespace mixed_precision
}  // namespace accel::keras
