// Variable mirroring: the hook tf.distribute strategies (core/distribute/)
// use to give a Variable one copy per replica device, as TensorFlow's
// MirroredVariable does, without Keras or the tape knowing about strategies.
//
//   - While a VariableMirroringScope lives (process-wide: replica threads
//     see it too), every new Variable holds one copy of its initial value on
//     each of the scope's devices, component r on device r.
//   - While a ReplicaIndexScope lives on a thread, Variable::value() and
//     Variable::device() of a mirrored variable are replica r's copy, so a
//     replica's forward pass, tape and fused optimizer updates touch only its
//     own copy. Outside any replica the first copy is read.
//   - assign / assign_add / assign_sub write every copy identically, except
//     that inside a replica a kOnRead variable writes only its own copy.
#pragma once

#include <accel/device.hpp>
#include <accel/tensor.hpp>

#include <functional>
#include <vector>

namespace accel {

// What a new variable starts from instead of the value it was given (across
// workers: worker 0's value, broadcast to every worker).
using InitialValueSource = std::function<Tensor(const Tensor& initial_value)>;

class VariableMirroringScope {
 public:
  // An empty list means "no mirroring" (variables are created as usual).
  explicit VariableMirroringScope(std::vector<Device> devices, InitialValueSource initial_value_source = {});
  ~VariableMirroringScope();
  VariableMirroringScope(const VariableMirroringScope&) = delete;
  VariableMirroringScope& operator=(const VariableMirroringScope&) = delete;

 private:
  std::vector<Device> previous_devices_;
  InitialValueSource previous_source_;
};

// The devices new variables are mirrored onto; empty outside any scope.
std::vector<Device> variable_mirroring_devices();
// The initial-value source of the innermost scope, or none.
InitialValueSource variable_initial_value_source();

class ReplicaIndexScope {
 public:
  explicit ReplicaIndexScope(int replica_index);
  ~ReplicaIndexScope();
  ReplicaIndexScope(const ReplicaIndexScope&) = delete;
  ReplicaIndexScope& operator=(const ReplicaIndexScope&) = delete;

 private:
  int previous_;
};

// The replica this thread runs (0 outside any replica).
int current_replica_index() noexcept;
// True on a thread running a replica (inside a ReplicaIndexScope).
bool inside_replica() noexcept;

}  // namespace accel
