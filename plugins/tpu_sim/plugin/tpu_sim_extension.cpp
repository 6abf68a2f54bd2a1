// The "accel.tpu_sim.v1" extension table (accel/plugin/tpu_sim_extension.h):
// per-core totals of the simulated timelines, their reset, the all-reduce
// estimate over the system's interconnect, running such an all-reduce on the
// cores' timelines (with its energy, shared among them), and the system as
// JSON.
#include <accel/plugin/plugin_sdk.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <numeric>
#include <optional>

#include "energy_totals.hpp"
#include "timing/checked_count.hpp"
#include "timing/energy_model.hpp"
#include "timing/interconnect_model.hpp"
#include "tpu_sim_plugin.hpp"

namespace accel::tpu_sim {
namespace {

// The first version of AccelTpuSimDeviceTotals ended before collective_cycles.
constexpr size_t kFirstTotalsSize = offsetof(AccelTpuSimDeviceTotals, collective_cycles);

AccelStatus* device_totals(AccelPluginContext* context, int32_t physical_index,
                           AccelTpuSimDeviceTotals* totals) noexcept {
  if (context == nullptr) return nullptr;
  return sdk::guard(context->host, [&] {
    sdk::require_argument(totals != nullptr && totals->struct_size >= kFirstTotalsSize, "null or too small AccelTpuSimDeviceTotals");
    TensorCore& core = core_at(*context, physical_index);
    AccelTpuSimDeviceTotals current{};
    {
      std::lock_guard lock(core.timeline_mutex);
      current = core.timeline.totals;
    }
    const double peak_macs = static_cast<double>(tpu::peak_macs_per_cycle_per_core(context->hardware));
    current.mxu_utilization =
        current.cycles > 0 ? static_cast<double>(current.useful_macs) / (peak_macs * static_cast<double>(current.cycles)) : 0.0;
    current.energy_known = context->hardware.energy ? 1 : 0;
    // Only the fields the caller's struct has (an older host's is shorter).
    const size_t caller_size = std::min(totals->struct_size, sizeof(AccelTpuSimDeviceTotals));
    current.struct_size = caller_size;
    std::memcpy(totals, &current, caller_size);
  });
}

AccelStatus* reset_totals(AccelPluginContext* context, int32_t physical_index) noexcept {
  if (context == nullptr) return nullptr;
  return sdk::guard(context->host, [&] {
    auto reset = [&](TensorCore& core) {
      std::lock_guard lock(core.timeline_mutex);
      const double clock_hz = core.timeline.totals.clock_hz;
      core.timeline = CoreTimeline{};
      core.timeline.totals.struct_size = sizeof(AccelTpuSimDeviceTotals);
      core.timeline.totals.clock_hz = clock_hz;
    };
    if (physical_index == -1) {
      for (auto& core : context->cores) reset(*core);
    } else {
      reset(core_at(*context, physical_index));
    }
  });
}

// The part of the system `chips` chips make: the preset's slice when they
// are all of it, else the chips along the first dimension of its topology.
tpu::Hardware slice_of(const tpu::Hardware& system, int chips) {
  tpu::Hardware slice = system;
  if (chips == system.chips) return slice;
  slice.chips = chips;
  std::fill(slice.interconnect.dims.begin(), slice.interconnect.dims.end(), 1);
  if (!slice.interconnect.dims.empty()) slice.interconnect.dims.front() = chips;
  return slice;
}

// The all-reduce estimate over `cores` TensorCores (whole chips first), and
// its energy over every chip taking part when `energy` is given.
AccelTpuSimAllReduce estimate_for(const AccelPluginContext& context, double bytes, int32_t cores,
                                  std::optional<tpu::Energy>* energy = nullptr) {
  sdk::require_argument(bytes >= 0, "all-reduce size must be >= 0 bytes");
  const tpu::Hardware& hw = context.hardware;
  const int total_cores = static_cast<int>(context.cores.size());
  if (cores < 1 || cores > total_cores) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT,
                           "all-reduce over " + std::to_string(cores) + " cores: the emulated system has 1 to " +
                               std::to_string(total_cores));
  }
  AccelTpuSimAllReduce estimate{};
  estimate.struct_size = sizeof(AccelTpuSimAllReduce);
  estimate.chips = 1;
  if (cores == 1) return estimate;  // nothing to combine
  const int chips = (cores + hw.cores_per_chip - 1) / hw.cores_per_chip;
  tpu::Hardware slice = slice_of(hw, chips);
  slice.cores_per_chip = std::min(cores, hw.cores_per_chip);
  const tpu::AllReduceEstimate result = tpu::estimate_all_reduce(slice, bytes);
  if (energy != nullptr) *energy = tpu::all_reduce_energy(slice, result);
  estimate.seconds = result.seconds;
  estimate.link_seconds = result.link_seconds;
  estimate.latency_seconds = result.latency_seconds;
  estimate.on_chip_seconds = result.on_chip_seconds;
  estimate.chips = result.chips;
  estimate.steps = result.steps;
  return estimate;
}

