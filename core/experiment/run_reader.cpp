#include "run_reader.hpp"

#include "layer_shape_inference.hpp"
#include "model_graph_reader.hpp"
#include "schema_check.hpp"
#include "tpu_preset_lookup.hpp"

#include <accel/data/byte_text.hpp>
#include <accel/device.hpp>
#include <accel/distribute/cluster_spec.hpp>
#include <accel/distribute/tpu_cluster_resolver.hpp>
#include <accel/error.hpp>
#include <accel/experiment/schema.hpp>
#include <accel/keras/callbacks/checkpoint_format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

namespace accel::experiment {
namespace fs = std::filesystem;
namespace {

const ValueSpec& section_spec(const std::string& key) { return *run_spec().field(key)->spec; }

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string resolve_path(const std::string& path, const std::string& dir) {
  if (path.empty() || fs::path(path).is_absolute() || dir.empty()) return path;
  return (fs::path(dir) / path).string();
}

class RunReader {
 public:
  RunReader(const RunTree& run, const RunContext& context) : run_(run), tree_(*run.tree), context_(context) {}

  std::vector<PluginReference> read_plugins_only() {
    read_plugins();
    return std::move(out_.plugins);
  }

  RunConfig read() {
    out_.name = run_.name;
    out_.description = run_.description;
    out_.sweep_point = run_.sweep_point;
    read_plugins();
    read_devices();
    read_work();
    read_output();
    decide_skip();
    return std::move(out_);
  }

 private:
  void read_plugins() {
    const SourceNode* plugins = tree_.find("plugins");
    if (plugins == nullptr) return;
    for (const auto& item : plugins->items) {
      PluginReference plugin;
      const SourceNode* path = item->is_scalar() ? item.get() : item->find("path");
      plugin.path = resolve_path(path->text, context_.experiment_dir);
      plugin.where = path->where;
      if (item->is_map()) {
        const Arguments fields = read_fields(item.get(), section_spec("plugins").item->fields, item->where);
        plugin.required = fields.at("required").as_bool();
      }
      std::error_code error;
      if (plugin.required && !fs::exists(plugin.path, error)) {
        fail_at(*path, fmt::format("plugin '{}' not found", plugin.path),
                "an existing plugin library (relative paths start at the experiment file's folder), or required: false");
      }
      out_.plugins.push_back(std::move(plugin));
    }
  }

  // A device name or type as written -> its type, checked against the catalog.
  std::string device_type(const SourceNode& node, const std::string& what) {
    std::string type = node.text.find(':') == std::string::npos ? upper(node.text) : DeviceName::parse(node.text).type;
    if (context_.catalog->any_type) return type;
    const auto& known = context_.catalog->known_types;
    if (std::find(known.begin(), known.end(), type) == known.end()) {
      fail_at(node, fmt::format("unknown device type '{}' in {}{}", type, what, did_you_mean(type, known)),
              "a device type that accel or a plugin provides: " + quoted_names(known));
    }
    return type;
  }

  // distribution: {mesh: {axis: size, ...}}: the axes auto_layout knows, one
  // batch axis; not beside a tf.distribute strategy (Keras refuses both).
  void read_distribution(const SourceNode& node) {
    DistributionConfig config;
    config.where = node.where;
    const SourceNode* mesh = node.find("mesh");
    if (const SourceNode* kinds = node.find("async_collectives")) {
      config.async_collectives.emplace();
      for (const auto& kind : kinds->items) config.async_collectives->push_back(kind->text);
    }
    if (node.find("scan_layers") != nullptr) {
      config.scan_layers = read_fields(&node, section_spec("distribution").fields, node.where).at("scan_layers").as_bool();
    }
    std::vector<std::string> names;
    int64_t devices = 1;
    for (const auto& [axis, size] : mesh->entries) {
      config.mesh.emplace_back(axis->text, std::stoll(size->text));
      names.push_back(axis->text);
      devices *= config.mesh.back().second;  // at most 65536 x 2^30: no overflow
      if (devices > 65536) {
        fail_at(size->where, fmt::format("distribution.mesh has more than 65536 devices at axis '{}'", axis->text),
                "a mesh of at most 65536 devices");
      }
      if (axis->text != "data" && axis->text != "fsdp" && axis->text != "tensor") {
        fail_at(axis->where, fmt::format("distribution.mesh axis '{}' is none this run can lay out", axis->text),
                "fsdp (the batch and every weight split), data (the batch only) or tensor (heads, MLP units and "
                "vocabulary split)");
      }
    }
    const bool fsdp = std::find(names.begin(), names.end(), "fsdp") != names.end();
    const bool data = std::find(names.begin(), names.end(), "data") != names.end();
    if (fsdp == data) {
      fail_at(mesh->where, fsdp ? "distribution.mesh has both fsdp and data; a batch splits along one mesh axis"
                                : "distribution.mesh has no axis that splits the batch",
              "one of fsdp and data (fsdp shards the weights too)");
    }
    if (out_.strategy) {
      fail_at(node.where, fmt::format("distribution and strategy '{}' at once", out_.strategy->name),
              "one of them: a keras.distribution mesh shards the model, a tf.distribute strategy replicates it");
    }
    out_.distribution = std::move(config);
  }

  // A sim://v<generation>-<cores> slice runs the tpu_v<generation> preset; a
  // different tpu.preset written beside it is a contradiction.
  void check_tpu_slice_preset(const KerasObject& strategy) {
    const Value* address = strategy.argument("tpu");
    const SourceNode* tpu = tree_.find("tpu");
    if (address == nullptr || !address->is_set() || tpu == nullptr) return;
    const std::string& name = address->as_text();
    constexpr std::string_view kScheme = "sim://v";
    const size_t dash = name.rfind('-');
    if (!name.starts_with(kScheme) || dash == std::string::npos || dash < kScheme.size()) return;
    const std::string slice_preset = "tpu_v" + name.substr(kScheme.size(), dash - kScheme.size());
    const SourceNode* preset = tpu->is_scalar() ? tpu : tpu->find("preset");
    if (preset == nullptr || !preset->is_scalar() || preset->text == slice_preset) return;
    if (preset->text.find('/') != std::string::npos || preset->text.ends_with(".yaml")) return;  // a file: its own name
    fail_at(*preset, fmt::format("tpu.preset '{}' contradicts the tpu strategy's slice '{}' (a {} slice)", preset->text,
                                 name, slice_preset),
            fmt::format("'{}' or no tpu.preset", slice_preset));
  }

