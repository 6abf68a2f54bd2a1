// `accel tpu estimate --model FILE.yaml [--batch N] [--training|--inference]
// [--run NAME] [--values none|compute] [--sweep KEY=V1,V2,...] [--json]`:
// one compiled step of an experiment's model (or of a file holding only
// `name:` and `model:`, trained by SGD on a mean squared error) timed on the
// emulated TPU from shapes alone (experiment::estimate_tpu_step with
// tpu_sim.values=none): step time, its breakdown by op and fusion, MXU
// utilization, HBM traffic and the roofline point. A sweep re-runs the
// estimate in a child process per value of a preset field.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace accel::cli {

struct TpuModelEstimateRequest {
  std::string file;
  std::string preset = "tpu_v4";
  std::vector<std::string> overrides;  // --set key=value
  std::string run;                     // --run NAME: a run of the file (default the first)
  int64_t batch = 0;                   // --batch N (0: the file's data.batch, or 32)
  bool inference = false;              // --inference (default --training)
  std::string values = "none";         // --values: none (timing only) or compute
  std::string sweep;                   // --sweep key=v1,v2,...
  bool json = false;
};

// Returns the exit code: 0, or 2 with the message on `err`.
int run_tpu_model_estimate(const TpuModelEstimateRequest& request, std::ostream& out, std::ostream& err);

}  // namespace accel::cli
