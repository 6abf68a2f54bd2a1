// initialize_tpu_system: points the TPU emulator at the resolver's slice
// (settings tpu_sim.preset and tpu_sim.chips, read when the plugin loads),
// checks that the emulator runs that system, and describes its topology.
#include <accel/distribute/tpu_strategy.hpp>

#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/runtime.hpp>
#include <accel/tpu_emulator.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace accel::distribute {
namespace {

// The preset the plugin should load: the YAML file a path resolver names, else the preset name.
std::string preset_setting(const TPUClusterResolver& resolver) {
  const std::string& tpu = resolver.tpu();
  return tpu.ends_with(".yaml") || tpu.ends_with(".yml") ? tpu : resolver.slice().preset;
}


TpuTopology topology_of(const nlohmann::json& system) {
  TpuTopology topology;
  topology.preset = system.at("preset").get<std::string>();
  topology.chips = system.at("chips").get<int>();
  topology.cores_per_chip = system.at("cores_per_chip").get<int>();
  topology.topology_name = system.at("topology").get<std::string>();
  std::vector<int> dims = system.at("dims").get<std::vector<int>>();
  if (dims.empty()) dims = {topology.chips};
  dims.resize(3, 1);
  topology.mesh_shape = {dims[0], dims[1], dims[2], topology.cores_per_chip};
  topology.num_tpus_per_task = topology.chips * topology.cores_per_chip;
  for (int core = 0; core < topology.num_tpus_per_task; ++core) {
    // Chip-major, first dimension fastest: the emulator's own numbering.
    int chip = core / topology.cores_per_chip;
    std::array<int, 4> coordinates{};
    for (int axis = 0; axis < 3; ++axis) {
      coordinates[static_cast<size_t>(axis)] = chip % dims[static_cast<size_t>(axis)];
      chip /= dims[static_cast<size_t>(axis)];
    }
    coordinates[3] = core % topology.cores_per_chip;
    topology.device_coordinates.push_back(coordinates);
  }
  return topology;
}

}  // namespace

TpuTopology initialize_tpu_system(const TPUClusterResolver& resolver) {
  const TpuSliceDescription& slice = resolver.slice();
  if (!resolver.tpu().empty() && resolver.tpu() != "local") config::set_setting("tpu_sim.preset", preset_setting(resolver));
  config::set_setting("tpu_sim.chips", std::to_string(slice.chips));
  const std::optional<TpuEmulator> emulator = TpuEmulator::find();
  if (!emulator) {
    throw NotFoundError(fmt::format("initialize_tpu_system('{}'): the TPU emulator plugin is not loaded{}",
                                    resolver.tpu(), TpuEmulator::why_not_found()));
  }
  const nlohmann::json system = nlohmann::json::parse(emulator->system_json());
  const TpuTopology topology = topology_of(system);
  // With tpu_sim.megacore=on each chip is one device: the slice's chips.
  const bool megacore = system.value("megacore", false);
  const int devices = megacore ? slice.chips : slice.cores;
  if (topology.preset != slice.preset || topology.chips != slice.chips || topology.num_tpus_per_task != devices) {
    throw FailedPreconditionError(fmt::format(
        "initialize_tpu_system('{}') asks for {} with {} chips ({} TensorCores), but the TPU emulator already runs "
        "{} with {} chips ({} TensorCores): initialize the TPU system before anything lists devices or creates "
        "tensors (or start the process with ACCEL_TPU_SIM_PRESET and ACCEL_TPU_SIM_CHIPS set)",
        resolver.tpu(), slice.preset, slice.chips, slice.cores, topology.preset, topology.chips,
        topology.num_tpus_per_task));
  }
  return topology;
}

}  // namespace accel::distribute
