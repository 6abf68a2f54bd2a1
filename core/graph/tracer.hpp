// Tracer: turns the ops one thread runs into a Graph while they run eagerly.
//
// Tracing is recording, not symbolic execution: the first call of a compiled
// function runs its body as usual, and the tracer, an op observer on that
// thread, writes down every op with its inputs, outputs, attributes and
// device. Tensors the body did not receive as arguments and no traced op
// produced are captures, read by reference at every replay (variables,
// constants made from host data).
//
// A body the graph cannot express makes the trace fail, with a reason, and
// the body then simply finishes eagerly: reading a traced tensor on the host
// (data-dependent control flow), assigning a tensor outside an op, creating a
// variable. Work on host state that must happen at every call is recorded
// explicitly through trace_scopes.hpp (host nodes, refreshed attributes).
#pragma once

#include "graph/graph.hpp"
#include "runtime/op_observer.hpp"
#include "runtime/trace_hooks.hpp"

#include <span>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

namespace accel::graph {

class Tracer final : public detail::OpObserver, public detail::TraceHooks {
 public:
  // Starts recording on this thread; `arguments` become the graph's parameters.
  explicit Tracer(std::span<const Tensor> arguments);
  ~Tracer() override;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Stops recording and returns the graph computing `results`. Only valid
  // when !failed().
  Graph finish(std::span<const Tensor> results);
  bool failed() const noexcept { return !failure_.empty(); }
  // Why the body cannot be traced (the first reason seen), or empty.
  const std::string& failure() const noexcept { return failure_; }

  // The tracer recording on this thread, or null.
  static Tracer* active() noexcept;

  // trace_scopes.hpp: attributes of the ops recorded while set are refreshed
  // before each replay; host work recorded as a node.
  void set_refresh(AttributeRefresh refresh) { refresh_ = std::move(refresh); }
  const AttributeRefresh& refresh() const noexcept { return refresh_; }
  void add_host_work(std::function<void()> work);
  // Host reads and assignments of captured tensors are allowed while > 0.
  void enter_host_state() noexcept { ++host_state_depth_; }
  void leave_host_state() noexcept { --host_state_depth_; }

  // What the traced call changed outside itself, to be put back so that the
  // call's results can come from the compiled program instead (as every
  // later call's do): the captured tensors it assigned, saved on the host
  // before their first assignment, and the host state code registered with
  // undo_on_discard. Taken once, after finish(); run it after this tracer
  // is gone.
  std::function<void()> take_rollback();
  // Saves nothing from here on: the rollback puts back host state only.
  // For a trace whose device tensors hold no values (a timing-only
  // emulator), where saving a model's weights would only fill host memory.
  void keep_assigned_values() noexcept { save_assigned_ = false; }
  void undo_on_discard(std::function<void()> undo) { undos_.push_back(std::move(undo)); }

  // OpObserver
  void on_op_executed(const detail::ExecutedOp& op) override;
  // TraceHooks
  void on_host_read(const Tensor& tensor) override;
  void on_assign(const Tensor& destination, const Tensor& source) override;
  void before_update_in_place(const Tensor& destination) override { save_before_assignment(destination); }
  void on_transfer(const Tensor& source, const Tensor& copy) override;
  void on_untraceable(std::string_view reason) override;

 private:
  void fail(std::string reason);
  // The value a tensor holds: known, or a new capture.
  ValueId value_of(const Tensor& tensor);
  bool is_traced_value(const Tensor& tensor) const;

  // A tensor's bytes before the trace first assigned it.
  struct SavedValue {
    Tensor destination;
    std::vector<uint8_t> bytes;
  };
  void save_before_assignment(const Tensor& destination);

  Graph graph_;
  std::vector<SavedValue> saved_values_;
  bool save_assigned_ = true;
  std::set<std::tuple<const void*, uint64_t>> saved_keys_;  // (storage, byte offset)
  std::vector<std::function<void()>> undos_;
  std::unordered_map<uint64_t, ValueId> values_by_tensor_;
  std::string failure_;
  AttributeRefresh refresh_;
  int host_state_depth_ = 0;
  Tracer* previous_tracer_;
  detail::TraceHooks* previous_hooks_;
  bool finished_ = false;
};

}  // namespace accel::graph
