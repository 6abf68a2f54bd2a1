// Model's train step under keras.distribution (set_distribution before
// compile): the built-in compiled step (forward, backward, loss, metric sums,
// optimizer update) traced once per batch signature, partitioned by the SPMD
// pass with the distribution's layouts (the batch along its batch axis, each
// variable as the distribution lays it out, each optimizer slot as its
// variable) and run as an SpmdProgram on the mesh's devices, one thread each.
//
// The program holds each device's shards of the variables and slots between
// steps; after every step they are gathered back into the whole variables,
// so that callbacks, evaluate, predict and saving read the trained weights.
// Weights assigned from outside between steps are not seen by the shards
// until the next fit, whose first step cuts them again (fit marks them
// stale first: weights loaded, set or restored by a callback's
// on_train_begin between two fits are trained on, not overwritten).
//
// The partitioned step is compiled as the model's compile asked (the
// compiler's passes: rematerialization, fusion; partitioned_step_options),
// once for every device, as analyze_device_step compiles it for the pod
// estimate.
//
// Across processes (keras::distribution::initialize), every process runs fit
// on the same global batches; each runs its own block of the mesh's devices
// (their shards of the batch and the variables), the collectives exchange
// operands with the other processes, and the gathered variables are whole in
// every process.
#include <accel/error.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/distribution/processes.hpp>
#include <accel/keras/model.hpp>
#include <accel/placement.hpp>

#include "../distribution/layout_sharding.hpp"
#include "../distribution/process_devices.hpp"
#include "graph/passes/passes.hpp"
#include "partitioned_step.hpp"
#include "graph/spmd_program.hpp"
#include "graph/tracer.hpp"

#include <fmt/format.h>

#include <functional>

namespace accel::keras {

struct Model::ShardedStep {
  std::string signature;  // the batch shapes it was traced for
  graph::Graph graph;     // as partitioned
  std::shared_ptr<graph::ProcessExchange> exchange;  // held while the program uses it; null in one process
  std::unique_ptr<graph::SpmdProgram> program;
  bool stale = false;  // the whole variables may have changed since the last gather
};

Logs Model::sharded_train_step(const Tensor& x, const Tensor& y) {
  const distribution::DeviceMesh& mesh = sharding_->mesh();
  const std::string signature = batch_shapes_key(x, y);
  if (!sharded_step_ || sharded_step_->signature != signature) {
    PartitionedStep partitioned = partition_train_step(x, y);
    auto step = std::make_shared<ShardedStep>();
    step->signature = signature;
    step->graph = std::move(partitioned.graph);
    step->exchange = distribution::process_exchange();
    const int processes = step->exchange ? step->exchange->num_processes() : 1;
    std::vector<Device> devices =
        distribution::process_devices(mesh, step->exchange ? step->exchange->process_id() : 0, processes);
    step->program = std::make_unique<graph::SpmdProgram>(step->graph, partitioned.partition, std::move(devices),
                                                         step->exchange.get(), partitioned_step_options(*this));
    sharded_step_ = std::move(step);
  }

  graph::SpmdProgram& program = *sharded_step_->program;
  if (sharded_step_->stale) {
    program.scatter_captures();
    sharded_step_->stale = false;
  }
  std::vector<std::vector<Tensor>> arguments(program.device_count());
  for (size_t device = 0; device < program.device_count(); ++device) {
    arguments[device] = {program.shard_of(x, sharded_step_->graph.parameters[0], device),
                         program.shard_of(y, sharded_step_->graph.parameters[1], device)};
  }
  const std::vector<std::vector<Tensor>> results = program.run(arguments);
  program.gather_captures();
  update_metrics_from_results(x, y, results.front());
  return metric_results();
}

void Model::mark_sharded_weights_stale() noexcept {
  if (sharded_step_) sharded_step_->stale = true;
}

const FunctionStatistics* Model::sharded_train_statistics() const noexcept {
  return sharded_step_ ? &sharded_step_->program->statistics() : nullptr;
}

Model::PartitionedStep Model::partition_train_step(const Tensor& x, const Tensor& y, bool undo_traced_update) {
  if (!sharding_) throw FailedPreconditionError("the model was not compiled under a keras.distribution Distribution");
  const distribution::Distribution& layouts = *sharding_;
  const distribution::DeviceMesh& mesh = layouts.mesh();
  const int64_t batch_devices = mesh.axis_size(layouts.batch_dim_name());
  if (x.rank() == 0 || x.shape()[0] % batch_devices != 0) {
    throw InvalidArgumentError(fmt::format(
        "fit under keras.distribution: a batch of {} examples does not split over the mesh's '{}' axis of {} "
        "devices; use a batch size (and a last batch) that does",
        x.rank() == 0 ? 0 : x.shape()[0], layouts.batch_dim_name(), batch_devices));
  }
  build_for_compiled_step(x, /*training=*/true);
  PartitionedStep step;
  // The step traced once; what the traced run changed (the update) is put back.
  std::function<void()> rollback;
  {
    const std::vector<Tensor> arguments = {x, y};
    graph::Tracer tracer(arguments);
    if (!undo_traced_update) tracer.keep_assigned_values();
    const std::vector<Tensor> results = step_results(x, y, /*training=*/true);
    if (tracer.failed()) {
      throw UnimplementedError("fit under keras.distribution: the train step cannot be traced: " + tracer.failure());
    }
    step.graph = tracer.finish(results);
    rollback = tracer.take_rollback();
  }
  rollback();

  const distribution::ShardingsByStorage by_storage =
      distribution::variable_shardings(layouts, weights(), optimizer_.get());
  graph::SpmdInputs inputs;
  inputs.mesh = distribution::mesh_shape(mesh);
  inputs.parameters = {distribution::to_sharding(layouts.data_layout(x.rank()), mesh),
                       distribution::to_sharding(layouts.data_layout(y.rank()), mesh)};
  inputs.capture = [&](graph::ValueId, const graph::Value& value) -> graph::ValueSharding {
    const auto found = by_storage.find(value.tensor.storage().get());
    return found != by_storage.end() ? found->second : graph::ValueSharding{};
  };
  step.partition = graph::partition_spmd(step.graph, inputs);
  return step;
}

}  // namespace accel::keras
