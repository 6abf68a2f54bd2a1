// Per-op device timing with CUDA events: an event pair is recorded on the
// stream around each op (and each NCCL collective); finished pairs become
// AccelOpProfile records (time_source ACCEL_TIME_DEVICE, start relative to
// the device's open) that the device reports through host->report_op outside
// its lock.
#pragma once

#include <accel/plugin/accel_plugin.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <deque>
#include <vector>

namespace accel::cuda {

struct OpCost {
  double flops = 0.0;
  double bytes = 0.0;
};

class OpTimer {
 public:
  OpTimer() = default;
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;
  ~OpTimer();

  void start(cudaStream_t stream);  // creates and records the epoch event

  struct Mark {
    cudaEvent_t begin = nullptr;
    cudaEvent_t end = nullptr;
  };
  Mark begin(cudaStream_t stream);  // records `begin`
  // Records `end` and queues the op; on failure of the op call `discard` instead.
  void end(cudaStream_t stream, Mark mark, uint64_t sequence, AccelOp op, OpCost cost);
  // As `end`, for work that is no primitive op: reported under `name` and
  // `category`, which must outlive the plugin (string literals).
  void end_named(cudaStream_t stream, Mark mark, const char* name, const char* category, OpCost cost);
  void discard(Mark mark);

  // Moves the profiles of finished ops into `out`; with `wait`, waits for all.
  void collect(bool wait, std::vector<AccelOpProfile>& out);
  size_t pending() const { return pending_.size(); }

 private:
  cudaEvent_t take_event();

  struct Pending {
    Mark mark;
    uint64_t sequence;
    AccelOp op;
    OpCost cost;
    const char* name = nullptr;  // set for named work, see end_named
    const char* category = nullptr;
  };
  void queue(cudaStream_t stream, Pending pending);
  cudaEvent_t epoch_ = nullptr;
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> spare_;
};

}  // namespace accel::cuda