  void need(const std::string& type) {
    if (std::find(out_.device_types_needed.begin(), out_.device_types_needed.end(), type) ==
        out_.device_types_needed.end()) {
      out_.device_types_needed.push_back(type);
    }
  }

  // The devices this machine will have for the run: the catalog's count of
  // the type, plus what the run's logical splits add (a physical device split
  // in N logical devices counts N).
  int devices_of_type(const std::string& type) const {
    const auto available = context_.catalog->available.find(type);
    int count = available == context_.catalog->available.end() ? 0 : available->second;
    for (const DeviceOptions& options : out_.devices) {
      const std::string& name = options.device;
      const std::string split_type = name.find(':') == std::string::npos ? upper(name) : DeviceName::parse(name).type;
      if (split_type == type && !options.logical_device_memory_limits.empty()) {
        count += static_cast<int>(options.logical_device_memory_limits.size()) - 1;
      }
    }
    return count;
  }

  // A device a run places work on must exist when it runs: an index past the
  // machine's devices, or another job's task on a run without a cluster, is
  // an error now rather than a failed run later. (An absent type is not: the
  // run is skipped with the reason, as a GPU run on a machine without one.)
  void check_placed_devices(const std::vector<const SourceNode*>& placed) {
    if (context_.catalog->any_type) return;
    const bool in_a_cluster = out_.strategy && out_.strategy->name == "multi_worker_mirrored";
    for (const SourceNode* node : placed) {
      if (node->text.find(':') == std::string::npos) continue;  // a type alone: the first device of it
      const DeviceName name = DeviceName::parse(node->text);
      if (!name.job.empty() && name.job != "localhost" && !in_a_cluster) {
        fail_at(*node, fmt::format("'{}' names job '{}', but this run has no cluster (it runs as /job:localhost)",
                                   node->text, name.job),
                "a local device such as /CPU:0, or a multi_worker_mirrored strategy with a cluster resolver");
      }
      if (!name.job.empty() && name.job != "localhost") continue;  // another worker's devices are its own
      if (name.task > 0 && !in_a_cluster) {
        fail_at(*node, fmt::format("'{}' names task {}, but a run without a cluster has task 0 only", node->text, name.task),
                "task:0, or a multi_worker_mirrored strategy with a cluster resolver");
      }
      const int count = devices_of_type(name.type);
      if (count > 0 && name.index >= count) {
        fail_at(*node,
                fmt::format("no device {}:{} here: this machine has {} {} device{}{}", name.type, name.index, count,
                            name.type, count == 1 ? "" : "s", out_.devices.empty() ? "" : " (with the run's logical splits)"),
                fmt::format("an index from 0 to {}, or a logical split under 'devices'", count - 1));
      }
    }
  }

  // The TPU a tpu strategy names, checked as TPUClusterResolver will read it:
  // "local", a slice "sim://v4-8" of a known generation and core count, or a
  // preset file. Returns the name the resolver is to get: a file's path
  // resolved against the experiment file's folder, as every path in the file.
  std::string checked_tpu_name(const SourceNode& tpu) {
    const std::string& name = tpu.text;
    constexpr std::string_view kSimScheme = "sim://";
    const char* expected = "\"local\", an emulated slice such as sim://v4-8, or a TPU preset .yaml file";
    if (name.empty() || name == "local") return name;
    if (name.starts_with(kSimScheme)) {
      try {
        (void)distribute::describe_tpu_slice(std::string_view(name).substr(kSimScheme.size()));
      } catch (const InvalidArgumentError& error) {
        fail_at(tpu, error.what(), expected);
      }
      return name;
    }
    if (name.ends_with(".yaml") || name.ends_with(".yml")) {
      std::error_code missing;
      const std::string path = resolve_path(name, context_.experiment_dir);
      if (!fs::exists(path, missing)) fail_at(tpu, fmt::format("TPU preset file '{}' not found", path), expected);
      try {  // the YAML rules of every file accel reads: duplicate keys, depth, size
        (void)load_yaml_file(path, context_.options->limits);
      } catch (const ExperimentError& error) {
        const SourceLocation& at = error.where();
        fail_at(tpu, fmt::format("TPU preset file '{}' cannot be read: {}:{}:{}: {}", path, at.file, at.line, at.column,
                                 error.problem()),
                error.expected());
      }
      return path;
    }
    fail_at(tpu, fmt::format("'{}' is not a TPU name", name), expected);
  }

  // A simple resolver names the cluster in the file: every address must be
  // one a worker can listen on or reach, and this process's task one of them.
  void check_simple_resolver(const SourceNode& resolver) {
    if (!resolver.is_map() || resolver.entries.size() != 1 || resolver.entries.front().first->text != "simple") return;
    const SourceNode& arguments = *resolver.entries.front().second;
    const SourceNode* workers = arguments.is_map() ? arguments.find("workers") : nullptr;
    if (workers == nullptr) return;
    for (const auto& worker : workers->items) {
      try {
        (void)distribute::split_host_port(worker->text);
      } catch (const InvalidArgumentError& error) {
        fail_at(*worker, fmt::format("worker address {}", error.what()), "host:port or [ipv6]:port, port in 1..65535");
      }
    }
    if (const SourceNode* task = arguments.find("task_id")) {
      std::int64_t index = 0;  // the schema checked it is an integer in range
      const auto parsed = std::from_chars(task->text.data(), task->text.data() + task->text.size(), index);
      if (parsed.ec == std::errc() && index >= static_cast<std::int64_t>(workers->items.size())) {
        fail_at(*task, fmt::format("task_id {} is past the {} workers listed", index, workers->items.size()),
                fmt::format("a task index from 0 to {}", workers->items.size() - 1));
      }
    }
  }

