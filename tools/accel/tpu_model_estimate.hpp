// `accel tpu estimate --model FILE.yaml [--batch N] [--training|--inference]
// [--run NAME] [--slice v4-8] [--values none|compute] [--sweep KEY=V1,V2,...] [--json]`:
// one compiled step of an experiment's model (or of a file holding only
// `name:` and `model:`, trained by SGD on a mean squared error) timed on the
// emulated TPU from shapes alone (experiment::estimate_tpu_step with
// tpu_sim.values=none): step time, its breakdown by op and fusion, MXU
// utilization, HBM traffic and the roofline point. A sweep re-runs the
// estimate in a child process per value of a preset field. With --mesh, the
// model is sharded over the slice's chips instead (a pod estimate:
// experiment::estimate_tpu_pod_step).
#pragma once

#include "tpu_estimate_command.hpp"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace accel::cli {

struct TpuModelEstimateRequest {
  std::string file;
  std::string preset = "tpu_v4";
  bool preset_given = false;           // --preset on the command line (else the run's `tpu:` preset, else tpu_v4)
  std::vector<std::string> overrides;  // --set key=value
  std::string run;                     // --run NAME: a run of the file (default the first)
  int64_t batch = 0;                   // --batch N (0: the file's data.batch, or 32)
  bool inference = false;              // --inference (default --training)
  std::string values = "none";         // --values: none (timing only) or compute
  std::string sweep;                   // --sweep key=v1,v2,...
  std::string slice;                   // --slice v4-8: under a TPUStrategy on that emulated slice
  std::vector<std::string> file_overrides;  // --model-set key=value: applied to the file, as accel run --set
  bool json = false;
  bool megacore = false;               // --megacore: tpu_sim.megacore=on
  bool one_replica = false;            // --time-one-replica (the default above kLargestSliceRunWhole devices)
  std::string mesh;                    // --mesh fsdp=256: the model sharded over the slice (a pod estimate)
  std::string remat;                   // --remat none|full|minimal (default the run's training.remat)
  // --async-collectives all|none|KIND,... and --scan-layers on|off; empty:
  // the run's distribution section's, else the estimate's defaults.
  std::string async_collectives;
  std::string scan_layers;
  int slices = 1;                      // --slices N: N slices joined by the data-center network
};

// A --slice of more devices than this is timed as one replica plus the
// slice's all-reduce on its torus (every replica runs the same program)
// instead of one emulated device per replica.
inline constexpr int kLargestSliceRunWhole = 64;

// Adds --model and its options to `accel tpu estimate`, which then runs
// without an op; --preset, --set and --json come from the op request.
void add_model_estimate_options(CLI::App& estimate, const std::shared_ptr<TpuEstimateRequest>& op_request);

// Returns the exit code: 0, or 2 with the message on `err`.
int run_tpu_model_estimate(const TpuModelEstimateRequest& request, std::ostream& out, std::ostream& err);

}  // namespace accel::cli
