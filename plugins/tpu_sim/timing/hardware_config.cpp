#include "timing/hardware_config.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>
#include <utility>

namespace accel::tpu {
namespace {

template <typename Enum, std::size_t N>
bool parse_from(const std::array<std::pair<std::string_view, Enum>, N>& table, std::string_view text,
                Enum& out) {
  for (const auto& [name, value] : table) {
    if (name == text) {
      out = value;
      return true;
    }
  }
  return false;
}

constexpr std::array<std::pair<std::string_view, Dataflow>, 6> kDataflowNames{{
    {"ws", Dataflow::kWeightStationary},
    {"os", Dataflow::kOutputStationary},
    {"is", Dataflow::kInputStationary},
    {"weight_stationary", Dataflow::kWeightStationary},
    {"output_stationary", Dataflow::kOutputStationary},
    {"input_stationary", Dataflow::kInputStationary},
}};

constexpr std::array<std::pair<std::string_view, NumberType>, 5> kNumberTypeNames{{
    {"int8", NumberType::kInt8},
    {"int32", NumberType::kInt32},
    {"bf16", NumberType::kBf16},
    {"fp16", NumberType::kFp16},
    {"fp32", NumberType::kFp32},
}};

constexpr std::array<std::pair<std::string_view, Topology>, 6> kTopologyNames{{
    {"none", Topology::kNone},
    {"ring", Topology::kRing},
    {"mesh_2d", Topology::kMesh2D},
    {"torus_2d", Topology::kTorus2D},
    {"mesh_3d", Topology::kMesh3D},
    {"torus_3d", Topology::kTorus3D},
}};

}  // namespace

std::string_view to_string(Dataflow dataflow) {
  switch (dataflow) {
    case Dataflow::kWeightStationary: return "ws";
    case Dataflow::kOutputStationary: return "os";
    case Dataflow::kInputStationary: return "is";
  }
  return "?";
}

std::string_view to_string(NumberType type) {
  for (const auto& [name, value] : kNumberTypeNames) {
    if (value == type) return name;
  }
  return "?";
}

std::string_view to_string(Topology topology) {
  for (const auto& [name, value] : kTopologyNames) {
    if (value == topology) return name;
  }
  return "?";
}

bool parse_dataflow(std::string_view text, Dataflow& out) { return parse_from(kDataflowNames, text, out); }
bool parse_number_type(std::string_view text, NumberType& out) {
  return parse_from(kNumberTypeNames, text, out);
}
bool parse_topology(std::string_view text, Topology& out) { return parse_from(kTopologyNames, text, out); }

int bytes_per_element(NumberType type) {
  switch (type) {
    case NumberType::kInt8: return 1;
    case NumberType::kBf16:
    case NumberType::kFp16: return 2;
    case NumberType::kInt32:
    case NumberType::kFp32: return 4;
  }
  return 4;
}

std::int64_t peak_macs_per_cycle_per_core(const Hardware& hw) {
  return static_cast<std::int64_t>(hw.core.mxus) * hw.core.mxu.rows * hw.core.mxu.columns;
}

double peak_ops_per_s_per_chip(const Hardware& hw) {
  return 2.0 * static_cast<double>(peak_macs_per_cycle_per_core(hw)) * hw.cores_per_chip * hw.clock_hz;
}

double ridge_point_macs_per_byte(const Hardware& hw) {
  return peak_ops_per_s_per_chip(hw) / 2.0 / hw.hbm.bandwidth_bytes_per_s;
}

Hardware megacore_view(const Hardware& hw) {
  if (!hw.megacore || hw.cores_per_chip < 2) return hw;
  Hardware chip = hw;
  const int cores = hw.cores_per_chip;
  chip.cores_per_chip = 1;
  chip.core.mxus *= cores;
  chip.core.vmem_bytes *= cores;
  chip.core.accumulator_bytes *= cores;
  chip.core.vector_unit.alus_per_lane *= cores;
  chip.source += " (megacore)";
  return chip;
}

std::vector<int> slice_dims(const Hardware& hw, int chips) {
  std::vector<int> dims = hw.interconnect.dims;
  if (std::accumulate(dims.begin(), dims.end(), 1, std::multiplies<>()) == chips || dims.empty()) return dims;
  std::vector<int> best;
  // Each axis at least the one before; the last takes what is left. Keeps
  // the candidate whose largest axis, then next largest, ... is smallest.
  auto search = [&](auto&& self, std::vector<int>& axes, int left) -> void {
    if (axes.size() + 1 == dims.size()) {
      if (!axes.empty() && left < axes.back()) return;
      std::vector<int> candidate = axes;
      candidate.push_back(left);
      if (best.empty() || std::lexicographical_compare(candidate.rbegin(), candidate.rend(), best.rbegin(), best.rend())) {
        best = candidate;
      }
      return;
    }
    for (int size = axes.empty() ? 1 : axes.back(); size <= left; ++size) {
      if (left % size != 0) continue;
      axes.push_back(size);
      self(self, axes, left / size);
      axes.pop_back();
    }
  };
  std::vector<int> axes;
  search(search, axes, chips);
  return best;
}

int device_count(const Hardware& hw) { return hw.chips * hw.cores_per_chip; }

std::vector<std::string> device_names(const Hardware& hw) {
  std::vector<std::string> names;
  for (int i = 0; i < device_count(hw); ++i) names.push_back("TPU:" + std::to_string(i));
  return names;
}

}  // namespace accel::tpu
