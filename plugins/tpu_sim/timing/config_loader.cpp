#include "timing/config_loader.hpp"

#include <accel/plugin/edit_distance.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "timing/config_error.hpp"
#include "timing/hardware_limits.hpp"
#include "timing/quantity_text.hpp"
#include "timing/yaml_structure_check.hpp"

namespace accel::tpu {
namespace {

struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};
using KeyLocator = std::function<Location(const std::string& key)>;

using sdk::edit_distance;

std::string closest_key(std::string_view key, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(3, key.size() / 3) + 1;
  for (const auto& candidate : known) {
    const std::size_t distance = edit_distance(key, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

std::string join_keys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& key : keys) out += (out.empty() ? "'" : ", '") + key + "'";
  return out;
}

// Context of one load: file name, which dotted keys were overridden.
struct LoadContext {
  std::string file;
  std::map<std::string, std::string> overridden;  // key -> "key=value"

  Location locate(const std::string& key, const YAML::Node& node) const {
    // The key itself or a section around it ("core={mxus: 2}") may be overridden.
    for (const auto& [overridden_key, text] : overridden) {
      if (key == overridden_key || key.starts_with(overridden_key + ".")) return {"override '" + text + "'", 0, 0};
    }
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) return {file, 0, 0};
    return {file, mark.line + 1, mark.column + 1};
  }
  [[noreturn]] void fail(const std::string& key, const YAML::Node& node, const std::string& problem,
                         const std::string& expected) const {
    const Location where = locate(key, node);
    throw ConfigError(where.file, where.line, where.column, key, problem, expected);
  }
};

// Reads the fields of one YAML mapping, rejecting keys it does not know.
class MappingReader {
 public:
  MappingReader(const YAML::Node& node, std::string path, const LoadContext& context,
                std::vector<std::string> known_keys)
      : node_(node), path_(std::move(path)), context_(context), known_(std::move(known_keys)) {
    if (!node_.IsMap()) {
      context_.fail(path_.empty() ? "<document>" : path_, node_,
                    fmt::format("'{}' is not a mapping", path_.empty() ? "document" : path_),
                    "a mapping of keys " + join_keys(known_));
    }
    for (const auto& entry : node_) {
      const std::string key = entry.first.Scalar();  // check_yaml_structure: keys are scalars
      if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
      const std::string suggestion = closest_key(key, known_);
      const std::string problem =
          suggestion.empty() ? fmt::format("unknown key '{}'", full(key))
                             : fmt::format("unknown key '{}' (did you mean '{}'?)", full(key), suggestion);
      context_.fail(full(key), entry.first, problem, "one of " + join_keys(known_));
    }
  }

  bool has(const std::string& key) const { return node_[key].IsDefined(); }

  YAML::Node required(const std::string& key) const {
    const YAML::Node value = node_[key];
    if (!value.IsDefined()) {
      context_.fail(full(key), node_, fmt::format("missing key '{}'", full(key)),
                    fmt::format("'{}' in '{}'", key, path_.empty() ? "document" : path_));
    }
    return value;
  }

  MappingReader child(const std::string& key, std::vector<std::string> known_keys) const {
    return MappingReader(required(key), full(key), context_, std::move(known_keys));
  }

  std::string text(const std::string& key) const {
    const YAML::Node value = required(key);
    if (!value.IsScalar()) fail_value(key, value, fmt::format("'{}' is not a scalar", full(key)), "a string");
    return value.Scalar();
  }

  // A finite number; its range is checked on the whole Hardware (check_field_ranges).
  double number(const std::string& key) const {
    const YAML::Node value = required(key);
    double out = 0;
    if (!value.IsScalar() || !parse_finite_number(value.Scalar(), out)) {
      fail_value(key, value, fmt::format("'{}' is {}, not a finite number", full(key), shown(value)),
                    expected_for(key, "a finite number"));
    }
    return out;
  }

  double optional_number(const std::string& key, double fallback) const { return has(key) ? number(key) : fallback; }

  // An integer that fits an int; its range is checked later like number's.
  int integer(const std::string& key) const { return to_int(key, required(key)); }

