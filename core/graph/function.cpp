// accel::Function: signatures, tracing on a new one, replay, eager fallback.
#include <accel/function.hpp>

#include "autodiff/active_tapes.hpp"
#include "graph/compiler.hpp"
#include "graph/tracer.hpp"
#include "runtime/logging.hpp"
#include "runtime/logical_device.hpp"

#include <accel/error.hpp>

#include <fmt/format.h>

#include <map>
#include <mutex>

namespace accel {
namespace {

// What a call must match to replay a graph: per argument, shape, dtype and device.
std::string signature_of(const std::vector<Tensor>& arguments) {
  std::string signature;
  for (const Tensor& argument : arguments) {
    if (!argument.defined()) throw InvalidArgumentError("accel::function: an argument is undefined");
    signature += fmt::format("{}{}{} on {}", signature.empty() ? "" : ", ", dtype_name(argument.dtype()),
                             argument.shape().to_string(), argument.storage()->device->name());
  }
  return "(" + signature + ")";
}

struct SignatureEntry {
  std::unique_ptr<graph::GraphExecutor> executor;  // null: runs eagerly
  FunctionStatistics statistics;
  std::string text;
};

}  // namespace

struct Function::State {
  Body body;
  FunctionOptions options;
  std::mutex mutex;
  std::map<std::string, SignatureEntry> entries;
  const SignatureEntry* latest = nullptr;
  int64_t traces = 0;
  int64_t replays = 0;
  int64_t eager_calls = 0;
};

Function::Function(Body body, FunctionOptions options) : state_(std::make_shared<State>()) {
  if (!body) throw InvalidArgumentError("accel::function: the body is empty");
  state_->body = std::move(body);
  state_->options = std::move(options);
}

std::vector<Tensor> Function::operator()(const std::vector<Tensor>& arguments) {
  State& state = *state_;
  // Inside another trace the body's ops belong to that trace; under a tape
  // they must be the primitive ops the tape can differentiate.
  if (graph::Tracer::active() != nullptr || autodiff::detail::any_active_tape()) {
    std::lock_guard lock(state.mutex);
    ++state.eager_calls;
    return state.body(arguments);
  }
  const std::string signature = signature_of(arguments);
  std::lock_guard lock(state.mutex);
  auto found = state.entries.find(signature);
  if (found != state.entries.end()) {
    state.latest = &found->second;
    if (found->second.executor) {
      ++state.replays;
      return found->second.executor->run(arguments);
    }
    ++state.eager_calls;
    return state.body(arguments);
  }

  detail::runtime_log().info("{} function '{}' for the signature {}", state.traces == 0 ? "Tracing" : "Retracing",
                             state.options.name, signature);
  std::vector<Tensor> results;
  SignatureEntry entry;
  std::function<void()> rollback;
  {
    graph::Tracer tracer(arguments);
    results = state.body(arguments);
    if (tracer.failed()) {
      entry.statistics.eager_reason = tracer.failure();
      detail::runtime_log().warn("function '{}' runs eagerly for the signature {}: {}", state.options.name,
                                 signature, tracer.failure());
    } else {
      graph::CompiledGraph compiled =
          graph::compile_graph(tracer.finish(results), state.options);
      entry.executor = std::move(compiled.executor);
      entry.statistics = compiled.statistics;
      entry.text = std::move(compiled.text);
      rollback = tracer.take_rollback();
    }
  }
  ++state.traces;
  auto [inserted, unused] = state.entries.emplace(signature, std::move(entry));
  state.latest = &inserted->second;
  if (!inserted->second.executor) return results;
  // As tf.function, the call that traces computes with the compiled program:
  // the eager trace's effects are put back and its results dropped, so every
  // call of a signature runs one program and rounds the same way (a run
  // resumed mid-epoch traces again, and must compute what the uninterrupted
  // run's replay did).
  results.clear();
  rollback();
  ++state.replays;
  return inserted->second.executor->run(arguments);
}

int64_t Function::trace_count() const {
  std::lock_guard lock(state_->mutex);
  return state_->traces;
}

FunctionStatistics Function::statistics() const {
  std::lock_guard lock(state_->mutex);
  FunctionStatistics statistics = state_->latest ? state_->latest->statistics : FunctionStatistics{};
  if (state_->latest && state_->latest->executor) state_->latest->executor->add_recording_statistics(statistics);
  statistics.traces = state_->traces;
  statistics.replays = state_->replays;
  statistics.eager_calls = state_->eager_calls;
  return statistics;
}

std::string Function::graph_text() const {
  std::lock_guard lock(state_->mutex);
  return state_->latest ? state_->latest->text : std::string();
}

const FunctionOptions& Function::options() const { return state_->options; }

Function function(Function::Body body, FunctionOptions options) {
  return Function(std::move(body), std::move(options));
}

}  // namespace accel
