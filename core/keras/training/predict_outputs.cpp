// Model::predict for a model of several inputs or outputs: the inputs cut
// into the same batches of rows, every output gathered and concatenated along
// the batch axis.
#include <accel/error.hpp>
#include <accel/keras/model.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>

#include "callback_list.hpp"

namespace accel::keras {
namespace {

Tensor rows(const Tensor& tensor, int64_t begin, int64_t count) {
  std::vector<int64_t> starts(static_cast<size_t>(tensor.rank()), 0);
  std::vector<int64_t> sizes = tensor.shape().dims();
  starts[0] = begin;
  sizes[0] = count;
  DeviceScope data_device(tensor.device());
  return ops::slice(tensor, std::move(starts), std::move(sizes));
}

}  // namespace

std::vector<Tensor> Model::predict(const std::vector<Tensor>& x, PredictOptions options) {
  if (x.empty()) throw InvalidArgumentError("predict: no inputs given");
  for (const Tensor& input : x) {
    if (!input.defined() || input.rank() < 1 || input.shape().dim(0) != x.front().shape().dim(0)) {
      throw InvalidArgumentError("predict: every input needs a batch axis of the same number of samples");
    }
  }
  if (options.batch_size <= 0) {
    throw InvalidArgumentError("predict: batch_size must be positive, got " + std::to_string(options.batch_size));
  }
  if (x.size() == 1 && outputs().size() <= 1) return {predict(x.front(), options)};
  const int64_t samples = x.front().shape().dim(0);
  const int64_t batches = (samples + options.batch_size - 1) / options.batch_size;
  const CallbackParams params{detail::resolve_verbosity(options.verbose), 1,
                              options.steps ? options.steps : std::optional<int64_t>(batches)};
  detail::CallbackList callbacks(options.callbacks, *this, params, /*add_history=*/false);
  callbacks.on_predict_begin({});
  std::vector<std::vector<Tensor>> per_output;
  for (int64_t step = 0; step < batches && (!options.steps || step < *options.steps); ++step) {
    const int64_t begin = step * options.batch_size;
    const int64_t count = std::min(options.batch_size, samples - begin);
    std::vector<Tensor> batch;
    for (const Tensor& input : x) batch.push_back(rows(input, begin, count));
    callbacks.on_predict_batch_begin(step, {});
    std::vector<Tensor> results =
        distribution_ != nullptr ? distributed_predict_on_lists(batch) : call_outputs(batch, /*training=*/false);
    if (per_output.empty()) per_output.resize(results.size());
    for (size_t output = 0; output < results.size(); ++output) per_output[output].push_back(std::move(results[output]));
    callbacks.on_predict_batch_end(step, {});
  }
  callbacks.on_predict_end({});
  if (per_output.empty()) throw InvalidArgumentError("predict: the data yielded no batches");
  std::vector<Tensor> outputs_of_all_batches;
  for (std::vector<Tensor>& parts : per_output) {
    outputs_of_all_batches.push_back(parts.size() == 1 ? parts.front() : ops::concat(parts, 0));
  }
  return outputs_of_all_batches;
}

}  // namespace accel::keras