AccelStatus* all_reduce(AccelPluginContext* context, double bytes, int32_t cores,
                        AccelTpuSimAllReduce* estimate) noexcept {
  if (context == nullptr) return nullptr;
  return sdk::guard(context->host, [&] {
    sdk::require_argument(estimate != nullptr && estimate->struct_size >= sizeof(AccelTpuSimAllReduce),
            "null or too small AccelTpuSimAllReduce");
    *estimate = estimate_for(*context, bytes, cores);
  });
}

AccelStatus* run_all_reduce(AccelPluginContext* context, double bytes, const int32_t* core_indices, int32_t count,
                            AccelTpuSimAllReduce* estimate, double* start_seconds) noexcept {
  if (context == nullptr) return nullptr;
  return sdk::guard(context->host, [&] {
    sdk::require_argument(core_indices != nullptr && count >= 1, "run_all_reduce needs at least one core");
    sdk::require_argument(estimate != nullptr && estimate->struct_size >= sizeof(AccelTpuSimAllReduce) && start_seconds != nullptr,
            "null or too small AccelTpuSimAllReduce, or null start_seconds");
    std::vector<int32_t> indices(core_indices, core_indices + count);
    std::sort(indices.begin(), indices.end());
    sdk::require_argument(std::adjacent_find(indices.begin(), indices.end()) == indices.end(), "run_all_reduce: a core is listed twice");
    std::vector<TensorCore*> cores;
    for (int32_t index : indices) cores.push_back(&core_at(*context, index));
    std::optional<tpu::Energy> energy;
    *estimate = estimate_for(*context, bytes, count, &energy);
    // Each core carries an equal share, so the cores' totals add up to the collective's energy.
    if (energy) *energy = energy->scaled(1.0 / static_cast<double>(count));
    const double clock_hz = context->hardware.clock_hz;
    const std::int64_t cycles = tpu::checked_round_count(estimate->seconds * clock_hz, "the all-reduce's cycles");
    // Every timeline at once (locked in index order), so the collective is one point in simulated time.
    std::vector<std::unique_lock<std::mutex>> locks;
    for (TensorCore* core : cores) locks.emplace_back(core->timeline_mutex);
    std::int64_t start = 0;
    for (const TensorCore* core : cores) start = std::max(start, core->timeline.end_cycle);
    for (TensorCore* core : cores) {
      CoreTimeline& timeline = core->timeline;
      AccelTpuSimDeviceTotals& totals = timeline.totals;
      totals.idle_cycles += start - timeline.end_cycle;
      totals.collective_cycles = tpu::saturating_add(totals.collective_cycles, cycles);
      timeline.end_cycle = tpu::saturating_add(start, cycles);
      totals.cycles = timeline.end_cycle;
      totals.seconds = static_cast<double>(totals.cycles) / totals.clock_hz;
      if (energy) add_energy(totals, *energy);
    }
    *start_seconds = static_cast<double>(start) / clock_hz;
  });
}

// A collective's estimate as the extension reports it (link energy apart).
AccelTpuSimCollective collective_of(const tpu::AllReduceEstimate& result) {
  AccelTpuSimCollective out{};
  out.struct_size = sizeof(AccelTpuSimCollective);
  out.seconds = result.seconds;
  out.link_seconds = result.link_seconds;
  out.latency_seconds = result.latency_seconds;
  out.link_bytes_per_chip = result.link_bytes_per_chip;
  out.chips = result.chips;
  out.steps = result.steps;
  out.chip_seconds = result.on_chip_seconds;
  return out;
}

