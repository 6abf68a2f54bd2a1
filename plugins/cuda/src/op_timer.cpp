// Per-op device timing with CUDA events (see op_timer.hpp).
#include "op_timer.hpp"

#include "cuda_check.hpp"

namespace accel::cuda {

OpTimer::~OpTimer() {
  for (auto& p : pending_) {
    (void)cudaEventDestroy(p.mark.begin);
    (void)cudaEventDestroy(p.mark.end);
  }
  for (cudaEvent_t event : spare_) (void)cudaEventDestroy(event);
  if (epoch_ != nullptr) (void)cudaEventDestroy(epoch_);
  (void)cudaGetLastError();
}

void OpTimer::start(cudaStream_t stream) {
  ACCEL_CUDA_CHECK(cudaEventCreate(&epoch_));
  ACCEL_CUDA_CHECK(cudaEventRecord(epoch_, stream));
}

cudaEvent_t OpTimer::take_event() {
  if (!spare_.empty()) {
    cudaEvent_t event = spare_.back();
    spare_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  ACCEL_CUDA_CHECK(cudaEventCreate(&event));
  return event;
}

OpTimer::Mark OpTimer::begin(cudaStream_t stream) {
  Mark mark;
  mark.begin = take_event();
  try {
    mark.end = take_event();
    ACCEL_CUDA_CHECK(cudaEventRecord(mark.begin, stream));
  } catch (...) {
    discard(mark);
    throw;
  }
  return mark;
}

void OpTimer::discard(Mark mark) {
  if (mark.begin != nullptr) spare_.push_back(mark.begin);
  if (mark.end != nullptr) spare_.push_back(mark.end);
}

void OpTimer::end(cudaStream_t stream, Mark mark, uint64_t sequence, AccelOp op, OpCost cost) {
  queue(stream, Pending{mark, sequence, op, cost});
}

void OpTimer::end_named(cudaStream_t stream, Mark mark, const char* name, const char* category, OpCost cost) {
  queue(stream, Pending{mark, 0, ACCEL_OP_COUNT, cost, name, category});
}

void OpTimer::queue(cudaStream_t stream, Pending pending) {
  cudaError_t error = cudaEventRecord(pending.mark.end, stream);
  if (error != cudaSuccess) {
    discard(pending.mark);
    check_cuda(error, "cudaEventRecord");
  }
  pending_.push_back(pending);
}

void OpTimer::collect(bool wait, std::vector<AccelOpProfile>& out) {
  while (!pending_.empty()) {
    Pending& p = pending_.front();
    cudaError_t state = wait ? cudaEventSynchronize(p.mark.end) : cudaEventQuery(p.mark.end);
    if (state == cudaErrorNotReady) {
      (void)cudaGetLastError();  // "not ready" is no error; keep it out of later checks
      break;
    }
    if (state != cudaSuccess) {
      // A failed stream: drop the record, keep the error for the caller's next check.
      discard(p.mark);
      pending_.pop_front();
      continue;
    }
    float start_ms = 0.0f, duration_ms = 0.0f;
    if (cudaEventElapsedTime(&start_ms, epoch_, p.mark.begin) != cudaSuccess) start_ms = 0.0f;
    if (cudaEventElapsedTime(&duration_ms, p.mark.begin, p.mark.end) != cudaSuccess) {
      duration_ms = 0.0f;
    }
    (void)cudaGetLastError();
    AccelOpProfile profile{};
    profile.struct_size = sizeof(AccelOpProfile);
    profile.sequence = p.sequence;
    profile.op = p.op;
    profile.time_source = ACCEL_TIME_DEVICE;
    profile.start_seconds = static_cast<double>(start_ms) * 1e-3;
    profile.duration_seconds = static_cast<double>(duration_ms) * 1e-3;
    profile.flops = p.cost.flops;
    profile.bytes_accessed = p.cost.bytes;
    profile.bound = ACCEL_BOUND_UNKNOWN;
    profile.detail_json = nullptr;
    profile.name = p.name;
    profile.category = p.category;
    out.push_back(profile);
    discard(p.mark);
    pending_.pop_front();
  }
}

}  // namespace accel::cuda
