// Model (keras.Model): a Functional model built from symbolic inputs and
// outputs (keras::Model model(inputs, outputs), keras_tensor.hpp), and the
// training API on top of Layer: compile / fit / evaluate / predict. Sequential
// is a Functional model whose graph is made when it is built; a subclass may
// override train_step (fit calls it) or call (a subclassed model). The
// semantics are Keras 2's:
//
//   model.compile("adam", "sparse_categorical_crossentropy", {"accuracy"});
//   keras::History history = model.fit(x_train, y_train, {.epochs = 5});
//   history.history["loss"];  history.history["accuracy"];
//   keras::Logs test = model.evaluate(x_test, y_test);   // {"accuracy": .., "loss": ..}
//   Tensor probabilities = model.predict(x_test);
//
// For a custom loop, call the model (model(x, /*training=*/true)) inside a
// GradientTape and give the gradients to model.optimizer().apply_gradients.
//
// Compiled inside a tf.distribute strategy's scope(), fit / evaluate /
// predict run on every replica of that strategy (distributed_training.hpp).
#pragma once

#include <accel/data/dataset.hpp>
#include <accel/function.hpp>
#include <accel/keras/callbacks/callback.hpp>
#include <accel/keras/callbacks/history.hpp>
#include <accel/keras/distributed_training.hpp>
#include <accel/keras/keras_tensor.hpp>
#include <accel/keras/layer.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/metrics.hpp>
#include <accel/keras/optimizers/optimizer.hpp>

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace accel::keras {

namespace detail {
class BatchSource;
class CallbackList;
class FunctionalGraph;
}  // namespace detail
class Model;
namespace distribution {
class Distribution;
struct DeviceStepAnalysis;
struct DeviceClock;
DeviceStepAnalysis analyze_device_step(Model& model, const Tensor& x, const Tensor& y, const Device& device,
                                       const DeviceClock& clock);
}  // namespace distribution

// Arguments of compile: a Keras name or an object.
using OptimizerArgument = std::variant<std::string, std::shared_ptr<Optimizer>>;
using LossArgument = std::variant<std::string, std::shared_ptr<Loss>>;
using MetricArgument = std::variant<std::string, std::shared_ptr<Metric>>;

// (features, labels) held as whole tensors, batched by fit / evaluate.
struct LabeledTensors {
  Tensor x;
  Tensor y;
};

struct CompileOptions {
  // Batches each execution runs before control returns to the callbacks
  // (Keras's steps_per_execution): on_train_batch_begin sees the first batch
  // of an execution and on_train_batch_end its last, with the logs after it.
  int64_t steps_per_execution = 1;
  // Keras's jit_compile (tf.function with XLA): fit, evaluate and predict run
  // compiled steps. The built-in train step (the forward pass, the tape's
  // backward pass, the loss, the metrics' batch sums and the optimizer
  // update) is traced once per batch signature into one graph, fused,
  // buffer-planned and replayed (accel::function, accel/function.hpp), and so
  // are the test and predict steps. A step the graph cannot express runs
  // eagerly, with the reason in train_function()->statistics(). An overridden
  // train_step or test_step, and a model of several inputs or outputs, run
  // eagerly as written. Under a strategy, each replica's forward and backward
  // pass is compiled (replica_train_function); the cross-replica all-reduce
  // and the update, and the test and predict steps, run eagerly.
  bool jit_compile = false;
  // Rematerialization of the compiled train step (jit_compile, and the
  // sharded step under keras.distribution; RematPolicy in
  // accel/function.hpp, MaxText's remat_policy): which activations each
  // layer call keeps for the backward pass; the rest are recomputed there.
  // Keras 3's RematScope names the same trade. Gradients are unchanged.
  RematPolicy remat = RematPolicy::kNone;
  // The unit remat recomputes: empty, each layer call; else a regular
  // expression whose first group names a layer's block, and the calls of the
  // layers of one block are one unit (MaxText's decoder layer, remat'd whole:
  // "^(layer\\d+)_" makes layer3_norm, layer3_attention, layer3_mlp_in ...
  // one unit, keeping only what enters it). Layers it does not match stay units of their own.
  std::string remat_blocks = "";
  // Keras's auto_scale_loss: under the mixed_float16 policy the optimizer is
  // wrapped in a LossScaleOptimizer (unless it is one), as Keras 3 does.
  bool auto_scale_loss = true;
};

struct FitOptions {
  int epochs = 1;
  // Tensors only: a Dataset arrives batched.
  int64_t batch_size = 32;
  int verbose = kVerboseAuto;
  std::vector<CallbackPointer> callbacks;
  // Tensors only: the LAST fraction of the samples (taken before any
  // shuffling, as Keras) is held out and evaluated after every epoch.
  double validation_split = 0.0;
  // Evaluated after every epoch; at most one of the two (and not with validation_split).
  std::optional<LabeledTensors> validation_data;
  std::optional<data::Dataset> validation_dataset;
  // Tensors only: a new order of the training samples every epoch, drawn from
  // `seed` (unset: the next seed of keras::set_random_seed's sequence, so runs
  // are reproducible). A Dataset is shuffled by its own pipeline.
  bool shuffle = true;
  std::optional<uint64_t> seed;
  // Epoch to start at (resuming); epochs counts up to `epochs`, as Keras.
  int initial_epoch = 0;
  // Batches per epoch. When set, the batches continue from where the previous
  // epoch stopped (tensors cycle through new shuffled passes; a Dataset that
  // runs out stops training with a warning, as Keras).
  std::optional<int64_t> steps_per_epoch;
  // Batches of validation per evaluation (all when unset).
  std::optional<int64_t> validation_steps;
  // Tensors only; unset: batch_size.
  std::optional<int64_t> validation_batch_size;
};

struct EvaluateOptions {
  int64_t batch_size = 32;  // tensors only
  int verbose = kVerboseAuto;
  std::optional<int64_t> steps;
  std::vector<CallbackPointer> callbacks;
};

struct PredictOptions {
  int64_t batch_size = 32;  // tensors only
  int verbose = kVerboseAuto;
  std::optional<int64_t> steps;
  std::vector<CallbackPointer> callbacks;
};

class Model : public Layer {
 public:
  // A Functional model (Keras's Model(inputs, outputs), class name
  // "Functional", default names "model", "model_1", ...): the layers between
  // `inputs` (tensors of keras::Input) and `outputs`, called in Keras's order.
  // A list of one tensor is a list: predict on such a model returns a list.
  Model(KerasTensors inputs, KerasTensors outputs, std::string name = "");

  // The layers: a Functional model's in Keras's order (its InputLayers
  // first, then by depth); Sequential's as added.
  virtual const std::vector<std::shared_ptr<Layer>>& layers() const;
  // The layer of that name (Keras's get_layer); InvalidArgumentError listing the names if none.
  std::shared_ptr<Layer> get_layer(const std::string& name) const;
  // The symbolic inputs and outputs (empty until a Sequential is built).
  const std::vector<KerasTensor>& inputs() const;
  const std::vector<KerasTensor>& outputs() const;
  std::vector<Variable> weights() const override;
  std::vector<Variable> trainable_weights() const override;
  std::vector<Variable> non_trainable_weights() const override;
  LayerShape compute_output_shape(const LayerShape& input_shape) const override;
  std::vector<LayerShape> compute_output_shapes(const std::vector<LayerShape>& input_shapes) const override;
  bool takes_list_input() const override;
  // model.summary(): Keras 2's table; with a "Connected to" column unless the
  // graph is a plain chain (core/keras/model_summary.cpp).
  void summary(std::ostream& out) const;

  // Sets the optimizer, the loss and the metrics fit reports. Unknown names
  // are InvalidArgumentError listing the valid ones. Inside a strategy's
  // scope() the model trains under that strategy; a model whose weights were
  // made outside that scope is an InvalidArgumentError, as in Keras.
  void compile(OptimizerArgument optimizer, LossArgument loss, std::vector<MetricArgument> metrics = {},
               CompileOptions options = {});
  bool compiled() const noexcept { return loss_ != nullptr; }
  // The strategy compile saw (Keras's model.distribute_strategy), or null.
  DistributedTraining* distribute_strategy() const noexcept { return distribution_; }
  int64_t steps_per_execution() const noexcept { return steps_per_execution_; }
  bool jit_compile() const noexcept { return jit_compile_; }
  RematPolicy remat() const noexcept { return remat_; }
  // The compiled steps (Keras's model.train_function, test_function,
  // predict_function): their traces, replays and what compiling did. Null
  // until jit_compile made the first such step.
  const Function* train_function() const noexcept { return train_function_.get(); }
  const Function* test_function() const noexcept { return test_function_.get(); }
  const Function* predict_function() const noexcept { return predict_function_.get(); }
  // Under keras.distribution: what compiling the latest sharded train
  // step's per-device program did (ops_recomputed under remat; the planned
  // peak is one device's), or null until fit ran one.
  const FunctionStatistics* sharded_train_statistics() const noexcept;
  // Under a strategy: local replica `replica`'s compiled pass, or null.
  const Function* replica_train_function(int replica) const noexcept {
    return replica >= 0 && static_cast<size_t>(replica) < replica_train_functions_.size()
               ? replica_train_functions_[static_cast<size_t>(replica)].get()
               : nullptr;
  }

  History fit(const Tensor& x, const Tensor& y, FitOptions options = {});
  // `dataset` yields (features, labels) batches.
  History fit(const data::Dataset& dataset, FitOptions options = {});
  // A model of several inputs or outputs: one tensor per input and per
  // output, in the order of inputs() and outputs(). The compiled loss applies
  // to every output and the total is their sum; each output also logs its
  // loss and metrics under its layer's name ("score_loss", "score_accuracy"),
  // as Keras. Validation only by validation_split; not under a strategy.
  History fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y, FitOptions options = {});
  // The loss and metrics over the data: {"loss": .., "accuracy": ..}.
  Logs evaluate(const Tensor& x, const Tensor& y, EvaluateOptions options = {});
  Logs evaluate(const data::Dataset& dataset, EvaluateOptions options = {});
  Logs evaluate(const std::vector<Tensor>& x, const std::vector<Tensor>& y, EvaluateOptions options = {});
  // The model's outputs for every sample, concatenated along the batch axis.
  Tensor predict(const Tensor& x, PredictOptions options = {});
  // `dataset` yields feature batches (a second component, labels, is ignored).
  Tensor predict(const data::Dataset& dataset, PredictOptions options = {});
  // A model of several inputs (one tensor each, in the order of inputs()) or
  // outputs: every output, each concatenated along the batch axis.
  std::vector<Tensor> predict(const std::vector<Tensor>& x, PredictOptions options = {});

  // One optimizer step on one batch (keras Model.train_step); returns the
  // running logs of the epoch so far. fit calls it, also an override. Under a
  // strategy, as Keras's strategy.run(train_step), it runs on every replica
  // with that replica's part of the batch; the built-in step's loss and
  // metrics are then those of the global batch, an override's logs are
  // replica 0's (distributed_steps.cpp).
  virtual Logs train_step(const Tensor& x, const Tensor& y);
  // Updates the loss and metrics on one batch without training.
  virtual Logs test_step(const Tensor& x, const Tensor& y);
  // The compiled loss of a batch (Keras's compute_loss, for a train_step of
  // one's own): inside a replica scaled by 1 / num_replicas_in_sync, so that
  // the gradients summed by apply_gradients are those of the global batch.
  Tensor compute_loss(const Tensor& x, const Tensor& y, const Tensor& y_pred) const;

  // "loss", then the compiled metrics' names, as Keras's model.metrics_names.
  std::vector<std::string> metrics_names() const;
  // The running values: {"loss": .., "<metric>": ..}.
  Logs metric_results() const;
  void reset_metrics();

  Optimizer& optimizer() const;
  const Loss& loss() const;
  // The metrics as compile got them (names or objects).
  const std::vector<MetricArgument>& metric_arguments() const noexcept { return metric_arguments_; }
  // Set by a callback (or a step) to end fit after the current batch.
  bool stop_training() const noexcept { return stop_training_; }
  void set_stop_training(bool stop) noexcept { stop_training_ = stop; }
  // The History of the last fit.
  const History& history() const noexcept { return history_; }

  // The weights, written atomically: a path ending in ".h5" gets Keras 3's
  // .weights.h5 (saving/weights_h5.hpp), any other a safetensors file under
  // the Keras 2 names ("dense/kernel:0") (docs/keras.md "Saving").
  void save_weights(const std::string& path) const;
  // Loads a file of save_weights, chosen by suffix as there (or a
  // checkpoint: its "optimizer/" entries are ignored). Missing, extra or mis-shaped tensors are an
  // InvalidArgumentError naming all of them, or skipped with skip_mismatch.
  void load_weights(const std::string& path, bool skip_mismatch = false);

  // Where a resumed fit starts: set by a callback in on_train_begin
  // (BackupAndRestore); fit then replays the batches before it without
  // training, so the data continues exactly where the saved run stopped.
  struct TrainingPosition {
    int epoch = 0;     // the epoch to run next
    int64_t step = 0;  // batches of that epoch already trained
  };
  void resume_training_at(TrainingPosition position) { resume_position_ = position; }

 protected:
  // A subclassed model (it overrides call) or Sequential (its graph comes at build).
  // A model leaves its inputs as given (Keras's Functional does not convert
  // them; Sequential converts to its first layer's float32 variable dtype):
  // each of its layers casts for itself.
  Model(std::string class_name, std::string name) : Layer(std::move(class_name), std::move(name)) {
    set_autocast(false);
  }
  // Makes this a Functional model of that graph (Sequential's build).
  void init_graph_network(KerasTensors inputs, KerasTensors outputs);
  // Whether a call checks its inputs against the Input shapes: a Functional
  // model does (Keras's input_spec); a Sequential built from a shape does
  // not, as Keras 2's, and runs its layers on whatever they accept.
  bool check_input_shapes_ = true;
  Tensor call(const Tensor& inputs, bool training) override;
  std::vector<Tensor> call_list(const std::vector<Tensor>& inputs, bool training) override;
  std::vector<DType> compute_output_dtypes(const std::vector<DType>& input_dtypes) const override;

 private:
  // The loops (core/keras/training/): epochs of train_step with validation,
  // one pass of test_step, one pass of the forward call.
  History run_fit(detail::BatchSource& training, detail::BatchSource* validation, const FitOptions& options);
  Logs run_test_loop(detail::BatchSource& source, detail::CallbackList& callbacks, std::optional<int64_t> steps);
  Logs run_evaluate(detail::BatchSource& source, const EvaluateOptions& options);
  Tensor run_predict(detail::BatchSource& source, const PredictOptions& options);
  void require_compiled(const char* what) const;
  // Resolves the compiled metric names against the first batch's shapes.
  void build_metrics(const Tensor& y_true, const Tensor& y_pred);
  void update_metrics(const Tensor& y_true, const Tensor& y_pred, const Tensor& loss);
  // After a step ran on every replica: gathers the replicas' predictions and
  // losses (every worker's) and updates the loss and metrics with the whole
  // global batch; returns the running logs.
  Logs update_metrics_from_replicas(const std::vector<data::Element>& parts, std::vector<Tensor> predictions,
                                    const std::vector<Tensor>& losses, const Tensor& y_true);

  // The steps under a strategy (core/keras/training/distributed_steps.cpp):
  // the virtual step on every replica, then the global batch's metrics.
  Logs distributed_train_step(const Tensor& x, const Tensor& y);
  Logs distributed_test_step(const Tensor& x, const Tensor& y);
  // The built-in steps' work on one replica's part (called by train_step /
  // test_step inside a replica); they leave their predictions and losses in
  // replica_step_results_ for distributed_*_step to gather.
  void replica_train_step(const Tensor& x, const Tensor& y);
  // One replica's forward and backward pass: its loss, its predictions and
  // the gradients of the replica-scaled loss, one per trainable weight.
  std::vector<Tensor> replica_forward_backward(const Tensor& x, const Tensor& y);
  void replica_test_step(const Tensor& x, const Tensor& y);
  // After a step on every replica: the global batch's metrics when the
  // built-in step ran there, otherwise the logs replica 0's override returned.
  Logs logs_after_replicas(const std::vector<data::Element>& parts, const std::vector<Logs>& replica_logs,
                           const Tensor& y_true);
  Tensor distributed_predict_step(const Tensor& x);
  // The steps of a model of several inputs or outputs (training/multiple_io_steps.cpp).
  bool has_several_inputs_or_outputs() const;
  // One tensor per input and per output, with metric names for several outputs.
  void check_list_data(const char* what, const std::vector<Tensor>& x, const std::vector<Tensor>& y) const;
  Logs train_step_on_lists(const std::vector<Tensor>& x, const std::vector<Tensor>& y);
  Logs test_step_on_lists(const std::vector<Tensor>& x, const std::vector<Tensor>& y);
  // The same under a strategy (training/distributed_steps.cpp): the global
  // batch split across the replicas, the global batch's losses and metrics.
  Logs distributed_step_on_lists(const std::vector<Tensor>& x, const std::vector<Tensor>& y, bool training);
  std::vector<Tensor> distributed_predict_on_lists(const std::vector<Tensor>& x);
  void update_output_metrics(const std::vector<Tensor>& y_true, const std::vector<Tensor>& y_pred,
                             const std::vector<Tensor>& losses, const Tensor& total_loss);
  // "<output layer name>_": the prefix of each output's logs.
  std::vector<std::string> output_prefixes() const;
  // Builds the model for `x` inside the strategy's scope, if not built yet.
  void build_in_strategy_scope(const Tensor& x);

  // The train step sharded by a keras.distribution Distribution
  // (core/keras/training/sharded_steps.cpp): traced, partitioned and run as
  // an SPMD program over the mesh; the weights gathered whole after each step.
  struct ShardedStep;
  Logs sharded_train_step(const Tensor& x, const Tensor& y);
  // The next sharded step cuts its shards again from the whole variables
  // (fit calls it: weights may have been assigned since the last fit).
  void mark_sharded_weights_stale() noexcept;
  // The train step on (x, y), traced and partitioned with the distribution's
  // layouts (training/partitioned_step.hpp): what sharded_train_step runs on
  // the mesh, and analyze_device_step on one device. Without
  // `undo_traced_update`, the traced run's update of the weights stays
  // (nothing of them is saved on the host: for devices that hold no values).
  struct PartitionedStep;
  PartitionedStep partition_train_step(const Tensor& x, const Tensor& y, bool undo_traced_update = true);
  friend distribution::DeviceStepAnalysis distribution::analyze_device_step(Model&, const Tensor&, const Tensor&,
                                                                            const Device&, const distribution::DeviceClock&);

  // The compiled steps (core/keras/training/compiled_steps.cpp).
  // The train step (training) or the test step, compiled.
  Logs compiled_step(const Tensor& x, const Tensor& y, bool training);
  Tensor compiled_predict_step(const Tensor& x);
  // What a compiled step needs made before tracing (a trace cannot create
  // variables): the model's weights and the optimizer's slots.
  void build_for_compiled_step(const Tensor& x, bool training);
  // The body of the compiled train / test step: the loss, each metric's
  // batch contribution, and the predictions when a metric needs them.
  std::vector<Tensor> step_results(const Tensor& x, const Tensor& y, bool training);
  // What a batch's compiled steps and metric counts are keyed by: x's and y's shapes.
  static std::string batch_shapes_key(const Tensor& x, const Tensor& y);
  // Folds a compiled step's results into the loss and metrics.
  void update_metrics_from_results(const Tensor& x, const Tensor& y, const std::vector<Tensor>& results);

  // The graph of a Functional model; null for a subclassed model (and a
  // Sequential not built yet).
  std::shared_ptr<const detail::FunctionalGraph> graph_;
  // What the built-in step left on each local replica during one distributed step.
  struct ReplicaStepResult {
    bool built_in_step = false;  // the built-in step ran (not only an override)
    Tensor prediction;           // undefined for a replica without rows
    Tensor loss;
  };
  std::vector<ReplicaStepResult> replica_step_results_;
  // Per output of a model of several outputs: its loss and compiled metrics,
  // built on the first batch.
  struct OutputMetrics {
    std::shared_ptr<Mean> loss;
    std::vector<std::shared_ptr<Metric>> metrics;
  };
  std::vector<OutputMetrics> output_metrics_;
  std::shared_ptr<Optimizer> optimizer_;
  std::shared_ptr<Loss> loss_;
  DistributedTraining* distribution_ = nullptr;
  int64_t steps_per_execution_ = 1;
  bool jit_compile_ = false;
  RematPolicy remat_ = RematPolicy::kNone;
  // Per layer: its remat block (CompileOptions::remat_blocks), by first appearance.
  std::map<const Layer*, int32_t> remat_block_of_;
  // keras.distribution's global distribution when compile ran (null: none),
  // and its traced, partitioned train step for the latest batch shapes.
  std::shared_ptr<const distribution::Distribution> sharding_;
  std::shared_ptr<ShardedStep> sharded_step_;
  std::unique_ptr<Function> train_function_;
  std::unique_ptr<Function> test_function_;
  std::unique_ptr<Function> predict_function_;
  // Under a strategy: one compiled forward and backward pass per local
  // replica (each replica traces on its own thread, devices and copies of
  // the weights); the all-reduce and the update run as in eager mode.
  std::vector<std::unique_ptr<Function>> replica_train_functions_;
  // Per batch shapes (x's and y's; batch_shapes_key): the count of values
  // each metric's sum covers, recorded by the step body (counts follow from
  // shapes alone).
  std::map<std::string, std::vector<double>> metric_counts_;
  std::vector<MetricArgument> metric_arguments_;
  std::vector<std::shared_ptr<Metric>> metrics_;  // built on the first batch
  bool metrics_built_ = false;
  Mean loss_tracker_{"loss"};
  bool stop_training_ = false;
  History history_;
  std::optional<TrainingPosition> resume_position_;  // consumed by the next fit
};

}  // namespace accel::keras
