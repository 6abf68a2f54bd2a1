// accel::function: tf.function for accel. Wraps a body of tensor code; the
// first call for each input signature (shapes, dtypes, devices) runs the body
// while tracing its ops into a graph, compiles the graph (dead code, common
// subexpressions, constants, fusion, buffer planning), puts back what the
// traced run changed (the variables it assigned, random streams) and runs the
// compiled graph for that call's results; later calls replay it without
// running the body. So every call of a signature runs one program.
//
//   accel::Function step = accel::function([&](const std::vector<Tensor>& args) {
//     return std::vector<Tensor>{ops::relu(ops::add(ops::matmul(args[0], w), b))};
//   });
//   Tensor y = step({x})[0];   // traces; the next call with x's signature replays
//
// Semantics are tf.function's: tensors the body reads without receiving them
// (variables, constants) are captured by reference; host values it computes
// are frozen at trace time; a new signature retraces (logged at info level).
// A body the graph cannot express (it reads a computed tensor on the host,
// creates a variable) runs eagerly instead, for that signature, with the
// reason logged once and kept in statistics(). So does any call made while
// a GradientTape records on the thread, or from inside another trace.
//
// jit_compile (XLA's flag): fuse elementwise chains and epilogues into
// kernels the devices claim (plugin API 1.2). Without it the graph is still
// pruned, simplified and buffer-planned. remat: recompute activations in the
// backward pass instead of keeping them (RematPolicy). ACCEL_DUMP_GRAPHS=DIR
// writes each graph as text before and after the passes.
#pragma once

#include <accel/tensor.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel {

// Rematerialization (activation checkpointing) of a traced training step,
// after MaxText's remat policies. Each layer call a Keras model makes is a
// region; the policy says which of a region's activations the forward pass
// keeps for the backward pass. The others are recomputed from what was kept,
// just before the layer's backward pass reads them, so that only one layer's
// activations are live at a time there: peak memory traded for compute.
enum class RematPolicy {
  kNone,     // keep every activation (the default)
  kFull,     // keep only each layer call's inputs, recompute the rest (MaxText "full")
  kMinimal,  // keep matmul and convolution outputs as well (MaxText "minimal")
};
// "none", "full", "minimal": the names training.remat takes. Inline: the
// experiment loader reads them without linking the graph library.
constexpr const char* remat_policy_name(RematPolicy policy) {
  switch (policy) {
    case RematPolicy::kNone: return "none";
    case RematPolicy::kFull: return "full";
    case RematPolicy::kMinimal: return "minimal";
  }
  return "none";
}

// The policy remat_policy_name gives `name`, or nullopt for another name.
constexpr std::optional<RematPolicy> parse_remat_policy(std::string_view name) {
  for (RematPolicy policy : {RematPolicy::kNone, RematPolicy::kFull, RematPolicy::kMinimal}) {
    if (name == remat_policy_name(policy)) return policy;
  }
  return std::nullopt;
}

struct FunctionOptions {
  std::string name = "function";
  bool jit_compile = true;
  RematPolicy remat = RematPolicy::kNone;
};

// What compiling one signature did (the latest signature traced).
struct FunctionStatistics {
  int64_t traces = 0;         // signatures traced so far (tf.function's tracing count)
  int64_t replays = 0;        // calls that ran the compiled graph
  int64_t eager_calls = 0;    // calls that ran the body eagerly (fallback)
  std::string eager_reason;   // why the latest signature is not compiled, or ""
  int64_t traced_ops = 0;     // device ops recorded
  int64_t compiled_ops = 0;   // device ops after the passes
  int32_t dead_ops_removed = 0;
  int32_t common_subexpressions_removed = 0;
  int32_t constants_folded = 0;
  int32_t pooling_gradients_simplified = 0;  // ReLU masks and bias sums moved before MaxPoolGrad
  int32_t ops_recomputed = 0;  // ops the backward pass runs again (FunctionOptions::remat)
  int32_t broadcasts_forwarded = 0;  // operands that read a BroadcastTo's source instead (jit_compile)
  int32_t fusions = 0;        // fused kernels (elementwise and epilogues)
  int32_t ops_fused = 0;      // ops they replaced
  uint64_t fusion_bytes_saved = 0;  // intermediates no longer written and read back
  int32_t in_place_writes = 0;
  uint64_t eager_peak_bytes = 0;    // the step's own tensors, eager vs planned
  uint64_t planned_peak_bytes = 0;
  // Bytes the device ops read and write in one call (each op's inputs and
  // outputs once), as traced and as compiled: the memory traffic a backend
  // without caches would see, and what fusion removes.
  uint64_t traced_bytes_accessed = 0;
  uint64_t compiled_bytes_accessed = 0;
  // On a device that records (a GPU: CUDA graphs): runs of nodes recorded
  // once and replayed with one call instead of dispatched one by one.
  int32_t recorded_runs = 0;       // runs being replayed
  int32_t recorded_nodes = 0;      // device ops in them
  int64_t recordings = 0;          // times a run was recorded (its buffers moved: again)
  int64_t recorded_replays = 0;    // replays of recorded runs
  std::string recording_reason;    // why the latest run given up is dispatched op by op, or ""
};

class Function {
 public:
  using Body = std::function<std::vector<Tensor>(const std::vector<Tensor>& arguments)>;

  Function(Body body, FunctionOptions options = {});
  std::vector<Tensor> operator()(const std::vector<Tensor>& arguments);

  int64_t trace_count() const;
  FunctionStatistics statistics() const;
  // The compiled graph of the latest signature as text ("" before a trace).
  std::string graph_text() const;
  const FunctionOptions& options() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// accel::function(body) as tf.function(body).
Function function(Function::Body body, FunctionOptions options = {});

}  // namespace accel