  void read_devices() {
    std::vector<const SourceNode*> placed;  // the devices work is placed on, checked at the end
    if (const SourceNode* device = tree_.find("device")) {
      need(device_type(*device, "'device'"));
      out_.device = device->text;
      placed.push_back(device);
    }
    if (const SourceNode* devices = tree_.find("devices")) {
      for (const auto& item : devices->items) {
        DeviceOptions options;
        const SourceNode& name = *item->find("device");
        device_type(name, "'devices'");
        options.device = name.text;
        options.where = item->where;
        const Arguments fields = read_fields(item.get(), section_spec("devices").item->fields, item->where);
        if (fields.contains("memory_growth")) options.memory_growth = fields.at("memory_growth").as_bool();
        if (fields.contains("memory_limit")) options.memory_limit_bytes = fields.at("memory_limit").as_int();
        if (const SourceNode* logical = item->find("logical_devices")) {
          for (const auto& split : logical->items) {
            const SourceNode* limit = split->is_map() ? split->find("memory_limit") : nullptr;
            std::optional<std::uint64_t> bytes;
            if (limit != nullptr) {
              double value = 0;
              parse_byte_size(limit->text, value);
              bytes = static_cast<std::uint64_t>(value);
            }
            options.logical_device_memory_limits.push_back(bytes);
          }
          if (options.memory_growth.value_or(false) && !options.logical_device_memory_limits.empty()) {
            fail_at(*item->find("memory_growth"), "memory_growth cannot be combined with logical_devices",
                    "either memory growth or a logical device split (as in tf.config)");
          }
        }
        out_.devices.push_back(std::move(options));
      }
    }
    if (const SourceNode* strategy = tree_.find("strategy")) {
      const ValueSpec& spec = section_spec("strategy");
      KerasObject object = read_call(*strategy, spec);
      const SourceNode* arguments = strategy->is_map() ? strategy->entries.front().second.get() : nullptr;
      if (object.name == "one_device" && arguments != nullptr && arguments->find("device") != nullptr) {
        need(device_type(*arguments->find("device"), "'strategy.one_device.device'"));
        placed.push_back(arguments->find("device"));
      }
      if (object.name == "mirrored" && arguments != nullptr && arguments->find("devices") != nullptr) {
        std::set<std::string> names;
        for (const auto& device : arguments->find("devices")->items) {
          need(device_type(*device, "'strategy.mirrored.devices'"));
          placed.push_back(device.get());
          if (!names.insert(device->text).second) {
            fail_at(*device, fmt::format("device '{}' is listed twice", device->text), "each replica on its own device");
          }
        }
      }
      if (object.name == "tpu") {
        need("TPU");
        if (arguments != nullptr && arguments->find("tpu") != nullptr) {
          object.arguments["tpu"].data = checked_tpu_name(*arguments->find("tpu"));
        }
        check_tpu_slice_preset(object);
      }
      if (object.name == "multi_worker_mirrored" && arguments != nullptr) {
        if (const SourceNode* resolver = arguments->find("resolver")) {
          for (const Field& field : spec.call(object.name)->arguments) {
            if (field.key == "resolver") out_.cluster_resolver = read_call(*resolver, *field.spec);
          }
          check_simple_resolver(*resolver);
        }
      }
      out_.strategy = std::move(object);
    }
    if (const SourceNode* distribution = tree_.find("distribution")) read_distribution(*distribution);
    check_placed_devices(placed);
    const bool uses_tpu = std::find(out_.device_types_needed.begin(), out_.device_types_needed.end(), "TPU") !=
                          out_.device_types_needed.end();
    const SourceNode* tpu = tree_.find("tpu");
    if (uses_tpu || tpu != nullptr) {
      out_.tpu = read_tpu_system(tpu, context_.tpu_preset_dirs, context_.experiment_dir, context_.options->limits);
      if (context_.options->check_tpu_system) {
        context_.options->check_tpu_system(*out_.tpu, tpu != nullptr ? tpu->where : context_.document);
      }
    }
  }

  void read_work() {
    const SourceNode* model = tree_.find("model");
    const SourceNode* benchmark = tree_.find("benchmark");
    const SourceNode* data = tree_.find("data");
    const SourceNode* training = tree_.find("training");
    if (model == nullptr && benchmark == nullptr) {
      fail_at(run_.where, fmt::format("run '{}' has neither 'model' nor 'benchmark'", run_.name),
              "'model' (with 'data' and 'training') or 'benchmark'");
    }
    if (model != nullptr && benchmark != nullptr) {
      fail_at(*tree_.find_key("benchmark"), fmt::format("run '{}' has both 'model' and 'benchmark'", run_.name),
              "one of them per run");
    }
    if (benchmark != nullptr) {
      for (const char* key : {"data", "training", "distribution"}) {
        if (const SourceNode* extra = tree_.find_key(key)) {
          fail_at(*extra, fmt::format("'{}' does nothing in a benchmark run", key), "'model' with 'data' and 'training', or 'benchmark' alone");
        }
      }
      read_benchmark(*benchmark);
      return;
    }
    if (data == nullptr) fail_at(*tree_.find_key("model"), "a model without 'data'", "a 'data' section, e.g. data: {source: fashion_mnist}");
    if (training == nullptr) {
      fail_at(*tree_.find_key("model"), "a model without 'training'",
              "a 'training' section, e.g. training: {optimizer: adam, loss: sparse_categorical_crossentropy}");
    }
    read_data(*data);
    read_training(*training);
    read_model(*model);
    if (out_.distribution && out_.training->jit_compile == JitCompile::kOff) {
      fail_at(out_.distribution->where, "distribution with training.jit_compile false",
              "jit_compile true or auto: a sharded step is traced and partitioned, never run eagerly");
    }
  }

