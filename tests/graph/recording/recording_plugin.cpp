// A host-memory plugin that records (plugin API 1.5), for the tests of
// compiled steps replayed as recordings: one device of type RECORDING that
// runs every op the host kernels run, bit for bit as the CPU plugin does.
// Between recording_begin and recording_end, execute() and
// copy_device_to_device() only append the call (operands, a copy of the
// attributes) to the recording; recording_replay runs the list again. Ops
// run by themselves are reported to the profiler; replays are not. The
// runtime setting "recording_test.refuse_op" (an op-set name such as "RELU")
// makes recording that op fail, as a CUDA stream capture fails on a call it
// cannot capture.
#include <accel/plugin/accel_plugin.h>
#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/host_operands.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

struct AccelBuffer {
  void* data = nullptr;
  uint64_t bytes = 0;
};

namespace {

// One recorded call: an op with its operands and attributes, or a copy.
struct RecordedCall {
  AccelOp op = ACCEL_OP_COUNT;  // ACCEL_OP_COUNT: a device-to-device copy
  std::vector<AccelTensor> inputs;
  std::vector<AccelTensor> outputs;
  std::vector<unsigned char> attributes;  // struct_size bytes; empty for none
  AccelBuffer* copy_source = nullptr;
  AccelBuffer* copy_destination = nullptr;
  uint64_t copy_source_offset = 0;
  uint64_t copy_destination_offset = 0;
  uint64_t copy_bytes = 0;
};

}  // namespace

struct AccelRecording {
  std::vector<RecordedCall> calls;
};

