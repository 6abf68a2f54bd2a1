// Model::evaluate: one pass of test_step over the data (also fit's
// validation); under a strategy, on every replica; for a model of several
// inputs or outputs, one tensor per input and per output.
#include <accel/error.hpp>
#include <accel/keras/model.hpp>

#include "batch_source.hpp"
#include "callback_list.hpp"

namespace accel::keras {

Logs Model::evaluate(const Tensor& x, const Tensor& y, EvaluateOptions options) {
  require_compiled("evaluate");
  if (!y.defined()) throw InvalidArgumentError("evaluate: labels y are required");
  detail::BatchSource source = detail::BatchSource::from_tensors(x, y, options.batch_size, false, 0);
  return run_evaluate(source, options);
}

Logs Model::evaluate(const data::Dataset& dataset, EvaluateOptions options) {
  require_compiled("evaluate");
  detail::BatchSource source = detail::BatchSource::from_dataset(dataset);
  return run_evaluate(source, options);
}

Logs Model::evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, EvaluateOptions options) {
  require_compiled("evaluate");
  if (!has_several_inputs_or_outputs() && x.size() == 1 && y.size() == 1) return evaluate(x.front(), y.front(), options);
  check_list_data("evaluate", x, y);
  detail::BatchSource source = detail::BatchSource::from_tensor_lists(x, y, options.batch_size, false, 0);
  return run_evaluate(source, options);
}

Logs Model::run_evaluate(detail::BatchSource& source, const EvaluateOptions& options) {
  if (has_several_inputs_or_outputs() && !source.from_tensor_lists()) {
    throw InvalidArgumentError("evaluate: model '" + name() + "' has " + std::to_string(inputs().size()) +
                               " inputs and " + std::to_string(outputs().size()) +
                               " outputs: pass one tensor per input and per output, evaluate(std::vector<Tensor>, "
                               "std::vector<Tensor>)");
  }
  const CallbackParams params{detail::resolve_verbosity(options.verbose), 1,
                              options.steps ? options.steps : source.batches_per_pass()};
  detail::CallbackList callbacks(options.callbacks, *this, params, /*add_history=*/false);
  return run_test_loop(source, callbacks, options.steps);
}

Logs Model::run_test_loop(detail::BatchSource& source, detail::CallbackList& callbacks,
                          std::optional<int64_t> steps) {
  reset_metrics();
  source.begin_pass();
  callbacks.on_test_begin({});
  int64_t step = 0;
  for (; !steps || step < *steps; ++step) {
    std::optional<detail::Batch> batch = source.next();
    if (!batch) break;
    if (!batch->y.defined()) {
      throw InvalidArgumentError("evaluate: the data has no labels; a Dataset must yield (features, labels)");
    }
    callbacks.on_test_batch_begin(step, {});
    Logs logs;
    if (!batch->inputs.empty()) {
      logs = distribution_ != nullptr ? distributed_step_on_lists(batch->inputs, batch->targets, false)
                                      : test_step_on_lists(batch->inputs, batch->targets);
    } else {
      logs = distribution_ != nullptr ? distributed_test_step(batch->x, batch->y) : test_step(batch->x, batch->y);
    }
    callbacks.on_test_batch_end(step, logs);
  }
  if (step == 0) throw InvalidArgumentError("evaluate: the data yielded no batches");
  const Logs logs = metric_results();
  callbacks.on_test_end(logs);
  return logs;
}

}  // namespace accel::keras
