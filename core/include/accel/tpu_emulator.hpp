// TpuEmulator: the TPU emulator plugin's extension ("accel.tpu_sim.v1",
// accel/plugin/tpu_sim_extension.h) in C++, for the parts of accel that read
// simulated time: the TPU strategy, the experiment runner, benchmarks. A
// failed call is a typed accel::Error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct AccelPluginContext;
struct AccelTpuSimExtension;

namespace accel {

// Energy in joules from the preset's energy figures (docs/tpu-emulator.md,
// "Energy"): the operations' dynamic energy and the chip's static (idle)
// power over the time. A part without a figure (links, vector unit, idle
// power) is flagged missing and left out of total_j.
struct TpuEnergy {
  double total_j = 0;
  double mac_j = 0;
  double sram_j = 0;
  double hbm_j = 0;
  double link_j = 0;
  double vector_j = 0;
  // The chip's idle power over the core's timeline (its share of the chip's
  // `energy.idle_power_w`): what the chip draws whatever it computes.
  double static_j = 0;
  bool link_missing = false;
  bool vector_missing = false;
  bool static_missing = false;  // the preset publishes no idle power: static_j is 0 and not in total_j
  TpuEnergy& operator+=(const TpuEnergy& other);
};

// One TensorCore's simulated timeline since the plugin started or since reset_totals.
struct TpuCoreTotals {
  int64_t ops = 0;
  int64_t cycles = 0;             // the end of its timeline
  double seconds = 0;             // cycles / clock
  double clock_hz = 0;
  int64_t hbm_bytes = 0;
  int64_t stall_cycles = 0;       // waiting on HBM
  double mxu_utilization = 0;
  int64_t collective_cycles = 0;  // in all-reduces over the interconnect
  int64_t idle_cycles = 0;        // waiting at collectives for slower cores
  std::optional<TpuEnergy> energy;  // nullopt: the preset has no energy figures (or an older plugin)
};

// An all-reduce run on the cores' timelines.
struct TpuAllReduceTiming {
  double start_seconds = 0;  // simulated: when the last core was ready
  double seconds = 0;        // total
  double link_seconds = 0;
  double latency_seconds = 0;
  double on_chip_seconds = 0;
  int chips = 1;
  int steps = 0;
};

// One collective among some of the system's chips, estimated without
// running it on any timeline.
struct TpuCollectiveTiming {
  double seconds = 0;
  double link_seconds = 0;
  double latency_seconds = 0;
  double link_bytes_per_chip = 0;
  std::optional<double> link_energy_j;  // nullopt: the preset has no energy per link byte
  int chips = 1;
  int steps = 0;
  // The chip's own work, not in `seconds`: summing what arrives in a
  // reduction through HBM (TPUs reduce on the TensorCore).
  double chip_seconds = 0;
};

// Chips taking part along one axis of a device mesh laid on the slice:
// `size` chips `stride` apart in its row-major chip order.
struct TpuChipSpan {
  int64_t size = 1;
  int64_t stride = 1;
};

class TpuEmulator {
 public:
  // The loaded tpu_sim plugin (loading plugins if the runtime has not yet),
  // or nullopt when there is none.
  static std::optional<TpuEmulator> find();
  // Why find() found none, to append to a message: "; <path> was skipped:
  // <reason>" for each skipped tpu_sim plugin, or that none was found.
  static std::string why_not_found();

  TpuCoreTotals totals(int core) const;
  // The energy of every core of the emulated system since the reset, summed;
  // nullopt when the preset has no energy figures.
  std::optional<TpuEnergy> system_energy() const;
  // Zeroes every core's totals and restarts the timelines at 0.
  void reset_totals() const;
  // The emulated system as JSON (preset, chips, cores_per_chip, dims, ...).
  std::string system_json() const;
  // Whether the emulator only times ops (tpu_sim.values=none): tensors hold
  // no values, so work on the host that only moves values can be skipped.
  bool timing_only() const;
  // An all-reduce of `bytes` over those cores (physical indices, TPU:i), as a
  // synchronous collective on their timelines.
  TpuAllReduceTiming run_all_reduce(double bytes, const std::vector<int32_t>& cores) const;
  // `kind` ("all_gather", "reduce_scatter", "all_reduce", "all_to_all") of
  // `bytes` (the whole array) among the chips of `spans`, on the slice's
  // torus (docs/tpu-emulator.md, "Pods"). Throws InvalidArgumentError for a
  // kind it does not know or spans that do not fit the slice.
  TpuCollectiveTiming estimate_collective(std::string_view kind, double bytes,
                                          const std::vector<TpuChipSpan>& spans) const;
  // An all-reduce of `bytes` per chip among the counterpart chips of
  // `slices` slices over the data-center network (multislice). Throws
  // InvalidArgumentError when the preset has no DCN figures.
  TpuCollectiveTiming estimate_dcn_all_reduce(double bytes, int slices) const;

 private:
  TpuEmulator(const AccelTpuSimExtension* table, AccelPluginContext* context) : table_(table), context_(context) {}
  const AccelTpuSimExtension* table_;
  AccelPluginContext* context_;
};

}  // namespace accel
