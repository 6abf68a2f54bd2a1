// Mirrored variables' copies, and SyncOnReadVariable: a kOnRead Variable made
// inside the strategy's scope.
#include <accel/distribute/mirrored_variable.hpp>

namespace accel::distribute {

bool is_mirrored(const Variable& variable) { return variable.replica_count() > 1; }

std::vector<Tensor> mirrored_copies(const Variable& variable) {
  std::vector<Tensor> copies;
  for (size_t replica = 0; replica < variable.replica_count(); ++replica) copies.push_back(variable.replica_value(replica));
  return copies;
}

SyncOnReadVariable::SyncOnReadVariable(Strategy& strategy, const Tensor& initial_value, std::string name,
                                       VariableAggregation aggregation) {
  strategy.run_in_scope([&] {
    variable_ = Variable(initial_value, std::move(name), /*trainable=*/false, VariableSynchronization::kOnRead,
                         aggregation);
  });
}

}  // namespace accel::distribute
