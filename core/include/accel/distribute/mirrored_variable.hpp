// Mirrored and sync-on-read variables (tf.distribute's MirroredVariable and
// SyncOnReadVariable).
//
// Mirrored: any Variable created inside a strategy's scope(). One copy per
// replica device, equal at creation; a replica reads its own copy; assign /
// assign_add / assign_sub and optimizer updates write every copy identically
// (optimizers get the SUM-all-reduced gradient), so the copies never diverge.
// The copies are Variable::replica_value(r); the functions below name them.
//
// Sync-on-read (VariableSynchronization::kOnRead, accel/autodiff/variable.hpp):
// each replica writes only its own copy (no communication per step), and a
// read outside the replicas aggregates the copies: the totals of metrics (a
// loss sum, a correct-count) and batch-norm statistics are kept like this.
// Read inside a replica, it is that replica's copy.
#pragma once

#include <accel/autodiff/variable.hpp>
#include <accel/distribute/strategy.hpp>

#include <string>
#include <vector>

namespace accel::distribute {

bool is_mirrored(const Variable& variable);
// Strategy::experimental_local_results for a variable: its copies in replica order.
std::vector<Tensor> mirrored_copies(const Variable& variable);

// A kOnRead variable with one copy per replica of `strategy` (what
// tf.Variable(..., synchronization=ON_READ) makes inside strategy.scope()).
class SyncOnReadVariable {
 public:
  SyncOnReadVariable(Strategy& strategy, const Tensor& initial_value, std::string name,
                     VariableAggregation aggregation = VariableAggregation::kSum);

  // The variable: inside a replica its reads and writes touch that replica's copy.
  Variable& local() { return variable_; }
  // Inside a replica: its copy's value. Outside: the aggregation of all copies.
  Tensor read_value() const { return variable_.value(); }
  // Outside the replicas, sets the copies so that the aggregate reads `value`.
  void assign(const Tensor& value) { variable_.assign(value); }
  std::vector<Tensor> copies() const { return mirrored_copies(variable_); }

 private:
  Variable variable_;
};

}  // namespace accel::distribute
