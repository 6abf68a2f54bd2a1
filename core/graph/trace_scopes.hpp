// How code that runs inside a compiled step tells the tracer about host state
// it depends on. Outside a trace each of these simply runs the code (or does
// nothing), so layers and optimizers use them unconditionally.
//
//   // The learning rate and step of these updates are host values that
//   // change every step: recompute them before every replay.
//   graph::RefreshedAttributes refreshed([this](int32_t op, void* attributes) { ... });
//   ops::adam_update(...);
//
//   // Counting the iteration is host work that must run at every call.
//   graph::run_host_work([this] { count_iteration(); });
#pragma once

#include "graph/graph.hpp"

#include <functional>

namespace accel::graph {

// While it lives, every op the tracer records gets `refresh`.
class RefreshedAttributes {
 public:
  explicit RefreshedAttributes(AttributeRefresh refresh);
  ~RefreshedAttributes();
  RefreshedAttributes(const RefreshedAttributes&) = delete;
  RefreshedAttributes& operator=(const RefreshedAttributes&) = delete;

 private:
  AttributeRefresh saved_;
  bool tracing_;
};

// Runs `work` now; while tracing, also records it as a host node that runs in
// its place at every replay. Inside `work`, host reads and assignments of
// captured tensors are allowed.
void run_host_work(const std::function<void()>& work);

// Host state that code changes while it is traced (a random stream's
// position) and that the tracer must put back when the traced call's results
// are discarded for the compiled program's: `undo` runs then. Outside a
// trace, nothing happens.
void undo_on_discard(std::function<void()> undo);

// While it lives, reading captured tensors on the host is allowed: the code
// inside only derives values that a RefreshedAttributes or a host node
// recomputes at every replay.
class HostStateScope {
 public:
  HostStateScope();
  ~HostStateScope();
  HostStateScope(const HostStateScope&) = delete;
  HostStateScope& operator=(const HostStateScope&) = delete;
};

}  // namespace accel::graph