  void read_benchmark(const SourceNode& node) {
    BenchmarkConfig benchmark;
    const Arguments fields = read_fields(&node, section_spec("benchmark").fields, node.where);
    benchmark.op = fields.at("op").as_text();
    benchmark.dtype = fields.at("dtype").as_text();
    benchmark.repeats = fields.at("repeats").as_int();
    benchmark.warmup = fields.at("warmup").as_int();
    const std::map<std::string, std::vector<std::size_t>> dims{
        {"matmul", {1, 3}}, {"conv2d", {7}}, {"add", {1}}, {"relu", {1}}, {"softmax", {1, 2}}};
    const auto& allowed = dims.at(benchmark.op);
    const auto& sizes = node.find("sizes")->items;
    for (const auto& size : sizes) {
      Value value = to_value(*size, *section_spec("benchmark").field("sizes")->spec->item);
      auto ints = value.as_ints();
      if (std::find(allowed.begin(), allowed.end(), ints.size()) == allowed.end()) {
        std::string counts;
        for (auto n : allowed) counts += (counts.empty() ? "" : " or ") + std::to_string(n);
        fail_at(*size, fmt::format("a size of {} values for op '{}'", ints.size(), benchmark.op),
                fmt::format("{} values per size (matmul: N or [M, N, K]; conv2d: [N, H, W, C, K, R, S])", counts));
      }
      benchmark.sizes.push_back(std::move(ints));
    }
    out_.benchmark = std::move(benchmark);
  }

  void read_data(const SourceNode& node) {
    DataConfig data;
    data.options = read_fields(&node, section_spec("data").fields, node.where);
    data.source = data.options.at("source").as_text();
    // Keys that only mean something for some sources.
    static const std::map<std::string, std::vector<std::string>> kSourceKeys{
        {"path", {"fashion_mnist", "mnist", "csv", "text"}}, {"split", {"fashion_mnist", "mnist"}},
        {"sequence_length", {"text"}}, {"held_out", {"text"}},
        {"images", {"idx"}},       {"labels", {"idx"}},       {"label_column", {"csv"}},
        {"header", {"csv"}},       {"shape", {"synthetic"}},  {"classes", {"synthetic"}},
        {"samples", {"synthetic"}}, {"tokens", {"fashion_mnist", "mnist"}},
        {"input_columns", {"csv"}}, {"label_columns", {"csv"}}};
    for (const auto& [key, value] : node.entries) {
      const auto rule = kSourceKeys.find(key->text);
      if (rule == kSourceKeys.end()) continue;
      if (std::find(rule->second.begin(), rule->second.end(), data.source) == rule->second.end()) {
        fail_at(*key, fmt::format("'data.{}' does not apply to source '{}'", key->text, data.source),
                fmt::format("'data.{}' only with source {}", key->text, quoted_names(rule->second)));
      }
    }
    auto require = [&](const std::string& key, const std::string& example) {
      if (node.find(key) == nullptr) {
        fail_at(*node.find_key("source"), fmt::format("source '{}' needs 'data.{}'", data.source, key),
                fmt::format("'{}: {}'", key, example));
      }
    };
    auto existing = [&](const std::string& key, bool directory) {
      const SourceNode* path = node.find(key);
      if (path == nullptr) return;
      data.options[key].data = existing_path(*path, directory ? "folder" : "file", directory);
    };
    if (data.source == "fashion_mnist" || data.source == "mnist") {
      existing("path", true);
      data.example_shape = {28, 28};
      data.classes = 10;
      if (node.find("tokens") != nullptr) {  // fashion_mnist_blocks: 7x7 blocks of 4x4 pixels
        data.example_shape = {49};
        data.example_dtype = "int32";
      }
    } else if (data.source == "idx") {
      require("images", "train-images-idx3-ubyte.gz");
      require("labels", "train-labels-idx1-ubyte.gz");
      existing("images", false);
      existing("labels", false);
    } else if (data.source == "csv") {
      require("path", "data/train.csv");
      existing("path", false);
    } else if (data.source == "text") {
      require("path", "/usr/share/common-licenses/GPL-3");
      existing("path", false);
      const int64_t length = data.options.at("sequence_length").as_int();
      data.example_shape = {length};
      data.example_dtype = "int32";
      data.classes = data::kByteVocabulary;
      data.label_shape = {length};
    } else if (data.source == "synthetic") {
      // data.shape is required for a model of one input (check_data_for_model_ends).
      if (node.find("shape") != nullptr) data.example_shape = data.options.at("shape").as_ints();
      data.classes = data.options.at("classes").as_int();
    }
    if (const SourceNode* columns = node.find("input_columns")) {
      for (const auto& [input, names] : columns->entries) {
        InputColumns entry{input->text, {}, input->where};
        if (names->is_scalar()) entry.columns.push_back(names->text);
        for (const auto& name : names->items) entry.columns.push_back(name->text);
        data.input_columns.push_back(std::move(entry));
      }
    }
    if (const SourceNode* columns = node.find("label_columns")) {
      for (const auto& [output, name] : columns->entries) {
        data.label_columns.push_back({output->text, name->text, output->where});
      }
    }
    out_.data = std::move(data);
  }

