// Variable: a named, mutable tensor whose storage outlives the ops that read
// it (tf.Variable). Copies of a Variable are handles to the same variable.
#pragma once

#include <accel/tensor.hpp>

#include <memory>
#include <string>

namespace accel {

// How the copies of a mirrored variable stay in step (tf.VariableSynchronization).
enum class VariableSynchronization {
  // Every write goes to every copy, so the copies stay identical: weights,
  // optimizer slots and counters.
  kOnWrite,
  // Inside a replica, writes go to that replica's copy only (no communication
  // per step); a read outside the replicas aggregates the copies: metric
  // totals, BatchNormalization's moving statistics.
  kOnRead,
};
// How a kOnRead variable's copies combine when read outside the replicas
// (tf.VariableAggregation). An assignment outside the replicas sets every copy
// so that the aggregate reads back the value: MEAN writes it to each copy,
// SUM writes value / copies, as TensorFlow does.
enum class VariableAggregation { kSum, kMean };

class Variable {
 public:
  // An undefined handle; defined() is false.
  Variable() = default;
  // A variable holding its own copy of `initial_value` (on the current device
  // scope, as tf.Variable). `name` is given without the ":0" suffix; name()
  // adds it, as TensorFlow does ("dense/kernel" -> "dense/kernel:0").
  explicit Variable(const Tensor& initial_value, std::string name = "Variable", bool trainable = true,
                    VariableSynchronization synchronization = VariableSynchronization::kOnWrite,
                    VariableAggregation aggregation = VariableAggregation::kMean);

  // Reads the variable: the current replica's copy, or outside the replicas
  // the first copy (kOnWrite) or the aggregate of the copies (kOnRead).
  // Inside a recording GradientTape that watches accessed variables, reading
  // a trainable variable watches it. Inside a VariableAutocastScope a float
  // variable reads as a cast copy in the scope's dtype (variable_autocast.hpp),
  // which later assignments do not change.
  Tensor value() const;

  // Write in place through Tensor::assign: the tensor id and storage stay, so
  // tensors previously returned by value() see the new contents. Assignments
  // are never recorded by a GradientTape (they are not differentiable).
  void assign(const Tensor& new_value);
  void assign_add(const Tensor& delta);
  void assign_sub(const Tensor& delta);

  // Mirrored variables (created under a VariableMirroringScope, see
  // variable_mirroring.hpp) hold one copy per replica device; value() and
  // device() are the current replica's copy, and writes go to every copy
  // (kOnWrite) or, inside a replica, to its own (kOnRead). An ordinary
  // variable has one copy.
  size_t replica_count() const;
  // Copy `replica` without announcing a read (for strategies and tests).
  const Tensor& replica_value(size_t replica) const;

  bool defined() const noexcept { return state_ != nullptr; }
  const std::string& name() const;
  bool trainable() const;
  VariableSynchronization synchronization() const;
  VariableAggregation aggregation() const;
  const Shape& shape() const;
  DType dtype() const;
  Device device() const;
  // The id of the variable's (first) tensor: stable for the life of the variable.
  uint64_t id() const;

  // Same variable (not same contents).
  bool operator==(const Variable& other) const noexcept { return state_ == other.state_; }

 private:
  struct State;
  const State& state() const;
  std::shared_ptr<State> state_;
};

}  // namespace accel