namespace {

const AccelHostApi* host = nullptr;

struct Device {
  void* host_context = nullptr;  // for report_op
  std::mutex mutex;
  AccelRecording* recording = nullptr;  // non-null while recording
  bool recording_failed = false;
} only_device;

Device& device_of(AccelDevice* device) { return *reinterpret_cast<Device*>(device); }

accel::host_kernels::HostBufferView view_of(const AccelBuffer* buffer) { return {buffer->data, buffer->bytes}; }

AccelStatus* initialize(const AccelHostApi* host_api, AccelPluginContext** context) {
  host = host_api;
  *context = nullptr;
  return nullptr;
}

AccelStatus* physical_device_count(AccelPluginContext*, int32_t* count) {
  *count = 1;
  return nullptr;
}

AccelStatus* physical_device_info(AccelPluginContext*, int32_t, AccelDeviceInfo* info) {
  info->type = "RECORDING";
  info->description = "host kernels behind a recorded command list (tests)";
  info->memory_bytes = 1ull << 32;
  info->num_properties = 0;
  info->properties = nullptr;
  return nullptr;
}

AccelStatus* device_open(AccelPluginContext*, const AccelDeviceOptions* options, AccelDevice** device) {
  only_device.host_context = options->host_context;
  *device = reinterpret_cast<AccelDevice*>(&only_device);
  return nullptr;
}

void device_close(AccelDevice*) {}

int32_t supports_op(AccelDevice*, AccelOp op, AccelDType dtype) { return accel::host_kernels::supports(op, dtype); }

int32_t supports_epilogue(AccelDevice*, AccelOp op, AccelDType dtype, int32_t flags, AccelOp activation) {
  return accel::host_kernels::supports_epilogue(op, dtype, flags, activation);
}

AccelStatus* buffer_allocate(AccelDevice*, uint64_t bytes, AccelBuffer** buffer) {
  void* memory = std::malloc(bytes == 0 ? 1 : bytes);
  if (memory == nullptr) return host->status_create(ACCEL_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  *buffer = new AccelBuffer{memory, bytes};
  return nullptr;
}

void buffer_free(AccelDevice*, AccelBuffer* buffer) {
  if (buffer == nullptr) return;
  std::free(buffer->data);
  delete buffer;
}

char* address(AccelBuffer* buffer, uint64_t offset) { return static_cast<char*>(buffer->data) + offset; }

AccelStatus* copy_host_to_device(AccelDevice* device, const void* source, AccelBuffer* destination, uint64_t offset,
                                 uint64_t bytes) {
  if (device_of(device).recording != nullptr) {
    return host->status_create(ACCEL_STATUS_FAILED_PRECONDITION, "a copy from the host cannot be recorded");
  }
  std::memcpy(address(destination, offset), source, bytes);
  return nullptr;
}

AccelStatus* copy_device_to_host(AccelDevice* device, AccelBuffer* source, uint64_t offset, void* destination,
                                 uint64_t bytes) {
  if (device_of(device).recording != nullptr) {
    return host->status_create(ACCEL_STATUS_FAILED_PRECONDITION, "a copy to the host cannot be recorded");
  }
  std::memcpy(destination, address(source, offset), bytes);
  return nullptr;
}

void run_copy(const RecordedCall& copy) {
  std::memmove(address(copy.copy_destination, copy.copy_destination_offset),
               address(copy.copy_source, copy.copy_source_offset), copy.copy_bytes);
}

AccelStatus* copy_device_to_device(AccelDevice* device, AccelBuffer* source, uint64_t source_offset,
                                   AccelBuffer* destination, uint64_t destination_offset, uint64_t bytes) {
  RecordedCall copy;
  copy.copy_source = source;
  copy.copy_destination = destination;
  copy.copy_source_offset = source_offset;
  copy.copy_destination_offset = destination_offset;
  copy.copy_bytes = bytes;
  Device& state = device_of(device);
  if (state.recording != nullptr) {
    state.recording->calls.push_back(copy);
  } else {
    run_copy(copy);
  }
  return nullptr;
}

void run_call(const RecordedCall& call) {
  if (call.op == ACCEL_OP_COUNT) {
    run_copy(call);
    return;
  }
  const accel::host_kernels::HostOperands inputs(call.inputs.data(), static_cast<int32_t>(call.inputs.size()),
                                                 "input", &view_of);
  const accel::host_kernels::HostOperands outputs(call.outputs.data(), static_cast<int32_t>(call.outputs.size()),
                                                  "output", &view_of);
  accel::host_kernels::execute(call.op, inputs.span(), outputs.span(),
                               call.attributes.empty() ? nullptr : call.attributes.data());
}

bool refused(AccelOp op) {
  const char* name = host->get_setting("recording_test.refuse_op");
  return name != nullptr && std::strcmp(name, accel::host_kernels::op_name(op)) == 0;
}

AccelStatus* execute(AccelDevice* device, const AccelOpCall* call) {
  return accel::sdk::guard(host, [&] {
    RecordedCall recorded;
    recorded.op = call->op;
    recorded.inputs.assign(call->inputs, call->inputs + call->num_inputs);
    recorded.outputs.assign(call->outputs, call->outputs + call->num_outputs);
    if (call->attributes != nullptr) {
      // Every attribute struct starts with its struct_size; what it points to
      // (a fusion's program) stays alive and unchanged while recorded.
      const auto size = *static_cast<const size_t*>(call->attributes);
      const auto* bytes = static_cast<const unsigned char*>(call->attributes);
      recorded.attributes.assign(bytes, bytes + size);
    }
    Device& state = device_of(device);
    if (state.recording == nullptr) {
      run_call(recorded);
      // Each op run by itself is reported (its time is not measured here);
      // a replay reports nothing, as a CUDA graph launch times no kernel.
      AccelOpProfile profile{};
      profile.struct_size = sizeof(profile);
      profile.sequence = call->sequence;
      profile.op = call->op;
      profile.time_source = ACCEL_TIME_WALL;
      host->report_op(state.host_context, &profile);
      return;
    }
    if (refused(call->op)) {
      state.recording_failed = true;
      throw accel::sdk::PluginError(ACCEL_STATUS_UNIMPLEMENTED,
                                    std::string(accel::host_kernels::op_name(call->op)) + " cannot be recorded here");
    }
    state.recording->calls.push_back(std::move(recorded));
  });
}

AccelStatus* synchronize(AccelDevice*) { return nullptr; }

AccelStatus* recording_begin(AccelDevice* device) {
  Device& state = device_of(device);
  std::lock_guard lock(state.mutex);
  if (state.recording != nullptr) return host->status_create(ACCEL_STATUS_FAILED_PRECONDITION, "already recording");
  state.recording = new AccelRecording;
  state.recording_failed = false;
  return nullptr;
}

AccelStatus* recording_end(AccelDevice* device, AccelRecording** recording) {
  Device& state = device_of(device);
  std::lock_guard lock(state.mutex);
  AccelRecording* recorded = state.recording;
  state.recording = nullptr;
  *recording = nullptr;
  if (recorded == nullptr) return host->status_create(ACCEL_STATUS_FAILED_PRECONDITION, "not recording");
  if (state.recording_failed) {
    delete recorded;
    return host->status_create(ACCEL_STATUS_UNIMPLEMENTED, "a call could not be recorded");
  }
  *recording = recorded;
  return nullptr;
}

AccelStatus* recording_replay(AccelDevice*, AccelRecording* recording) {
  return accel::sdk::guard(host, [&] {
    for (const RecordedCall& call : recording->calls) run_call(call);
  });
}

void recording_release(AccelDevice*, AccelRecording* recording) { delete recording; }

const AccelPluginApi plugin_api = {
    sizeof(AccelPluginApi), ACCEL_PLUGIN_API_MAJOR, ACCEL_PLUGIN_API_MINOR, "recording", "0.1.0",
    &initialize, &physical_device_count, &physical_device_info,
    /*no_device_reason=*/nullptr, &device_open, &device_close, &supports_op,
    &buffer_allocate, &buffer_free, &copy_host_to_device, &copy_device_to_host, &copy_device_to_device,
    &execute, &synchronize, /*memory_info=*/nullptr, /*get_extension=*/nullptr, &supports_epilogue,
    &recording_begin, &recording_end, &recording_replay, &recording_release,
};

}  // namespace

extern "C" ACCEL_PLUGIN_EXPORT const AccelPluginApi* ACCEL_PLUGIN_ENTRY_POINT(void) { return &plugin_api; }