  // What the data gives each model input and output. One input: the data's
  // examples (synthetic needs data.shape for them). Several: synthetic gives
  // each input a random tensor of its declared shape (token ids below the
  // vocabulary of the embedding an int32 input feeds), csv the columns
  // data.input_columns names; the image sources have one input only. Several
  // outputs: data.label_columns (csv) names every output's labels, or every
  // output takes the one label.
  void check_data_for_model_ends(const ModelConfig& model) {
    const ModelGraph* graph = model.graph ? &*model.graph : nullptr;
    DataConfig& data = *out_.data;
    const SourceLocation& source = data.options.at("source").where;
    const std::size_t inputs = graph != nullptr ? graph->inputs.size() : 1;
    if (inputs == 1 && data.source == "synthetic" && data.example_shape.empty()) {
      fail_at(source, "source 'synthetic' needs 'data.shape'", "'shape: [28, 28, 1]'");
    }
    if (graph == nullptr) {
      if (!data.input_columns.empty()) {
        fail_at(data.input_columns.front().where,
                "data.input_columns names the inputs of a model.graph, but this model has one unnamed input",
                "no data.input_columns (every column but the label is the input), or a model.graph");
      }
      if (!data.label_columns.empty()) {
        fail_at(data.label_columns.front().where,
                "data.label_columns names the outputs of a model.graph, but this model has one unnamed output",
                "data.label_column, or a model.graph");
      }
      return;
    }
    std::string input_names;
    for (const GraphInput& input : graph->inputs) input_names += (input_names.empty() ? "" : ", ") + input.name;
    if (inputs > 1) {
      const GraphInput& second = graph->inputs[1];
      if (data.source != "synthetic" && data.source != "csv") {
        fail_at(second.where,
                fmt::format("model.graph has {} inputs ({}), but source '{}' gives one input tensor (the image)",
                            inputs, input_names, data.source),
                "source synthetic (a random tensor per input) or csv with data.input_columns");
      }
      if (data.source == "synthetic") {
        if (!data.example_shape.empty()) {
          fail_at(data.options.at("shape").where,
                  fmt::format("'data.shape' does not apply to a model.graph of {} inputs", inputs),
                  "no data.shape: each input gets a random tensor of its declared shape");
        }
        for (const GraphInput& input : graph->inputs) {
          if (input.dtype == "int32" && !embedding_vocabulary(model, input.name)) {
            fail_at(input.where,
                    fmt::format("input '{}' is int32, but no embedding layer takes it, so synthetic data has no "
                                "vocabulary to draw its token ids from", input.name),
                    "dtype: float32, or an embedding layer on the input");
          }
        }
      }
      if (data.source == "csv" && data.input_columns.empty()) {
        fail_at(source, fmt::format("model.graph has {} inputs ({}), and source 'csv' needs data.input_columns to feed them",
                                    inputs, input_names),
                fmt::format("input_columns: {{{}: [column, ...], ...}}", graph->inputs.front().name));
      }
    }
    for (const InputColumns& entry : data.input_columns) {
      const auto input = std::find_if(graph->inputs.begin(), graph->inputs.end(),
                                      [&](const GraphInput& candidate) { return candidate.name == entry.input; });
      if (input == graph->inputs.end()) {
        fail_at(entry.where, fmt::format("data.input_columns names '{}', which is not an input of model.graph", entry.input),
                fmt::format("one of the inputs: {}", input_names));
      }
      std::int64_t values = 1;
      for (std::int64_t dimension : input->shape) values *= dimension;
      if (values != static_cast<std::int64_t>(entry.columns.size())) {
        fail_at(entry.where, fmt::format("input '{}' takes {} columns, but its shape {} holds {} values", entry.input,
                                         entry.columns.size(), shape_text(input->shape), values),
                fmt::format("{} columns, or an input shape of [{}]", values, entry.columns.size()));
      }
      if (input->dtype != "float32") {
        fail_at(entry.where, fmt::format("input '{}' is {}, but csv columns are float32", entry.input, input->dtype),
                "dtype: float32 for a csv input");
      }
    }
    std::vector<std::string> graph_inputs;
    for (const GraphInput& input : graph->inputs) graph_inputs.push_back(input.name);
    require_entry_for_each(data.input_columns, graph_inputs, &InputColumns::input, "data.input_columns gives no columns to input",
                           "an entry for every input: " + input_names);
    std::string output_names;
    for (const GraphReference& output : graph->outputs) output_names += (output_names.empty() ? "" : ", ") + output.name;
    for (const LabelColumn& entry : data.label_columns) {
      const bool known = std::any_of(graph->outputs.begin(), graph->outputs.end(),
                                     [&](const GraphReference& output) { return output.name == entry.output; });
      if (!known) {
        fail_at(entry.where, fmt::format("data.label_columns names '{}', which is not an output of model.graph", entry.output),
                fmt::format("one of the outputs: {}", output_names));
      }
    }
    std::vector<std::string> graph_outputs;
    for (const GraphReference& output : graph->outputs) graph_outputs.push_back(output.name);
    require_entry_for_each(data.label_columns, graph_outputs, &LabelColumn::output,
                           "data.label_columns gives no label column to output", "an entry for every output: " + output_names);
  }

  // When `entries` are written, each of `names` has one (its name in `member`);
  // a missing one is an error at the first entry.
  template <typename Entry>
  static void require_entry_for_each(const std::vector<Entry>& entries, const std::vector<std::string>& names,
                                     std::string Entry::*member, const std::string& problem, const std::string& expected) {
    if (entries.empty()) return;
    for (const std::string& name : names) {
      const bool named =
          std::any_of(entries.begin(), entries.end(), [&](const Entry& entry) { return entry.*member == name; });
      if (!named) fail_at(entries.front().where, fmt::format("{} '{}'", problem, name), expected);
    }
  }

