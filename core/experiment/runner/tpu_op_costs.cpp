// The step's op records summed by kernel: a fusion named by what it fuses,
// an MXU op with its epilogue.
#include "tpu_op_costs.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace accel::experiment {
namespace {

// A fused kernel named by what it fuses, from the emulator's details.
std::string kernel_name(const profiler::OpRecord& record, const nlohmann::json& details) {
  auto joined = [](const nlohmann::json& names, const char* separator) {
    std::string text;
    for (const nlohmann::json& name : names) {
      if (name.is_string()) text += (text.empty() ? "" : separator) + name.get<std::string>();
    }
    return text;
  };
  if (details.contains("fusion")) {
    const nlohmann::json& fusion = details["fusion"];
    std::string name = joined(fusion.value("ops", nlohmann::json::array()), "+");
    const std::string reductions = joined(fusion.value("reductions", nlohmann::json::array()), "+");
    if (!reductions.empty()) name += (name.empty() ? "" : "+") + reductions;
    return "Fusion(" + name + ")";
  }
  if (details.contains("epilogue")) {
    return record.op + "+" + joined(details["epilogue"].value("steps", nlohmann::json::array()), "+");
  }
  return record.op;
}

}  // namespace

std::vector<TpuOpCost> costs_by_op(const std::vector<profiler::OpRecord>& records) {
  std::map<std::string, TpuOpCost> by_name;
  std::map<std::string, double> compute_bound_seconds;
  for (const profiler::OpRecord& record : records) {
    if (record.cycles == 0 && record.duration_seconds == 0) continue;
    const nlohmann::json details = nlohmann::json::parse(record.detail_json, nullptr, false);
    const std::string name = details.is_object() ? kernel_name(record, details) : record.op;
    TpuOpCost& cost = by_name[name];
    cost.op = name;
    if (details.is_object()) {
      cost.compute_cycles += details.value("compute_cycles", int64_t{0});
      cost.stall_cycles += details.value("stall_cycles", int64_t{0});
      cost.on_mxu = details.value("folds", int64_t{0}) > 0;
    }
    cost.count += 1;
    cost.seconds += record.duration_seconds;
    cost.cycles += static_cast<int64_t>(record.cycles);
    cost.flops += record.flops;
    cost.hbm_bytes += record.bytes_accessed;
    if (record.bound == "compute") compute_bound_seconds[name] += record.duration_seconds;
  }
  std::vector<TpuOpCost> costs;
  for (auto& [name, cost] : by_name) {
    cost.compute_bound_share = cost.seconds > 0 ? compute_bound_seconds[name] / cost.seconds : 0;
    costs.push_back(cost);
  }
  std::stable_sort(costs.begin(), costs.end(), [](const TpuOpCost& a, const TpuOpCost& b) { return a.seconds > b.seconds; });
  return costs;
}

}  // namespace accel::experiment
