// Fidelity tables (configs/tpu/fidelity/<name>.yaml): published throughput
// of real workloads on a real TPU, with their sources, and the shapes the
// emulator builds for each workload from what the paper publishes (layer
// count, total weights, batch). Tests read the expected figures from here,
// never from constants of their own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "timing/op_timing.hpp"

namespace accel::tpu {

struct FidelityWorkload {
  std::string name;            // "MLP0"
  std::string kind;            // "dense" or "conv2d"
  std::int64_t layers = 0;
  std::int64_t weights = 0;    // all layers together
  std::int64_t batch = 0;
  std::int64_t spatial = 0;    // conv2d: output height = width
  std::int64_t kernel = 1;     // conv2d: kernel height = width
  double published_tops = 0;   // measured on the real chip
  double tolerance = 0;        // allowed |emulated / published - 1|
};

struct FidelityTable {
  std::string path;
  std::string source;          // the citation
  std::string preset;          // the hardware preset the figures are for
  std::vector<FidelityWorkload> workloads;
  const FidelityWorkload& workload(const std::string& name) const;  // throws std::out_of_range
};

// `name` ("j17_tpu_v1") in the fidelity/ folder of the preset search
// directories. Throws ConfigError naming the file and key on a bad table.
std::filesystem::path find_fidelity_table(const std::string& name);
FidelityTable load_fidelity_table(const std::filesystem::path& path);

// Width of each of the workload's equal layers: round(sqrt(weights per
// layer / kernel^2)) (dense layers are width x width, convolutions
// kernel x kernel x width x width).
std::int64_t layer_width(const FidelityWorkload& workload);

// The workload's layers as `model` times each alone (MXU input type of the
// preset, a ReLU epilogue on each), in program order: the chain
// time_program takes.
std::vector<OpTiming> workload_chain(const TimingModel& model, const FidelityWorkload& workload);

}  // namespace accel::tpu