  void read_training(const SourceNode& node) {
    const ValueSpec& spec = section_spec("training");
    TrainingConfig training;
    check_learning_rate_schedule(*node.find("optimizer"));
    training.optimizer = read_call(*node.find("optimizer"), *spec.field("optimizer")->spec);
    training.loss = read_call(*node.find("loss"), *spec.field("loss")->spec);
    if (const SourceNode* metrics = node.find("metrics")) {
      for (const auto& item : metrics->items) training.metrics.push_back(read_call(*item, *spec.field("metrics")->spec->item));
    }
    if (const SourceNode* callbacks = node.find("callbacks")) {
      for (const auto& item : callbacks->items) {
        training.callbacks.push_back(read_call(*item, *spec.field("callbacks")->spec->item));
      }
    }
    for (const KerasObject& callback : training.callbacks) {
      if (callback.name == "model_checkpoint") check_checkpoint_extension(callback);
    }
    const Value* rate = training.optimizer.argument("learning_rate");
    for (const KerasObject& callback : training.callbacks) {
      if (rate != nullptr && rate->is_object() && callback.name == "reduce_lr_on_plateau") {
        fail_at(callback.where,
                fmt::format("'reduce_lr_on_plateau' would replace the learning-rate schedule '{}'",
                            rate->as_object().name),
                "a number as the optimizer's learning_rate with reduce_lr_on_plateau");
      }
    }
    const Arguments fields = read_fields(&node, spec.fields, node.where);
    training.epochs = fields.at("epochs").as_int();
    if (fields.contains("steps_per_epoch")) training.steps_per_epoch = fields.at("steps_per_epoch").as_int();
    if (fields.contains("evaluation_steps")) training.evaluation_steps = fields.at("evaluation_steps").as_int();
    if (fields.contains("validation_split")) training.validation_split = fields.at("validation_split").as_number();
    if (training.validation_split >= 1) {
      fail_at(fields.at("validation_split").where, "'training.validation_split' is 1 or more", "a fraction below 1");
    }
    if (fields.contains("seed")) training.seed = fields.at("seed").as_int();
    training.mixed_precision = fields.at("mixed_precision").as_text();
    const std::string& jit_compile = fields.at("jit_compile").as_text();
    training.jit_compile = jit_compile == "true"    ? JitCompile::kOn
                           : jit_compile == "false" ? JitCompile::kOff
                                                    : JitCompile::kAuto;
    // The schema admits the policies' names only.
    training.remat = parse_remat_policy(fields.at("remat").as_text()).value_or(RematPolicy::kNone);
    if (fields.contains("remat_blocks")) {
      training.remat_blocks = fields.at("remat_blocks").as_text();
      try {
        const std::regex pattern(training.remat_blocks);
        if (pattern.mark_count() < 1) {
          fail_at(fields.at("remat_blocks").where, "'training.remat_blocks' has no group",
                  "a group that names the block, e.g. '^(layer\\d+)_'");
        }
      } catch (const std::regex_error& error) {
        fail_at(fields.at("remat_blocks").where,
                fmt::format("'training.remat_blocks' is not a regular expression ({})", error.what()),
                "a regular expression with a group, e.g. '^(layer\\d+)_'");
      }
    }
    out_.training = std::move(training);
  }

  // model_checkpoint writes what its filepath's extension names, as Keras 3's
  // ModelCheckpoint (the rule ModelCheckpoint applies in the run): the
  // extension must fit save_weights_only.
  static void check_checkpoint_extension(const KerasObject& callback) {
    const Value* path = callback.argument("filepath");
    const Value* weights_only = callback.argument("save_weights_only");
    if (path == nullptr || !path->is_set()) return;  // reported as a missing key
    const std::string& filepath = path->as_text();
    const bool weights = weights_only == nullptr || !weights_only->is_set() || weights_only->as_bool();
    if (keras::fitting_checkpoint_format(filepath, weights)) return;
    fail_at(path->where,
            fmt::format("model_checkpoint filepath '{}' does not fit save_weights_only: {}", filepath, weights),
            weights ? "a path ending in .weights.h5 or .safetensors (or save_weights_only: false for .keras)"
                    : "a path ending in .keras or .safetensors (or save_weights_only: true for .weights.h5)");
  }

  // The rules of a learning-rate schedule that span its keys (each key is
  // already checked by itself).
  static void check_learning_rate_schedule(const SourceNode& optimizer) {
    if (!optimizer.is_map()) return;
    const SourceNode* arguments = optimizer.entries.front().second.get();
    const SourceNode* rate = arguments != nullptr && arguments->is_map() ? arguments->find("learning_rate") : nullptr;
    if (rate == nullptr || !rate->is_map()) return;
    const std::string& schedule = rate->entries.front().first->text;
    const SourceNode* fields = rate->entries.front().second.get();
    if (fields == nullptr || !fields->is_map()) return;
    const std::string path =
        fmt::format("training.optimizer.{}.learning_rate.{}", optimizer.entries.front().first->text, schedule);
    if (schedule == "cosine_decay" && fields->find("warmup_steps") != nullptr && fields->find("warmup_target") == nullptr) {
      fail_at(*fields->find_key("warmup_steps"), fmt::format("'{}.warmup_steps' without 'warmup_target'", path),
              "warmup_target with warmup_steps (Keras ignores warmup_steps without one)");
    }
    if (schedule != "piecewise_constant_decay") return;
    const SourceNode* boundaries = fields->find("boundaries");
    const SourceNode* values = fields->find("values");
    if (boundaries == nullptr || values == nullptr) return;  // reported as missing keys
    if (values->items.size() != boundaries->items.size() + 1) {
      fail_at(*values, fmt::format("'{}.values' has {} rates for {} boundaries", path, values->items.size(),
                                   boundaries->items.size()),
              fmt::format("{} rates, one more than boundaries", boundaries->items.size() + 1));
    }
    for (std::size_t i = 1; i < boundaries->items.size(); ++i) {
      const long long before = std::stoll(boundaries->items[i - 1]->text);
      const long long boundary = std::stoll(boundaries->items[i]->text);
      if (boundary <= before) {
        fail_at(*boundaries->items[i], fmt::format("'{}.boundaries[{}]' is {}, not above the boundary before it ({})",
                                                   path, i, boundary, before),
                "boundaries that increase strictly");
      }
    }
  }

  // The file (or folder) `path` names, resolved against the experiment's
  // folder; "<what> '<resolved>' not found" at `path` when there is none.
  std::string existing_path(const SourceNode& path, const std::string& what, bool directory = false) const {
    const std::string resolved = resolve_path(path.text, context_.experiment_dir);
    std::error_code error;
    if (!(directory ? fs::is_directory(resolved, error) : fs::is_regular_file(resolved, error))) {
      fail_at(path, fmt::format("{} '{}' not found", what, resolved),
              fmt::format("an existing {} (relative paths start at the experiment file's folder)",
                          directory ? "folder" : "file"));
    }
    return resolved;
  }

