// Op-level profiling across devices: every executed op with the time its
// device reported (wall, device events or simulated cycles), exported as one
// Chrome trace-event JSON that opens in Perfetto.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace accel::profiler {

enum class TimeSource { kWall, kDevice, kSimulated };

struct OpRecord {
  uint64_t sequence = 0;
  std::string op;        // op_name(): "MatMul", "ReluGrad (RELU_BACKWARD)"; or named work, "AllReduce"
  std::string category;  // "matmul", "convolution", "elementwise", ...
  std::string device;    // full device name
  TimeSource time_source = TimeSource::kWall;
  double start_seconds = 0;     // on the device's timeline
  double duration_seconds = 0;
  uint64_t cycles = 0;
  double clock_hz = 0;
  double flops = 0;
  double bytes_accessed = 0;
  double utilization = 0;
  std::string bound;        // "compute", "memory" or ""
  std::string detail_json;  // extra figures from the plugin, or ""
};

// How records, logs and reports name a primitive op (an AccelOp value): its
// TensorFlow name, then its op-set name in parentheses where the two differ in
// more than case and underscores: "ReluGrad (RELU_BACKWARD)", "AddV2 (ADD)",
// "MatMul", "MaxPool". docs/op-set.md lists every op's.
std::string op_name(int32_t op);

// Starts recording (clearing earlier records); ops run before start() are not kept.
void start();
void stop();
bool is_recording();
std::vector<OpRecord> records();
// Adds a record the runtime made itself (a collective it timed or simulated,
// "AllReduce" on each replica's device); ignored while not recording.
void record(OpRecord op);
// Seconds since start(): the timeline of TimeSource::kWall records.
double elapsed_seconds();
// Writes the records as Chrome trace-event JSON (one process per device).
void write_chrome_trace(const std::string& path);

}  // namespace accel::profiler
