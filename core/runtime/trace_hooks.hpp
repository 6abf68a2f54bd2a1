// What a tracer (core/graph/) must hear about that is not an op: a tensor
// read on the host, a tensor written by assign, a tensor copied to another
// device, a variable created. Ops reach it as op observers do; these reach
// it through one per-thread pointer, null unless the thread is tracing, so
// the cost when not tracing is one thread-local load. Internal to libaccel.
#pragma once

#include <accel/tensor.hpp>

#include <string_view>

namespace accel::detail {

class TraceHooks {
 public:
  virtual ~TraceHooks() = default;
  virtual void on_host_read(const Tensor& tensor) = 0;
  virtual void on_assign(const Tensor& destination, const Tensor& source) = 0;
  // An op is about to update `destination` in place (an optimizer's update
  // ops: OpInfo::updated_inputs). on_op_executed follows once it has.
  virtual void before_update_in_place(const Tensor& destination) = 0;
  // `copy` holds the same value as `source`, on another device.
  virtual void on_transfer(const Tensor& source, const Tensor& copy) = 0;
  // Something the graph cannot express happened (creating a variable, ...).
  virtual void on_untraceable(std::string_view reason) = 0;
};

// The tracing hooks of this thread, or null.
TraceHooks* active_trace_hooks() noexcept;
void set_active_trace_hooks(TraceHooks* hooks) noexcept;

// While one lives, this thread's hooks hear nothing: host-side work that the
// graph records by other means (a host node, a refreshed attribute) or that
// belongs to dispatch itself (staging copies between devices).
class TraceHooksSuspension {
 public:
  TraceHooksSuspension() noexcept : saved_(active_trace_hooks()) { set_active_trace_hooks(nullptr); }
  ~TraceHooksSuspension() { set_active_trace_hooks(saved_); }
  TraceHooksSuspension(const TraceHooksSuspension&) = delete;
  TraceHooksSuspension& operator=(const TraceHooksSuspension&) = delete;

 private:
  TraceHooks* saved_;
};

}  // namespace accel::detail