  // model.keras_file: inspected now (without building the model, which would
  // start the runtime before the run configures its devices) so that a
  // damaged file or an unknown layer is reported at its line, and the data
  // is checked against the model's input.
  void read_keras_file(const SourceNode& node, ModelConfig& model) {
    const SourceNode& path = *node.find("keras_file");
    if (path.text.size() < 6 || path.text.substr(path.text.size() - 6) != ".keras") {
      fail_at(path, fmt::format("model.keras_file '{}' is not a .keras file", path.text),
              "a Keras 3 .keras archive (for weights only, use model.initial_weights with a model.layers/graph)");
    }
    model.keras_file = existing_path(path, "model.keras_file");
    model.name = fs::path(*model.keras_file).stem().string();
    if (const SourceNode* name = node.find("name")) model.name = name->text;
    if (!context_.options->inspect_keras_file) return;
    try {
      model.keras_file_input_shape = context_.options->inspect_keras_file(*model.keras_file);
    } catch (const accel::Error& error) {
      fail_at(path, fmt::format("model.keras_file cannot be loaded: {}", error.what()),
              "a .keras file of Sequential or Functional models, one input and one output, of the layers "
              "docs/keras.md lists");
    }
    check_input_fits_data(model.keras_file_input_shape, path.where, "model.keras_file's input of shape");
  }

  void read_model(const SourceNode& node) {
    ModelConfig model;
    if (const SourceNode* weights = node.find("initial_weights")) {
      const bool h5 = weights->text.ends_with(".h5");
      if (!h5 && !weights->text.ends_with(".safetensors")) {
        fail_at(*weights, fmt::format("model.initial_weights '{}' is neither .h5 nor .safetensors", weights->text),
                "a Keras 3 .weights.h5 file or an accel .safetensors file");
      }
      model.initial_weights = existing_path(*weights, "model.initial_weights");
    }
    read_model_form(node, model);
    check_model_files(node);
  }

  // The model's files loaded in full (LoadOptions::check_model_files): a fault
  // is reported at the file's line, initial_weights unless it is the .keras's own.
  void check_model_files(const SourceNode& node) {
    const ModelConfig& model = *out_.model;
    if (!context_.options->check_model_files || (!model.keras_file && !model.initial_weights)) return;
    try {
      context_.options->check_model_files(model, out_.data->example_shape);
    } catch (const accel::Error& error) {
      const std::string message = error.what();
      const bool keras_file_fault = model.keras_file && (!model.initial_weights || message.starts_with(*model.keras_file));
      const SourceNode& at = *node.find(keras_file_fault ? "keras_file" : "initial_weights");
      fail_at(at,
              fmt::format("{} cannot be loaded into the model: {}",
                          keras_file_fault ? "model.keras_file" : "model.initial_weights", message),
              keras_file_fault ? "a .keras file whose weights fit its own config (names, shapes, dtypes)"
                               : "a weights file holding every variable of the model, each of the model's shape and "
                                 "dtype (Keras 3 .weights.h5 layout or accel's .safetensors)");
    }
  }

  void read_model_form(const SourceNode& node, ModelConfig& model) {
    const ValueSpec& spec = section_spec("model");
    const ValueSpec& layer_spec = *spec.field("layers")->spec->item;
    if (node.find("keras_file") != nullptr) {
      check_data_for_model_ends(model);
      read_keras_file(node, model);
      out_.model = std::move(model);
      return;
    }
    if (const SourceNode* graph = node.find("graph")) {
      model.name = "model";
      if (const SourceNode* name = node.find("name")) model.name = name->text;
      read_model_graph(*graph, layer_spec, model);
      check_data_for_model_ends(model);
      check_dropout_rates(model.layers);
      infer_graph_shapes(model, *graph);
      out_.model = std::move(model);
      return;
    }
    if (const SourceNode* name = node.find("name")) model.name = name->text;
    check_data_for_model_ends(model);
    const auto& layers = node.find("layers")->items;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      KerasObject layer = read_call(*layers[i], layer_spec);
      check_sequential_layer(layer, i);
      if (i > 0 && layer.arguments.contains("input_shape")) {
        fail_at(layer.arguments.at("input_shape").where,
                fmt::format("model.layers[{}] ({}) has input_shape, which only the first layer may have", i, layer.name),
                "input_shape on model.layers[0] only");
      }
      model.layers.push_back(std::move(layer));
    }
    check_dropout_rates(model.layers);
    infer_shapes(model);
    out_.model = std::move(model);
  }

  static void check_dropout_rates(const std::vector<KerasObject>& layers) {
    for (const KerasObject& layer : layers) {
      for (const char* key : {"rate", "dropout"}) {
        const Value* rate = layer.argument(key);
        if (rate == nullptr || !rate->is_set() || rate->as_number() < 1) continue;
        if (layer.name != "dropout" && layer.name != "multi_head_attention") continue;
        fail_at(rate->where, fmt::format("'{}.{}' is 1 or more, which drops everything", layer.name, key),
                "a rate in [0, 1)");
      }
    }
  }

  // The data's examples become the model's input: the same number of values
  // (they are reshaped), and token ids for an int32 input.
  void check_input_fits_data(const std::vector<std::int64_t>& declared, const SourceLocation& where,
                             const std::string& what) const {
    const DataConfig& data = *out_.data;
    if (data.example_shape.empty()) return;
    std::int64_t have = 1;
    std::int64_t want = 1;
    bool overflow = false;
    for (auto d : data.example_shape) overflow |= __builtin_mul_overflow(have, d, &have);
    for (auto d : declared) overflow |= __builtin_mul_overflow(want, d, &want);
    if (overflow || have != want) {
      fail_at(where,
              fmt::format("{} {} does not fit the data: {} examples have shape {}", what, shape_text(declared),
                          data.source, shape_text(data.example_shape)),
              fmt::format("a shape holding {} values, e.g. {}", have, shape_text(data.example_shape)));
    }
  }

