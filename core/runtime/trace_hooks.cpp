// The per-thread tracing hooks pointer (trace_hooks.hpp).
#include "runtime/trace_hooks.hpp"

namespace accel::detail {
namespace {
thread_local TraceHooks* active_hooks = nullptr;
}  // namespace

TraceHooks* active_trace_hooks() noexcept { return active_hooks; }
void set_active_trace_hooks(TraceHooks* hooks) noexcept { active_hooks = hooks; }

}  // namespace accel::detail
