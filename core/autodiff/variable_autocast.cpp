#include <accel/autodiff/variable_autocast.hpp>

namespace accel {
namespace {

thread_local std::optional<DType> autocast_dtype;

}  // namespace

VariableAutocastScope::VariableAutocastScope(std::optional<DType> dtype) : previous_(autocast_dtype) {
  autocast_dtype = dtype;
}

VariableAutocastScope::~VariableAutocastScope() { autocast_dtype = previous_; }

std::optional<DType> VariableAutocastScope::current() noexcept { return autocast_dtype; }

}  // namespace accel
