#include <accel/autodiff/variable.hpp>

#include <accel/autodiff/variable_autocast.hpp>
#include <accel/autodiff/variable_mirroring.hpp>
#include <accel/placement.hpp>

#include <accel/error.hpp>
#include <accel/ops.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "active_tapes.hpp"
#include "runtime/trace_hooks.hpp"

namespace accel {

struct Variable::State {
  Tensor tensor;  // the first (or only) copy
  std::string name;
  bool trainable;
  VariableSynchronization synchronization;
  VariableAggregation aggregation;
  // A mirrored variable's copies, one per replica device (tensor is the first);
  // empty for an ordinary variable. See variable_mirroring.hpp.
  std::vector<Tensor> replica_copies;

  // The copy the current replica reads.
  const Tensor& local_tensor() const {
    if (replica_copies.empty()) return tensor;
    const size_t replica = static_cast<size_t>(current_replica_index());
    return replica < replica_copies.size() ? replica_copies[replica] : tensor;
  }
  std::vector<Tensor> all_copies() const {
    return replica_copies.empty() ? std::vector<Tensor>{tensor} : replica_copies;
  }
  // kOnRead copies are aggregated when read outside the replicas.
  bool aggregates_on_read() const {
    return synchronization == VariableSynchronization::kOnRead && !replica_copies.empty() && !inside_replica();
  }
  // The SUM or MEAN of the copies, on the first copy's device.
  Tensor aggregate() const {
    DeviceScope on_first_copy(tensor.device());
    Tensor total = ops::copy(tensor);
    for (size_t replica = 1; replica < replica_copies.size(); ++replica) {
      total = ops::add(total, replica_copies[replica].to(tensor.device()));
    }
    if (aggregation == VariableAggregation::kSum) return total;
    return ops::mul(total, ops::fill(Shape{}, 1.0 / static_cast<double>(replica_copies.size()), total.dtype()));
  }
};

Variable::Variable(const Tensor& initial_value, std::string name, bool trainable,
                   VariableSynchronization synchronization, VariableAggregation aggregation) {
  if (!initial_value.defined()) {
    throw InvalidArgumentError("Variable '" + name + "': the initial value is an undefined Tensor");
  }
  if (!name.ends_with(":0")) name += ":0";
  if (accel::detail::TraceHooks* hooks = accel::detail::active_trace_hooks()) {
    // tf.function forbids this too: a replay would create it again every call.
    hooks->on_untraceable("creates the variable '" + name + "'");
  }
  // The variable owns its storage (assignments must not write into the
  // caller's tensor), and creating it is not part of any differentiated computation.
  autodiff::detail::RecordingSuspension not_recorded;
  const std::vector<Device> mirror_devices = variable_mirroring_devices();
  const InitialValueSource source = variable_initial_value_source();
  const Tensor start = source ? source(initial_value) : initial_value;
  if (mirror_devices.empty()) {
    state_ = std::make_shared<State>(
        State{ops::copy(start), std::move(name), trainable, synchronization, aggregation, {}});
    return;
  }
  std::vector<Tensor> copies;
  for (const Device& device : mirror_devices) {
    DeviceScope on_replica_device(device);
    copies.push_back(ops::copy(start.to(device)));
  }
  Tensor first = copies.front();
  state_ = std::make_shared<State>(State{first, std::move(name), trainable, synchronization, aggregation,
                                         mirror_devices.size() > 1 ? std::move(copies) : std::vector<Tensor>{}});
}

const Variable::State& Variable::state() const {
  if (!state_) throw FailedPreconditionError("use of an undefined Variable");
  return *state_;
}

Tensor Variable::value() const {
  const State& variable = state();
  if (variable.trainable) autodiff::detail::announce_variable_read(*this);
  Tensor stored;
  if (variable.aggregates_on_read()) {
    autodiff::detail::RecordingSuspension not_recorded;
    stored = variable.aggregate();
  } else {
    stored = variable.local_tensor();
  }
  const std::optional<DType> autocast = VariableAutocastScope::current();
  if (autocast && is_floating(stored.dtype()) && stored.dtype() != *autocast) return ops::cast(stored, *autocast);
  return stored;
}

size_t Variable::replica_count() const { return std::max<size_t>(1, state().replica_copies.size()); }

const Tensor& Variable::replica_value(size_t replica) const {
  const State& variable = state();
  if (variable.replica_copies.empty()) {
    if (replica != 0) throw InvalidArgumentError("Variable '" + variable.name + "' is not mirrored: no copy " + std::to_string(replica));
    return variable.tensor;
  }
  if (replica >= variable.replica_copies.size()) {
    throw InvalidArgumentError("Variable '" + variable.name + "' has " +
                               std::to_string(variable.replica_copies.size()) + " copies, not " +
                               std::to_string(replica + 1));
  }
  return variable.replica_copies[replica];
}

void Variable::assign(const Tensor& new_value) {
  const State& variable = state();
  if (new_value.shape() != variable.tensor.shape() || new_value.dtype() != variable.tensor.dtype()) {
    throw InvalidArgumentError("Variable '" + variable.name + "': cannot assign a " +
                               std::string(dtype_name(new_value.dtype())) +
                               new_value.shape().to_string() + " value to a " +
                               std::string(dtype_name(variable.tensor.dtype())) +
                               variable.tensor.shape().to_string() + " variable");
  }
  autodiff::detail::RecordingSuspension not_recorded;
  if (variable.synchronization == VariableSynchronization::kOnRead && !variable.replica_copies.empty()) {
    if (inside_replica()) {
      Tensor(variable.local_tensor()).assign(new_value);
      return;
    }
    if (variable.aggregation == VariableAggregation::kSum) {
      // Every copy gets value / copies, so that their sum reads back `value`.
      DeviceScope on_value_device(new_value.device());
      const Tensor share = ops::mul(
          new_value, ops::fill(Shape{}, 1.0 / static_cast<double>(variable.replica_copies.size()), new_value.dtype()));
      for (Tensor destination : variable.all_copies()) destination.assign(share);
      return;
    }
  }
  for (Tensor destination : variable.all_copies()) destination.assign(new_value);
}

// The copies of a mirrored (kOnWrite) variable hold the same value, so the
// current copy's sum is written to every copy (identical writes). A kOnRead
// variable adds to its own copy inside a replica, to the aggregate outside.
void Variable::assign_add(const Tensor& delta) {
  Tensor sum;
  {
    autodiff::detail::RecordingSuspension not_recorded;
    const State& variable = state();
    sum = ops::add(variable.aggregates_on_read() ? variable.aggregate() : variable.local_tensor(), delta);
  }
  assign(sum);
}

void Variable::assign_sub(const Tensor& delta) {
  Tensor difference;
  {
    autodiff::detail::RecordingSuspension not_recorded;
    const State& variable = state();
    difference = ops::sub(variable.aggregates_on_read() ? variable.aggregate() : variable.local_tensor(), delta);
  }
  assign(difference);
}

const std::string& Variable::name() const { return state().name; }
bool Variable::trainable() const { return state().trainable; }
VariableSynchronization Variable::synchronization() const { return state().synchronization; }
VariableAggregation Variable::aggregation() const { return state().aggregation; }
const Shape& Variable::shape() const { return state().tensor.shape(); }
DType Variable::dtype() const { return state().tensor.dtype(); }
Device Variable::device() const { return state().local_tensor().device(); }
uint64_t Variable::id() const { return state().tensor.id(); }

}  // namespace accel