  void infer_graph_shapes(ModelConfig& model, const SourceNode& graph_node) {
    const ModelGraph& graph = *model.graph;
    const DataConfig& data = *out_.data;
    if (graph.inputs.size() == 1) {
      const GraphInput& input = graph.inputs.front();
      check_input_fits_data(input.shape, graph_node.find("inputs")->find(input.name)->find("shape")->where,
                            fmt::format("input '{}' of shape", input.name));
      if (input.dtype != data.example_dtype) {
        const SourceNode* dtype = graph_node.find("inputs")->find(input.name)->find("dtype");
        fail_at(dtype != nullptr ? dtype->where : input.where,
                fmt::format("input '{}' is {} but the data gives {} examples", input.name, input.dtype,
                            data.example_dtype),
                data.example_dtype == "int32" ? "dtype: int32 for the token ids of data.tokens"
                                              : "dtype: float32, or token ids from data.tokens: fashion_mnist_blocks");
      }
    }
    model.layer_output_shapes = infer_graph_output_shapes(model.layers, graph);
    for (const GraphReference& output : graph.outputs) {
      for (std::size_t i = 0; i < model.layers.size(); ++i) {
        if (model.layers[i].argument("name")->as_text() != output.name) continue;
        check_output_against_loss(model.layers[i], model.layer_output_shapes[i], graph_layer_label(model.layers[i], i));
      }
    }
  }

  void infer_shapes(ModelConfig& model) {
    const DataConfig& data = *out_.data;
    std::vector<std::int64_t> example = data.example_shape;
    if (const Value* input_shape = model.layers.front().argument("input_shape")) {
      std::vector<std::int64_t> declared = input_shape->as_ints();
      check_input_fits_data(declared, input_shape->where, "input_shape");
      example = std::move(declared);
    }
    if (example.empty()) return;  // idx / csv without input_shape: known only when the data is read
    model.layer_output_shapes = infer_layer_output_shapes(model.layers, example);
    check_output_against_loss(model.layers.back(), model.layer_output_shapes.back(),
                              fmt::format("model.layers[{}] ({})", model.layers.size() - 1, model.layers.back().name));
  }

  void check_output_against_loss(const KerasObject& last, const Shape& output, const std::string& where_layer) {
    const TrainingConfig& training = *out_.training;
    const DataConfig& data = *out_.data;
    const std::string& loss = training.loss.name;
    const bool one_hot = data.options.at("one_hot").as_bool();
    if (loss == "categorical_crossentropy" && !one_hot) {
      fail_at(training.loss.where, "categorical_crossentropy needs one-hot labels but the data gives integer labels",
              "sparse_categorical_crossentropy, or data.one_hot: true");
    }
    if ((loss == "sparse_categorical_crossentropy") && one_hot) {
      fail_at(training.loss.where, "sparse_categorical_crossentropy needs integer labels but data.one_hot is true",
              "categorical_crossentropy, or data.one_hot: false");
    }
    if ((loss == "sparse_categorical_crossentropy" || loss == "categorical_crossentropy") && !data.label_shape.empty()) {
      // A label per position (text): [batch, positions..., classes]. Integer
      // labels fit any vocabulary at least that large (a model of a larger
      // vocabulary trains on bytes as well); one-hot labels need exactly it.
      Shape expected{-1};
      expected.insert(expected.end(), data.label_shape.begin(), data.label_shape.end());
      expected.push_back(data.classes.value_or(-1));
      const bool sparse = loss == "sparse_categorical_crossentropy";
      if (output.size() != expected.size() ||
          !std::equal(output.begin() + 1, output.end() - 1, expected.begin() + 1) ||
          (data.classes && (sparse ? output.back() < *data.classes : output.back() != *data.classes))) {
        fail_at(last.where, fmt::format("{} outputs {}, but source '{}' has a label per position", where_layer,
                                        shape_text(output), data.source),
                fmt::format("{}{} scores at every position: {}", sparse ? "at least " : "", data.classes.value_or(0),
                            shape_text(expected)));
      }
    } else if (loss == "sparse_categorical_crossentropy" || loss == "categorical_crossentropy") {
      if (output.size() != 2) {
        fail_at(last.where, fmt::format("{} outputs {}, but {} compares one score per class", where_layer,
                                        shape_text(output), loss),
                "a [batch, classes] output; add flatten (or global_average_pooling2d) before the last dense layer");
      }
      if (data.classes && output[1] != *data.classes) {
        const Value* units = last.argument(last.name == "dense" ? "units" : "filters");
        fail_at(units != nullptr && !units->defaulted ? units->where : last.where, fmt::format("{} outputs {} scores per example but the data has {} classes", where_layer,
                                        output[1], *data.classes),
                fmt::format("a last layer with {} units", *data.classes));
      }
    }
    if (loss == "binary_crossentropy") {
      if (output.back() != 1 && !one_hot) {
        fail_at(last.where, fmt::format("{} outputs {}, but binary_crossentropy needs one probability", where_layer,
                                        shape_text(output)),
                "a last layer with 1 unit");
      }
      if (data.classes && *data.classes != 2) {
        fail_at(training.loss.where, fmt::format("binary_crossentropy on data with {} classes", *data.classes),
                "2 classes, or sparse_categorical_crossentropy");
      }
    }
  }

  void read_output() {
    const SourceNode* output = tree_.find("output");
    const Arguments fields = read_fields(output, section_spec("output").fields, context_.document);
    out_.output_directory = fields.contains("directory") ? fields.at("directory").as_text()
                                                         : "runs/" + context_.experiment_name;
    out_.trace = fields.at("trace").as_bool();
    out_.reports = fields.contains("report") ? fields.at("report").as_texts() : std::vector<std::string>{"markdown", "json"};
  }

  void decide_skip() {
    if (out_.device_types_needed.empty() || context_.catalog->any_type) return;
    for (const std::string& type : out_.device_types_needed) {
      const auto available = context_.catalog->available.find(type);
      if (available != context_.catalog->available.end() && available->second > 0) continue;
      const auto reason = context_.catalog->absence_reasons.find(type);
      out_.skipped_reason = fmt::format("no {} device here{}", type,
                                        reason != context_.catalog->absence_reasons.end() ? " (" + reason->second + ")" : "");
      return;
    }
  }

  const RunTree& run_;
  const SourceNode& tree_;
  const RunContext& context_;
  RunConfig out_;
};

}  // namespace

RunConfig read_run(const RunTree& run, const RunContext& context) { return RunReader(run, context).read(); }

std::vector<PluginReference> read_run_plugins(const RunTree& run, const RunContext& context) {
  return RunReader(run, context).read_plugins_only();
}

}  // namespace accel::experiment
