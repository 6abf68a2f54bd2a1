// `accel tpu estimate ...`: times one GEMM, convolution, vector op or
// all-reduce on a TPU preset with the emulator's timing model, computing no
// tensor values, and prints a table or one JSON object.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace accel::cli {

struct TpuEstimateRequest {
  std::string preset = "tpu_v4";        // --preset NAME|FILE
  std::vector<std::string> overrides;   // --set key=value (repeatable)
  std::optional<std::string> array;     // --array RxC (one MXU of that size)
  std::optional<std::string> dataflow;  // --dataflow ws|os|is
  bool ideal_memory = false;            // --ideal-memory
  bool scalesim = false;                // --scalesim (SCALE-Sim conventions, ideal memory)
  bool json = false;                    // --json
  std::string op;                       // gemm | conv2d | vector | allreduce | collective
  std::vector<std::int64_t> dims;       // gemm: M N K; conv2d: N H W C K R S; vector: ELEMENTS; allreduce, collective: BYTES
  std::int64_t stride = 1;              // conv2d --stride
  std::string padding = "valid";        // conv2d --padding valid|same
  std::string vector_kind = "elementwise";  // vector KIND
  std::string collective = "all_gather";    // collective KIND
  int axis = 0;                             // collective --axis
  bool megacore = false;                    // allreduce / collective --megacore: a chip's cores as one device
};

// Registers `tpu estimate {gemm,conv2d,vector,allreduce,collective}` on the accel app.
// Errors print to stderr and end with exit code 2 (CLI::RuntimeError).
void add_tpu_command(CLI::App& app);

// Runs one request; returns the exit code (0, or 2 with the message on `err`).
int run_tpu_estimate(const TpuEstimateRequest& request, std::ostream& out, std::ostream& err);

}  // namespace accel::cli
