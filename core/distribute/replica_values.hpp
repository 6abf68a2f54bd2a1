// Helpers every CrossDeviceOps applies to the values it is given (private to
// accel_distribute): the checks (SUM or MEAN, at least one value, one shape
// and dtype) and the replicas' devices.
#pragma once

#include <accel/device.hpp>
#include <accel/distribute/collective_group.hpp>
#include <accel/tensor.hpp>

#include <vector>

namespace accel::distribute::detail {

// UnimplementedError for MAX / MIN; InvalidArgumentError for no values,
// undefined ones, or values of different shapes or dtypes. `who` names the caller.
void check_replica_values(const char* who, ReduceOp op, const std::vector<Tensor>& per_replica);

// The device of each replica's value, in replica order.
std::vector<Device> replica_devices(const std::vector<Tensor>& per_replica);

}  // namespace accel::distribute::detail
