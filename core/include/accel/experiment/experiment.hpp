// The typed, validated form of an experiment file: its runs, each a complete
// configuration (the base merged with one compare entry, one sweep value)
// that a runner can execute without looking at YAML again. Every value keeps
// where it was written, so later errors can point at the file.
#pragma once

#include <accel/experiment/experiment_error.hpp>
#include <accel/function.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace accel::experiment {

struct KerasObject;

// One typed value from the file (or a documented default).
struct Value {
  // A KerasObject is an argument that is itself a Keras object: a learning
  // rate written as a schedule ({cosine_decay: {...}}).
  using Data = std::variant<std::monostate, bool, std::int64_t, double, std::string, std::vector<std::int64_t>,
                            std::vector<std::string>, std::shared_ptr<const KerasObject>>;
  Data data;
  SourceLocation where;
  bool defaulted = false;  // not written: the schema's default

  bool is_set() const { return !std::holds_alternative<std::monostate>(data); }
  bool as_bool() const { return std::get<bool>(data); }
  std::int64_t as_int() const { return std::get<std::int64_t>(data); }
  double as_number() const;  // integers convert
  const std::string& as_text() const { return std::get<std::string>(data); }
  // [a, b] as written, or [n] for a single integer.
  std::vector<std::int64_t> as_ints() const;
  const std::vector<std::string>& as_texts() const { return std::get<std::vector<std::string>>(data); }
  bool is_object() const { return std::holds_alternative<std::shared_ptr<const KerasObject>>(data); }
  const KerasObject& as_object() const { return *std::get<std::shared_ptr<const KerasObject>>(data); }
};
using Arguments = std::map<std::string, Value>;

// A Keras object by name with its keyword arguments: a layer, optimizer, loss,
// metric, callback or strategy. Arguments not written hold their defaults
// where the default is a value.
struct KerasObject {
  std::string name;
  Arguments arguments;
  SourceLocation where;

  const Value* argument(const std::string& key) const;  // nullptr when neither written nor defaulted
};

struct PluginReference {
  std::string path;  // resolved against the experiment file's folder
  bool required = true;
  SourceLocation where;
};

struct DeviceOptions {
  std::string device;  // "GPU" (every GPU) or a full name "/job:localhost/replica:0/task:0/device:GPU:0"
  std::optional<bool> memory_growth;
  std::optional<std::uint64_t> memory_limit_bytes;
  std::vector<std::optional<std::uint64_t>> logical_device_memory_limits;  // one per logical device
  SourceLocation where;
};

struct TpuSystem {
  std::string preset = "tpu_v4";
  std::string preset_path;  // the YAML file found for preset
  std::optional<int> array_rows;
  std::optional<int> array_columns;
  std::optional<std::string> dataflow;                 // ws | os | is
  std::vector<std::pair<std::string, std::string>> hardware_overrides;  // dotted key, YAML value
  std::map<std::string, SourceLocation> hardware_override_locations;   // dotted key -> where its value is written
  std::string timing = "analytical";
};

// The emulator's tpu_sim.overrides for `system`: its array, dataflow and
// hardware fields as "key=value;key=value".
std::string tpu_sim_overrides(const TpuSystem& system);

// csv: the columns one model input takes (data.input_columns).
struct InputColumns {
  std::string input;                 // a model.graph input
  std::vector<std::string> columns;  // in the order the input holds them
  SourceLocation where;              // the input's name as written
};

// csv: the label column of one model output (data.label_columns).
struct LabelColumn {
  std::string output;  // a model.graph output
  std::string column;
  SourceLocation where;
};

struct DataConfig {
  std::string source;  // fashion_mnist | mnist | idx | csv | synthetic | text
  Arguments options;   // every data key, typed, with defaults (path, batch, shuffle, ...)
  std::vector<std::int64_t> example_shape;  // known for fashion_mnist, mnist, synthetic; else empty
  std::string example_dtype = "float32";    // int32 for token sequences (data.tokens)
  std::optional<std::int64_t> classes;      // label values 0..classes-1, when known
  std::vector<std::int64_t> label_shape;    // one label per example: []; text: [sequence_length], one per position
  std::vector<InputColumns> input_columns;  // csv, several inputs: each input's columns
  std::vector<LabelColumn> label_columns;   // csv, several outputs: each output's label column
};

// training.jit_compile: Keras's compile(jit_compile=...) as written, or auto
// (the runner chooses per device: compiled_step.hpp).
enum class JitCompile { kAuto, kOn, kOff };

