// Collectives in the profile (private to accel_distribute): an "AllReduce"
// record, category "collective", on the track of every device that took part,
// so the trace and the experiment report show the time spent combining
// values beside the ops. The runtime times the collectives it runs on the
// host (the ring, Gloo) with the profiler's wall clock; the TPU strategy
// records simulated time; NCCL's are timed on the GPU by the CUDA plugin.
#pragma once

#include <accel/device.hpp>
#include <accel/profiler.hpp>

#include <string>
#include <vector>

namespace accel::distribute::detail {

// Adds `record` once for each of `devices` (its `device` field set to each).
void record_collective(const profiler::OpRecord& record, const std::vector<Device>& devices);

// Wall time of one collective the host runs: made just before it, `finish`
// just after it succeeded. Costs nothing while the profiler is off.
class HostCollectiveTimer {
 public:
  HostCollectiveTimer();
  // Records "AllReduce" of `bytes` (one replica's buffer) on each device.
  void finish(const std::vector<Device>& devices, double bytes, std::string detail_json = {}) const;

 private:
  bool recording_;
  double start_seconds_ = 0.0;
};

}  // namespace accel::distribute::detail
