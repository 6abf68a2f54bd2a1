// Host <-> device copies through two pinned staging buffers and
// cudaMemcpyAsync on the device's stream. Host-to-device returns once the
// source has been copied into staging (the caller may reuse it at once);
// device-to-host returns when the data has arrived, so it synchronizes.
#include "cuda_check.hpp"
#include "cuda_device.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace accel::cuda {
namespace {

void check_range(const AccelDevice& device, const AccelBuffer& buffer, uint64_t offset,
                 uint64_t bytes, const char* what) {
  if (offset > buffer.bytes || bytes > buffer.bytes - offset) {
    throw sdk::PluginError(ACCEL_STATUS_OUT_OF_RANGE,
                           std::string(what) + " on " + device.name + ": bytes [" +
                               std::to_string(offset) + ", " + std::to_string(offset) + "+" +
                               std::to_string(bytes) + ") outside a buffer of " +
                               std::to_string(buffer.bytes) + " bytes");
  }
}

// A copy with the host is not part of a graph the host may launch later
// (plugin API 1.5: the host never records one).
void refuse_while_recording(AccelDevice& device, const char* what) {
  if (device.recording != nullptr) {
    device.recording_failed = true;
    throw sdk::PluginError(ACCEL_STATUS_FAILED_PRECONDITION, std::string(what) + " while " + device.name +
                                                                 " records a CUDA graph");
  }
}

StagingBuffer& next_staging(AccelDevice& device) {
  StagingBuffer& staging = device.staging[device.next_staging++ % 2];
  if (staging.pending) {
    ACCEL_CUDA_CHECK(cudaEventSynchronize(staging.done));
    staging.pending = false;
  }
  return staging;
}

}  // namespace

void copy_host_to_device(AccelDevice& device, const void* source, AccelBuffer& destination,
                         uint64_t offset, uint64_t bytes) {
  check_range(device, destination, offset, bytes, "copy_host_to_device");
  refuse_while_recording(device, "copy_host_to_device");
  if (bytes == 0) return;
  if (source == nullptr) throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null source");
  const char* from = static_cast<const char*>(source);
  char* to = static_cast<char*>(destination.pointer) + offset;
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t chunk = std::min(bytes - done, kStagingBytes);
    StagingBuffer& staging = next_staging(device);
    std::memcpy(staging.host, from + done, chunk);
    ACCEL_CUDA_CHECK(cudaMemcpyAsync(to + done, staging.host, chunk, cudaMemcpyHostToDevice,
                                     device.stream));
    ACCEL_CUDA_CHECK(cudaEventRecord(staging.done, device.stream));
    staging.pending = true;
    done += chunk;
  }
}

void copy_device_to_host(AccelDevice& device, const AccelBuffer& source, uint64_t offset,
                         void* destination, uint64_t bytes) {
  check_range(device, source, offset, bytes, "copy_device_to_host");
  refuse_while_recording(device, "copy_device_to_host");
  if (bytes == 0) {
    ACCEL_CUDA_CHECK(cudaStreamSynchronize(device.stream));
    return;
  }
  if (destination == nullptr) {
    throw sdk::PluginError(ACCEL_STATUS_INVALID_ARGUMENT, "null destination");
  }
  const char* from = static_cast<const char*>(source.pointer) + offset;
  char* to = static_cast<char*>(destination);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t chunk = std::min(bytes - done, kStagingBytes);
    StagingBuffer& staging = next_staging(device);
    ACCEL_CUDA_CHECK(cudaMemcpyAsync(staging.host, from + done, chunk, cudaMemcpyDeviceToHost,
                                     device.stream));
    ACCEL_CUDA_CHECK(cudaEventRecord(staging.done, device.stream));
    staging.pending = true;
    ACCEL_CUDA_CHECK(cudaEventSynchronize(staging.done));
    staging.pending = false;
    std::memcpy(to + done, staging.host, chunk);
    done += chunk;
  }
}

void copy_device_to_device(AccelDevice& device, const AccelBuffer& source,
                           uint64_t source_offset, AccelBuffer& destination,
                           uint64_t destination_offset, uint64_t bytes) {
  check_range(device, source, source_offset, bytes, "copy_device_to_device (source)");
  check_range(device, destination, destination_offset, bytes,
              "copy_device_to_device (destination)");
  if (bytes == 0) return;
  ACCEL_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(destination.pointer) + destination_offset,
                                   static_cast<const char*>(source.pointer) + source_offset,
                                   bytes, cudaMemcpyDeviceToDevice, device.stream));
}

}  // namespace accel::cuda
