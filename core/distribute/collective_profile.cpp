// "AllReduce" records for the profile (see collective_profile.hpp).
#include "collective_profile.hpp"

#include <utility>

namespace accel::distribute::detail {

void record_collective(const profiler::OpRecord& record, const std::vector<Device>& devices) {
  if (!profiler::is_recording()) return;
  for (const Device& device : devices) {
    profiler::OpRecord copy = record;
    copy.device = device.name();
    profiler::record(std::move(copy));
  }
}

HostCollectiveTimer::HostCollectiveTimer() : recording_(profiler::is_recording()) {
  if (recording_) start_seconds_ = profiler::elapsed_seconds();
}

void HostCollectiveTimer::finish(const std::vector<Device>& devices, double bytes, std::string detail_json) const {
  if (!recording_ || !profiler::is_recording()) return;
  profiler::OpRecord record;
  record.op = "AllReduce";
  record.category = "collective";
  record.time_source = profiler::TimeSource::kWall;
  record.start_seconds = start_seconds_;
  record.duration_seconds = profiler::elapsed_seconds() - start_seconds_;
  record.bytes_accessed = bytes;
  record.detail_json = std::move(detail_json);
  record_collective(record, devices);
}

}  // namespace accel::distribute::detail
