// Checks every CrossDeviceOps applies to the values it is given (private to
// accel_distribute): SUM or MEAN, at least one value, one shape and dtype.
#pragma once

#include <accel/distribute/collective_group.hpp>
#include <accel/tensor.hpp>

#include <vector>

namespace accel::distribute::detail {

// UnimplementedError for MAX / MIN; InvalidArgumentError for no values,
// undefined ones, or values of different shapes or dtypes. `who` names the caller.
void check_replica_values(const char* who, ReduceOp op, const std::vector<Tensor>& per_replica);

}  // namespace accel::distribute::detail
