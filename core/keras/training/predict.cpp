// Model::predict: the forward pass (training = false) over every batch,
// concatenated along the batch axis; under a strategy, each batch split
// across the replicas and gathered on the host.
#include <accel/error.hpp>
#include <accel/keras/model.hpp>
#include <accel/ops.hpp>

#include "batch_source.hpp"
#include "callback_list.hpp"

namespace accel::keras {

Tensor Model::predict(const Tensor& x, PredictOptions options) {
  detail::BatchSource source = detail::BatchSource::from_tensors(x, Tensor(), options.batch_size, false, 0);
  return run_predict(source, options);
}

Tensor Model::predict(const data::Dataset& dataset, PredictOptions options) {
  detail::BatchSource source = detail::BatchSource::from_dataset(dataset);
  return run_predict(source, options);
}

Tensor Model::run_predict(detail::BatchSource& source, const PredictOptions& options) {
  const CallbackParams params{detail::resolve_verbosity(options.verbose), 1,
                              options.steps ? options.steps : source.batches_per_pass()};
  detail::CallbackList callbacks(options.callbacks, *this, params, /*add_history=*/false);
  source.begin_pass();
  callbacks.on_predict_begin({});
  std::vector<Tensor> outputs;
  for (int64_t step = 0; !options.steps || step < *options.steps; ++step) {
    std::optional<detail::Batch> batch = source.next();
    if (!batch) break;
    callbacks.on_predict_batch_begin(step, {});
    if (distribution_ != nullptr) {
      outputs.push_back(distributed_predict_step(batch->x));
    } else {
      outputs.push_back(jit_compile_ ? compiled_predict_step(batch->x) : (*this)(batch->x, /*training=*/false));
    }
    callbacks.on_predict_batch_end(step, {});
  }
  callbacks.on_predict_end({});
  if (outputs.empty()) throw InvalidArgumentError("predict: the data yielded no batches");
  return outputs.size() == 1 ? outputs.front() : ops::concat(outputs, 0);
}

}  // namespace accel::keras