// A caller's AccelTpuSimCollective may predate the appended chip_seconds.
void write_collective(AccelTpuSimCollective* estimate, const AccelTpuSimCollective& out) {
  const size_t room = estimate->struct_size;
  std::memcpy(estimate, &out, std::min(room, sizeof(AccelTpuSimCollective)));
  estimate->struct_size = room;
}

AccelStatus* estimate_collective(AccelPluginContext* context, int32_t kind, double bytes, const int64_t* sizes,
                                 const int64_t* strides, int32_t span_count, AccelTpuSimCollective* estimate) noexcept {
  if (context == nullptr) return nullptr;
  return sdk::guard(context->host, [&] {
    sdk::require_argument(estimate != nullptr && estimate->struct_size >= offsetof(AccelTpuSimCollective, chip_seconds),
                          "null or too small AccelTpuSimCollective");
    sdk::require_argument(span_count >= 0 && (span_count == 0 || (sizes != nullptr && strides != nullptr)),
                          "estimate_collective: null spans");
    sdk::require_argument(std::isfinite(bytes) && bytes >= 0, "estimate_collective: bytes must be finite and >= 0");
    static constexpr tpu::Collective kKinds[] = {tpu::Collective::kAllReduce, tpu::Collective::kAllGather,
                                                 tpu::Collective::kReduceScatter, tpu::Collective::kAllToAll};
    sdk::require_argument(kind >= 0 && kind < 4, "estimate_collective: kind must be one of ACCEL_TPU_SIM_ALL_REDUCE .. ALL_TO_ALL");
    const tpu::Hardware& hw = context->hardware;
    sdk::require_argument(hw.cores_per_chip == 1 || static_cast<int>(context->cores.size()) == hw.chips,
                          "estimate_collective: spans count chips, and this system's devices are TensorCores, several "
                          "per chip (tpu_sim.megacore=on makes each chip one device)");
    std::vector<tpu::ChipSpan> spans;
    for (int32_t span = 0; span < span_count; ++span) spans.push_back({sizes[span], strides[span]});
    tpu::AllReduceEstimate result;
    try {
      result = tpu::estimate_span_collective(hw, kKinds[kind], bytes, spans);
    } catch (const std::invalid_argument& error) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, std::string("estimate_collective: ") + error.what());
    }
    AccelTpuSimCollective out = collective_of(result);
    if (hw.energy && hw.energy->link_pj_per_byte) {
      out.link_energy_known = 1;
      out.link_energy_j = result.chips * result.link_bytes_per_chip * *hw.energy->link_pj_per_byte * 1e-12;
    }
    write_collective(estimate, out);
  });
}

AccelStatus* estimate_dcn_all_reduce(AccelPluginContext* context, double bytes, int32_t slices,
                                     AccelTpuSimCollective* estimate) noexcept {
  if (context == nullptr) return nullptr;
  return sdk::guard(context->host, [&] {
    sdk::require_argument(estimate != nullptr && estimate->struct_size >= offsetof(AccelTpuSimCollective, chip_seconds),
                          "null or too small AccelTpuSimCollective");
    sdk::require_argument(std::isfinite(bytes) && bytes >= 0, "estimate_dcn_all_reduce: bytes must be finite and >= 0");
    sdk::require_argument(slices >= 1, "estimate_dcn_all_reduce: slices must be >= 1");
    tpu::AllReduceEstimate result;
    try {
      result = tpu::estimate_dcn_all_reduce(context->hardware, bytes, slices);
    } catch (const std::invalid_argument& error) {
      throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, std::string("estimate_dcn_all_reduce: ") + error.what());
    }
    write_collective(estimate, collective_of(result));
  });
}

const char* system_json(AccelPluginContext* context) noexcept {
  return context == nullptr ? nullptr : context->system_json.c_str();
}

constexpr AccelTpuSimExtension kExtension = {
    sizeof(AccelTpuSimExtension), device_totals, reset_totals, all_reduce, system_json, run_all_reduce,
    estimate_collective, estimate_dcn_all_reduce,
};

}  // namespace

const AccelTpuSimExtension* extension_table() { return &kExtension; }

}  // namespace accel::tpu_sim