struct TrainingConfig {
  KerasObject optimizer;
  KerasObject loss;
  std::vector<KerasObject> metrics;
  std::int64_t epochs = 1;
  std::optional<std::int64_t> steps_per_epoch;
  std::optional<std::int64_t> evaluation_steps;  // batches of the test split evaluated after fit
  double validation_split = 0;
  std::vector<KerasObject> callbacks;
  std::optional<std::int64_t> seed;
  // Keras's global dtype policy for the run's model (keras::DTypePolicy names).
  std::string mixed_precision = "float32";
  JitCompile jit_compile = JitCompile::kAuto;
  RematPolicy remat = RematPolicy::kNone;  // training.remat
  std::string remat_blocks;                // training.remat_blocks (keras::CompileOptions::remat_blocks)
};

// One input of a model.graph: keras.Input(shape, dtype, name).
struct GraphInput {
  std::string name;
  std::vector<std::int64_t> shape;  // without the batch axis
  std::string dtype = "float32";    // float32 | int32
  SourceLocation where;             // the name as written
};

// A name in model.graph that refers to an input or a layer.
struct GraphReference {
  std::string name;
  SourceLocation where;
};

// One layer's call in a model.graph: the names it is called on (inputs or
// earlier layers), as a list (merge layers, multi_head_attention) or one tensor.
struct GraphCall {
  std::vector<GraphReference> inputs;
  bool list_input = false;
};

// The connections of a model.graph (the Functional form); its layers are
// ModelConfig::layers, in file order, each listed after the layers it takes.
struct ModelGraph {
  std::vector<GraphInput> inputs;
  std::vector<GraphCall> calls;  // one per layer
  std::vector<GraphReference> outputs;
};

struct ModelConfig {
  std::string name = "sequential";
  // model.layers (Sequential), or the layers of model.graph.
  std::vector<KerasObject> layers;
  std::optional<ModelGraph> graph;  // set for model.graph
  // Output shape of each layer, batch axis first as -1; empty when the input
  // shape is unknown (no input_shape and a data source of unknown shape).
  std::vector<std::vector<std::int64_t>> layer_output_shapes;
  // model.keras_file: a Keras 3 .keras archive (architecture and weights),
  // resolved against the experiment's folder; its input shape (without the
  // batch axis), read when the file was validated (LoadOptions::inspect_keras_file).
  std::optional<std::string> keras_file;
  std::vector<std::int64_t> keras_file_input_shape;
  // model.initial_weights: a .weights.h5 or .safetensors file loaded into the
  // model before training, resolved against the experiment's folder.
  std::optional<std::string> initial_weights;
};

struct BenchmarkConfig {
  std::string op;
  std::vector<std::vector<std::int64_t>> sizes;
  std::string dtype = "float32";
  std::int64_t repeats = 10;
  std::int64_t warmup = 2;
};

// The run's `distribution`: keras.distribution's set_distribution, the
// model sharded over a device mesh of the run's device type with the layouts
// keras/distribution/auto_layout.hpp makes from the axis names.
struct DistributionConfig {
  std::vector<std::pair<std::string, std::int64_t>> mesh;  // axis name -> size, in the file's order
  // For pod estimates (TpuPodOptions): unset, the estimate's defaults.
  std::optional<std::vector<std::string>> async_collectives;
  std::optional<bool> scan_layers;
  SourceLocation where;
};

struct RunConfig {
  std::string name;
  std::string description;
  std::vector<PluginReference> plugins;
  std::optional<std::string> device;  // full device name
  std::vector<DeviceOptions> devices;
  std::optional<KerasObject> strategy;
  // multi_worker_mirrored's `resolver`: tf_config, slurm or simple with its arguments.
  std::optional<KerasObject> cluster_resolver;
  std::optional<TpuSystem> tpu;
  std::optional<DistributionConfig> distribution;
  std::optional<ModelConfig> model;
  std::optional<BenchmarkConfig> benchmark;
  std::optional<DataConfig> data;
  std::optional<TrainingConfig> training;
  std::string output_directory;
  bool trace = true;
  std::vector<std::string> reports;
  std::vector<std::string> device_types_needed;  // "CPU", "TPU", ...
  // Set when the run cannot run here (its backend is absent): the run is
  // kept, reported, and skipped with this reason. Not an error.
  std::optional<std::string> skipped_reason;
  std::optional<std::pair<std::string, std::string>> sweep_point;  // parameter, value
};

struct Experiment {
  std::string name;
  std::string description;
  std::string source_file;
  std::vector<RunConfig> runs;  // compare runs (or one run named "default"), sweeps expanded
};

}  // namespace accel::experiment
