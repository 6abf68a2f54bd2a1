// DTypePolicy's names and dtypes, and the process-wide global policy.
#include <accel/keras/mixed_precision.hpp>

#include <accel/error.hpp>

#include <mutex>

namespace accel::keras {
namespace {

struct PolicyDtypes {
  std::string_view name;
  DType compute;
  DType variable;
};

constexpr PolicyDtypes kPolicies[] = {
    {"float32", DType::kFloat32, DType::kFloat32},
    {"bfloat16", DType::kBFloat16, DType::kBFloat16},
    {"float16", DType::kFloat16, DType::kFloat16},
    {"mixed_bfloat16", DType::kBFloat16, DType::kFloat32},
    {"mixed_float16", DType::kFloat16, DType::kFloat32},
};

std::mutex global_policy_mutex;
DTypePolicy& global_policy_storage() {
  static DTypePolicy policy("float32");
  return policy;
}

}  // namespace

DTypePolicy::DTypePolicy(std::string_view name) {
  for (const PolicyDtypes& policy : kPolicies) {
    if (policy.name == name) {
      name_ = std::string(name);
      compute_dtype_ = policy.compute;
      variable_dtype_ = policy.variable;
      return;
    }
  }
  throw InvalidArgumentError("unknown dtype policy '" + std::string(name) +
                             "'; expected one of float32, bfloat16, float16, mixed_bfloat16, mixed_float16");
}

namespace mixed_precision {

void set_global_policy(const DTypePolicy& policy) {
  std::lock_guard lock(global_policy_mutex);
  global_policy_storage() = policy;
}

void set_global_policy(std::string_view name) { set_global_policy(DTypePolicy(name)); }

DTypePolicy global_policy() {
  std::lock_guard lock(global_policy_mutex);
  return global_policy_storage();
}

GlobalPolicyScope::GlobalPolicyScope(const DTypePolicy& policy) : previous_(global_policy()) {
  set_global_policy(policy);
}

GlobalPolicyScope::~GlobalPolicyScope() { set_global_policy(previous_); }

}  // namespace mixed_precision
}  // namespace accel::keras