  // A size in bytes ("16 MiB") that fits an int64 (llround of anything larger is undefined).
  std::int64_t bytes(const std::string& key) const {
    const YAML::Node value = required(key);
    double out = 0;
    if (!value.IsScalar() || !parse_byte_size(value.Scalar(), out)) {
      fail_value(key, value, fmt::format("'{}' is {}, not a size", full(key), shown(value)),
                    expected_for(key, "a size in bytes, e.g. 4096 or '16 MiB'"));
    }
    if (!(std::fabs(out) < 0x1p62)) {
      fail_value(key, value, fmt::format("'{}' is {}, out of range", full(key), shown(value)),
                    expected_for(key, "a size in bytes"));
    }
    return static_cast<std::int64_t>(std::llround(out));
  }

  template <typename Enum>
  Enum choice(const std::string& key, bool (*parse)(std::string_view, Enum&), const std::string& expected) const {
    const std::string value = text(key);
    Enum out{};
    if (!parse(value, out)) context_.fail(full(key), required(key), fmt::format("'{}' is '{}'", full(key), value), expected);
    return out;
  }

  // A list of plain strings (citations); an empty list is allowed.
  std::vector<std::string> string_list(const std::string& key) const {
    const YAML::Node value = required(key);
    if (!value.IsSequence()) {
      context_.fail(full(key), value, fmt::format("'{}' is not a list", full(key)),
                    "a list of strings, e.g. [\"[J21] Jouppi et al., ISCA 2021, Table 2\"]");
    }
    std::vector<std::string> out;
    for (const auto& item : value) {
      if (!item.IsScalar()) {
        context_.fail(full(key), item, fmt::format("an entry of '{}' is {}", full(key), shown(item)), "a string");
      }
      out.push_back(item.Scalar());
    }
    return out;
  }

  std::vector<int> int_list(const std::string& key) const {
    const YAML::Node value = required(key);
    if (!value.IsSequence() || value.size() == 0) {
      context_.fail(full(key), value, fmt::format("'{}' is not a list", full(key)),
                    "a list of positive integers, e.g. [4, 4, 4]");
    }
    std::vector<int> out;
    for (const auto& item : value) out.push_back(to_int(key, item));
    return out;
  }

