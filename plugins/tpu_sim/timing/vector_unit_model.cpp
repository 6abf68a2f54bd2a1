#include "timing/vector_unit_model.hpp"

#include <array>
#include <bit>
#include <stdexcept>
#include <utility>

#include "timing/checked_count.hpp"

namespace accel::tpu {
namespace {

struct KindEntry {
  std::string_view name;
  VectorOpKind kind;
  VectorOpProfile profile;
};

// Instruction counts are modelling assumptions (docs/tpu-emulator.md):
// a transcendental is a short polynomial (4 instructions); softmax is
// max + subtract + exp(4) + sum + multiply = 8; Adam is about 12.
constexpr std::array<KindEntry, 7> kKinds{{
    {"elementwise", VectorOpKind::kElementwise, {1, 2, 1}},
    {"transcendental", VectorOpKind::kTranscendental, {4, 1, 1}},
    {"reduction", VectorOpKind::kReduction, {1, 1, 0}},
    {"softmax", VectorOpKind::kSoftmax, {8, 1, 1}},
    {"sgd", VectorOpKind::kSgdUpdate, {2, 2, 1}},
    {"momentum", VectorOpKind::kMomentumUpdate, {4, 3, 2}},
    {"adam", VectorOpKind::kAdamUpdate, {12, 4, 3}},
}};

}  // namespace

std::string_view to_string(VectorOpKind kind) {
  for (const auto& entry : kKinds) {
    if (entry.kind == kind) return entry.name;
  }
  return "?";
}

bool parse_vector_op_kind(std::string_view text, VectorOpKind& out) {
  for (const auto& entry : kKinds) {
    if (entry.name == text) {
      out = entry.kind;
      return true;
    }
  }
  return false;
}

VectorOpProfile vector_op_profile(VectorOpKind kind) {
  for (const auto& entry : kKinds) {
    if (entry.kind == kind) return entry.profile;
  }
  return {};
}

VectorUnitCycles vector_unit_cycles(const VectorUnitConfig& unit, VectorOpKind kind, std::int64_t elements) {
  if (elements <= 0) throw std::invalid_argument("a vector op needs at least one element");
  VectorUnitCycles out = vector_program_cycles(unit, vector_op_profile(kind).instructions_per_element, elements);
  if (kind == VectorOpKind::kReduction || kind == VectorOpKind::kSoftmax) out.cycles += reduction_tree_cycles(unit);
  return out;
}

VectorUnitCycles vector_program_cycles(const VectorUnitConfig& unit, std::int64_t instructions_per_element,
                                       std::int64_t elements) {
  VectorUnitCycles out;
  if (elements <= 0) return out;
  const std::int64_t width = static_cast<std::int64_t>(unit.sublanes) * unit.lanes;
  out.vector_registers = ceil_div(elements, width);
  const std::int64_t instructions = checked_mul(out.vector_registers, instructions_per_element, "the vector instructions");
  out.cycles = ceil_div(instructions, unit.alus_per_lane);
  return out;
}

std::int64_t reduction_tree_cycles(const VectorUnitConfig& unit) {
  const std::int64_t width = static_cast<std::int64_t>(unit.sublanes) * unit.lanes;
  return std::bit_width(static_cast<std::uint64_t>(width)) - 1;
}

}  // namespace accel::tpu
