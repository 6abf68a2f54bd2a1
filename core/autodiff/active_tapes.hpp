// The GradientTapes recording on the current thread, as Variable needs to see
// them: a read of a trainable variable is announced to every active tape, and
// variable assignments suspend recording. Internal to accel_autodiff.
#pragma once

namespace accel {
class Variable;
}

namespace accel::autodiff::detail {

class VariableReadListener {
 public:
  virtual ~VariableReadListener() = default;
  virtual void on_variable_read(const Variable& variable) = 0;
};

// Tapes add themselves while they live (per thread, like op observers).
void add_active_tape(VariableReadListener* tape);
void remove_active_tape(VariableReadListener* tape);
void announce_variable_read(const Variable& variable);
// Whether a tape records on this thread (a compiled function then runs eagerly,
// so that the tape sees primitive ops it can differentiate).
bool any_active_tape();

// While one lives on this thread, no tape records an op: used around work
// that is not part of the differentiated computation (variable assignment).
class RecordingSuspension {
 public:
  RecordingSuspension();
  ~RecordingSuspension();
  RecordingSuspension(const RecordingSuspension&) = delete;
  RecordingSuspension& operator=(const RecordingSuspension&) = delete;
};
bool recording_suspended();

}  // namespace accel::autodiff::detail