  std::string full(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const YAML::Node& node() const { return node_; }

 private:
  int to_int(const std::string& key, const YAML::Node& value) const {
    double out = 0;
    if (!value.IsScalar() || !parse_finite_number(value.Scalar(), out) || out != std::floor(out)) {
      fail_value(key, value, fmt::format("'{}' is {}, not an integer", full(key), shown(value)),
                    expected_for(key, "an integer"));
    }
    if (out < std::numeric_limits<int>::min() || out > std::numeric_limits<int>::max()) {
      fail_value(key, value, fmt::format("'{}' is {}, out of range", full(key), shown(value)),
                    expected_for(key, "an integer"));
    }
    return static_cast<int>(out);
  }

  // An empty value has no position of its own (yaml-cpp marks the next
  // token); its key has.
  [[noreturn]] void fail_value(const std::string& key, const YAML::Node& value, const std::string& problem,
                               const std::string& expected) const {
    YAML::Node where = value;
    if (value.IsNull()) {
      for (const auto& entry : node_) {
        if (entry.first.Scalar() == key) where.reset(entry.first);
      }
    }
    context_.fail(full(key), where, problem, expected);
  }

  // The field's documented range when it has one, else `fallback`.
  std::string expected_for(const std::string& key, const std::string& fallback) const {
    const FieldLimit* limit = find_field_limit(full(key));
    return limit != nullptr ? describe_range(*limit) : fallback;
  }

  static std::string shown(const YAML::Node& node) {
    if (node.IsNull()) return "empty";
    if (node.IsMap()) return "a mapping";
    if (node.IsSequence()) return "a list";
    const std::string& text = node.Scalar();
    return "'" + (text.size() > 40 ? text.substr(0, 37) + "..." : text) + "'";
  }

  YAML::Node node_;
  std::string path_;
  const LoadContext& context_;
  std::vector<std::string> known_;
};

int topology_rank(Topology topology) {
  switch (topology) {
    case Topology::kNone: return 0;
    case Topology::kRing: return 1;
    case Topology::kMesh2D:
    case Topology::kTorus2D: return 2;
    case Topology::kMesh3D:
    case Topology::kTorus3D: return 3;
  }
  return 0;
}

// Cross-field rules. `locate` maps a dotted key to where it is written.
void check_hardware(const Hardware& hw, const KeyLocator& locate) {
  auto fail = [&](const std::string& key, const std::string& problem, const std::string& expected) {
    const Location where = locate(key);
    throw ConfigError(where.file, where.line, where.column, key, problem, expected);
  };
  // Ranges first: the products below stay in int64 only for in-range fields.
  check_field_ranges(hw, fail);
  const auto& core = hw.core;
  const auto& mxu = core.mxu;
  // One MXU tile of each operand, double-buffered inputs and weights, plus the
  // output tile (in VMEM unless there are dedicated accumulators), per MXU.
  const std::int64_t tile = static_cast<std::int64_t>(mxu.rows) * mxu.columns;
  const std::int64_t in_bytes = bytes_per_element(mxu.input_type);
  const std::int64_t acc_bytes = bytes_per_element(mxu.accumulator_type);
  const std::int64_t output_tile = tile * acc_bytes * core.mxus;
  const std::int64_t vmem_needed = core.mxus * tile * in_bytes * 4 + (core.accumulator_bytes > 0 ? 0 : output_tile);
  if (core.vmem_bytes < vmem_needed) {
    fail("core.vmem_bytes",
         fmt::format("an MXU tile does not fit the on-chip buffer: {} bytes hold less than {} MXU(s) of {}x{} {} "
                     "(double-buffered inputs and weights{})",
                     core.vmem_bytes, core.mxus, mxu.rows, mxu.columns, to_string(mxu.input_type),
                     core.accumulator_bytes > 0 ? "" : " and the accumulator tile"),
         fmt::format("at least {} bytes", vmem_needed));
  }
  if (core.accumulator_bytes > 0 && core.accumulator_bytes < output_tile) {
    fail("core.accumulator_bytes",
         fmt::format("{} accumulator bytes cannot hold one {}x{} {} output tile per MXU", core.accumulator_bytes,
                     mxu.rows, mxu.columns, to_string(mxu.accumulator_type)),
         fmt::format("at least {} bytes", output_tile));
  }
  const auto& net = hw.interconnect;
  const int rank = topology_rank(net.topology);
  if (rank == 0) {
    if (hw.chips != 1) fail("chips", fmt::format("{} chips but interconnect topology 'none'", hw.chips), "chips: 1 or a topology");
    return;
  }
  if (static_cast<int>(net.dims.size()) != rank) {
    fail("interconnect.dims", fmt::format("{} dimensions for topology '{}'", net.dims.size(), to_string(net.topology)),
         fmt::format("{} dimensions", rank));
  }
  std::int64_t product = 1;
  for (int d : net.dims) product *= d;
  if (product != hw.chips) {
    fail("interconnect.dims", fmt::format("the dimensions hold {} chips but 'chips' is {}", product, hw.chips),
             "dimensions whose product equals 'chips'");
  }
  if (net.links < 2 * rank && (net.topology == Topology::kTorus2D || net.topology == Topology::kTorus3D || net.topology == Topology::kRing)) {
    fail("interconnect.links", fmt::format("{} links cannot form a {}", net.links, to_string(net.topology)),
         fmt::format("at least {} links per chip", 2 * rank));
  }
}


std::string override_name(const FieldOverride& field) { return "override '" + field.key + "=" + field.value + "'"; }

// A YAML exception as a ConfigError at its mark in `file`.
ConfigError yaml_error(const std::string& file, const YAML::Exception& error) {
  if (error.mark.is_null()) return ConfigError(file, 0, 0, "", error.msg, "a valid hardware description");
  return ConfigError(file, error.mark.line + 1, error.mark.column + 1, "", error.msg, "valid YAML");
}

void apply_override(YAML::Node root, const FieldOverride& field, LoadContext& context) {
  const std::string name = override_name(field);
  // Split by hand: getline drops a trailing empty part, which would read
  // 'core.mxu.' as 'core.mxu' and then blame the preset file for the override.
  std::vector<std::string> parts(1);
  for (char c : field.key) {
    if (c == '.') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  for (const std::string& part : parts) {
    if (part.empty()) {
      throw ConfigError(name, 0, 0, field.key, "empty key part", "a dotted key such as core.mxu.rows");
    }
  }
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = node.IsMap() ? node[parts[i]] : YAML::Node();
    if (!next.IsDefined() || !next.IsMap()) {
      throw ConfigError(name, 0, 0, field.key, fmt::format("'{}' does not name a section", parts[i]),
                        "a dotted key such as core.mxu.rows");
    }
    node.reset(next);
  }
  if (!node.IsMap() && !node.IsNull()) {
    throw ConfigError(name, 0, 0, field.key, "the document is not a mapping", "a hardware description");
  }
  YAML::Node value;
  try {
    value = YAML::Load(field.value);
  } catch (const YAML::Exception& error) {
    throw yaml_error(name, error);
  }
  check_yaml_structure(value, name);
  node[parts.back()] = value;
  context.overridden[field.key] = field.key + "=" + field.value;
}

Hardware read_hardware(const YAML::Node& root, const std::string& source_name, const LoadContext& context);

}  // namespace

FieldOverride parse_field_override(std::string_view text) {
  const auto equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0 || equals + 1 == text.size()) {
    throw ConfigError("override '" + std::string(text) + "'", 0, 0, std::string(text), "malformed override",
                      "key=value, e.g. core.mxu.rows=64");
  }
  return {std::string(text.substr(0, equals)), std::string(text.substr(equals + 1))};
}

Hardware load_hardware_text(std::string_view yaml, const std::string& source_name,
                            const std::vector<FieldOverride>& overrides) {
  if (yaml.size() > kMaxHardwareFileBytes) {
    throw ConfigError(source_name, 0, 0, "", fmt::format("{} bytes is too large for a hardware description", yaml.size()),
                      fmt::format("at most {} bytes", kMaxHardwareFileBytes));
  }
  LoadContext context{source_name, {}};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& error) {
    throw yaml_error(source_name, error);
  }
  check_yaml_structure(root, source_name);
  for (const auto& field : overrides) apply_override(root, field, context);
  try {
    return read_hardware(root, source_name, context);
  } catch (const YAML::Exception& error) {
    // The readers check types before converting; this is the net under them.
    throw yaml_error(source_name, error);
  }
}

namespace {

Hardware read_hardware(const YAML::Node& root, const std::string& source_name, const LoadContext& context) {
  // Keys are declared per mapping: a key not listed here is an error.
  MappingReader top(root, "", context,
                    {"name", "description", "clock_hz", "clock_source", "published_peak_ops_per_s", "chips",
                     "tensor_cores_per_chip", "megacore", "cmem_bytes", "core", "hbm", "interconnect", "energy"});
  Hardware hw;
  hw.source = source_name;
  hw.name = top.text("name");
  hw.clock_hz = top.number("clock_hz");
  const std::string clock_source = top.text("clock_source");
  if (clock_source != "published" && clock_source != "derived_from_peak") {
    context.fail("clock_source", top.required("clock_source"), fmt::format("'clock_source' is '{}'", clock_source),
                 "'published' or 'derived_from_peak'");
  }
  hw.clock_derived_from_peak = clock_source == "derived_from_peak";
  hw.published_peak_ops_per_s = top.number("published_peak_ops_per_s");
  hw.chips = top.integer("chips");
  hw.cores_per_chip = top.integer("tensor_cores_per_chip");
  // Optional: the chip's TensorCores can act as one (docs/tpu-emulator.md, "Megacore").
  if (top.has("megacore")) {
    const std::string megacore = top.text("megacore");
    if (megacore != "true" && megacore != "false") {
      context.fail("megacore", top.required("megacore"), fmt::format("'megacore' is '{}'", megacore), "true or false");
    }
    hw.megacore = megacore == "true";
  }
  // Optional: a chip-wide on-chip memory beside the cores' VMEM (TPU v4's CMEM).
  hw.cmem_bytes = top.has("cmem_bytes") ? top.bytes("cmem_bytes") : 0;

  const MappingReader core = top.child("core", {"mxus", "mxu", "vector_unit", "vmem_bytes", "accumulator_bytes"});
  hw.core.mxus = core.integer("mxus");
  hw.core.vmem_bytes = core.bytes("vmem_bytes");
  hw.core.accumulator_bytes = core.has("accumulator_bytes") ? core.bytes("accumulator_bytes") : 0;
  const MappingReader mxu = core.child("mxu", {"rows", "columns", "dataflow", "input_type", "accumulator_type"});
  hw.core.mxu.rows = mxu.integer("rows");
  hw.core.mxu.columns = mxu.integer("columns");
  hw.core.mxu.dataflow = mxu.choice<Dataflow>("dataflow", parse_dataflow, "ws, os or is");
  hw.core.mxu.input_type = mxu.choice<NumberType>("input_type", parse_number_type, "int8, bf16, fp16 or fp32");
  hw.core.mxu.accumulator_type =
      mxu.choice<NumberType>("accumulator_type", parse_number_type, "int32 or fp32");
  const MappingReader vector = core.child("vector_unit", {"sublanes", "lanes", "alus_per_lane"});
  hw.core.vector_unit.sublanes = vector.integer("sublanes");
  hw.core.vector_unit.lanes = vector.integer("lanes");
  hw.core.vector_unit.alus_per_lane = vector.integer("alus_per_lane");

  const MappingReader hbm = top.child("hbm", {"capacity_bytes", "bandwidth_bytes_per_s"});
  hw.hbm.capacity_bytes = hbm.bytes("capacity_bytes");
  hw.hbm.bandwidth_bytes_per_s = hbm.number("bandwidth_bytes_per_s");

  const MappingReader net =
      top.child("interconnect",
                {"topology", "links", "link_bandwidth_bytes_per_s", "link_latency_s", "wraparound_axis", "dims",
                 "dcn_bandwidth_bytes_per_s", "dcn_latency_s"});
  hw.interconnect.topology = net.choice<Topology>("topology", parse_topology,
                                                  "none, ring, mesh_2d, torus_2d, mesh_3d or torus_3d");
  if (hw.interconnect.topology != Topology::kNone) {
    hw.interconnect.links = net.integer("links");
    hw.interconnect.link_bandwidth_bytes_per_s = net.number("link_bandwidth_bytes_per_s");
    hw.interconnect.link_latency_s = net.optional_number("link_latency_s", 0.0);
    if (net.has("wraparound_axis")) hw.interconnect.wraparound_axis = net.integer("wraparound_axis");
    hw.interconnect.dims = net.int_list("dims");
    hw.interconnect.dcn_bandwidth_bytes_per_s = net.optional_number("dcn_bandwidth_bytes_per_s", 0.0);
    hw.interconnect.dcn_latency_s = net.optional_number("dcn_latency_s", 0.0);
  }

  // Optional: without it the system reports no energy (docs/tpu-emulator.md, "Energy").
  if (top.has("energy")) {
    const MappingReader energy = top.child("energy", {"mac_pj", "sram_pj_per_byte", "hbm_pj_per_byte",
                                                      "link_pj_per_byte", "vector_pj_per_element_op", "idle_power_w",
                                                      "sources"});
    EnergyConfig& figures = hw.energy.emplace();
    figures.mac_pj = energy.number("mac_pj");
    figures.sram_pj_per_byte = energy.number("sram_pj_per_byte");
    figures.hbm_pj_per_byte = energy.number("hbm_pj_per_byte");
    if (energy.has("link_pj_per_byte")) figures.link_pj_per_byte = energy.number("link_pj_per_byte");
    if (energy.has("vector_pj_per_element_op")) {
      figures.vector_pj_per_element_op = energy.number("vector_pj_per_element_op");
    }
    if (energy.has("idle_power_w")) figures.idle_power_w = energy.number("idle_power_w");
    if (energy.has("sources")) figures.sources = energy.string_list("sources");
  }

  check_hardware(hw, [&](const std::string& key) {
    // Walk the dotted key to the node that holds it, for its line and column.
    YAML::Node node = root;
    YAML::Node last = root;
    std::stringstream stream(key);
    for (std::string part; std::getline(stream, part, '.');) {
      if (!node.IsMap() || !node[part].IsDefined()) break;
      node.reset(node[part]);
      last.reset(node);
    }
    return context.locate(key, last);
  });
  return hw;
}

}  // namespace

Hardware load_hardware_file(const std::filesystem::path& path, const std::vector<FieldOverride>& overrides) {
  std::error_code error;
  // Not a FIFO, device or folder: those would hang or read nothing.
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ConfigError(path.string(), 0, 0, "", "not a readable file", "a YAML hardware description file");
  }
  const auto size = std::filesystem::file_size(path, error);
  if (error || size > kMaxHardwareFileBytes) {
    throw ConfigError(path.string(), 0, 0, "", error ? "cannot read its size" : fmt::format("{} bytes is too large", size),
                      fmt::format("a hardware description of at most {} bytes", kMaxHardwareFileBytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  const bool read = in && (size == 0 || (text << in.rdbuf()));
  if (!read) {
    throw ConfigError(path.string(), 0, 0, "", "cannot read the hardware description", "a readable YAML file");
  }
  return load_hardware_text(text.str(), path.string(), overrides);
}

void validate_hardware(const Hardware& hw) {
  check_hardware(hw, [&](const std::string&) { return Location{hw.source, 0, 0}; });
}

}  // namespace accel::tpu
