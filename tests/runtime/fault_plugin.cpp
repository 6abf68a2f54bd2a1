// Deliberately broken plugins for the loader fault tests. One source, built
// once per ACCEL_TEST_FAULT value; each build fails loading in one way (or, for
// "none", is a good one-device plugin named by ACCEL_TEST_PLUGIN_NAME).
#include <accel/plugin/accel_plugin.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#define FAULT_NONE 0
#define FAULT_MISSING_ENTRY 1
#define FAULT_WRONG_MAJOR 2
#define FAULT_OLD_MINOR 3
#define FAULT_ENTRY_THROWS 4
#define FAULT_INIT_ERROR 5
#define FAULT_INIT_THROWS 6
#define FAULT_ZERO_DEVICES 7
#define FAULT_HUGE_COUNT 8       // claims 2^31 - 1 devices
#define FAULT_INFO_ERROR 9       // describing its device fails
#define FAULT_NULL_TYPE 10       // its device has no type
#define FAULT_CPU_TYPE 11        // its device says it is a CPU
#define FAULT_ENTRY_IS_DATA 12   // the entry symbol is a data object
#define FAULT_FOREIGN_STATUS 13  // initialize returns a pointer that is no status
#define FAULT_MISSING_DEPENDENCY 14  // linked against a library the loader cannot find
// Faults only a probe process survives (tests/runtime/CMakeLists.txt keeps them apart):
#define FAULT_CRASH_IN_INIT 15   // initialize dereferences null
#define FAULT_HANG_IN_INIT 16    // initialize never returns
#define FAULT_MEMORY_HOG 17      // initialize allocates until it is stopped
#define FAULT_BAD_PROPERTIES 18  // its device's property table is a wild pointer
#define FAULT_BAD_TABLE 19       // the entry point returns a wild pointer

#include <chrono>
#include <thread>
#include <vector>

#include <cstdint>
#if ACCEL_TEST_FAULT == FAULT_MISSING_DEPENDENCY
int accel_test_missing_dependency();  // in a library kept out of the loader's path
#endif

namespace {

const AccelHostApi* host = nullptr;

AccelStatus* initialize(const AccelHostApi* host_api, AccelPluginContext** context) {
  host = host_api;
  *context = nullptr;
#if ACCEL_TEST_FAULT == FAULT_INIT_ERROR
  return host->status_create(ACCEL_STATUS_UNAVAILABLE, "simulated init failure: widget driver missing");
#elif ACCEL_TEST_FAULT == FAULT_INIT_THROWS
  throw std::runtime_error("initialize exploded");
#elif ACCEL_TEST_FAULT == FAULT_FOREIGN_STATUS
  return reinterpret_cast<AccelStatus*>(std::uintptr_t{3});  // a status code where a pointer belongs
#elif ACCEL_TEST_FAULT == FAULT_MISSING_DEPENDENCY
  return accel_test_missing_dependency() == 0 ? nullptr : nullptr;
#elif ACCEL_TEST_FAULT == FAULT_CRASH_IN_INIT
  *static_cast<volatile int*>(nullptr) = 1;
  return nullptr;
#elif ACCEL_TEST_FAULT == FAULT_HANG_IN_INIT
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
#elif ACCEL_TEST_FAULT == FAULT_MEMORY_HOG
  static std::vector<char*> blocks;
  for (;;) {
    char* block = new char[64 << 20];
    std::memset(block, 1, 64 << 20);
    blocks.push_back(block);
  }
#else
  return nullptr;
#endif
}

AccelStatus* physical_device_count(AccelPluginContext*, int32_t* count) {
  *count = ACCEL_TEST_FAULT == FAULT_ZERO_DEVICES ? 0 : ACCEL_TEST_FAULT == FAULT_HUGE_COUNT ? INT32_MAX : 1;
  return nullptr;
}

const char* no_device_reason(AccelPluginContext*) { return "no widget attached"; }

AccelStatus* physical_device_info(AccelPluginContext*, int32_t, AccelDeviceInfo* info) {
#if ACCEL_TEST_FAULT == FAULT_INFO_ERROR
  return host->status_create(ACCEL_STATUS_INTERNAL, "simulated failure reading the widget's properties");
#endif
  info->type = ACCEL_TEST_FAULT == FAULT_NULL_TYPE ? nullptr : ACCEL_TEST_FAULT == FAULT_CPU_TYPE ? "CPU" : "TESTDEV";
  info->description = "test device";
  info->memory_bytes = 1 << 20;
  info->num_properties = ACCEL_TEST_FAULT == FAULT_BAD_PROPERTIES ? 1 : 0;
  info->properties = ACCEL_TEST_FAULT == FAULT_BAD_PROPERTIES ? reinterpret_cast<const AccelProperty*>(std::uintptr_t{16})
                                                              : nullptr;
  return nullptr;
}

AccelStatus* device_open(AccelPluginContext*, const AccelDeviceOptions*, AccelDevice** device) {
  *device = reinterpret_cast<AccelDevice*>(new int(0));
  return nullptr;
}
void device_close(AccelDevice* device) { delete reinterpret_cast<int*>(device); }
int32_t supports_op(AccelDevice*, AccelOp, AccelDType) { return 0; }
AccelStatus* buffer_allocate(AccelDevice*, uint64_t bytes, AccelBuffer** buffer) {
  *buffer = static_cast<AccelBuffer*>(std::malloc(bytes));
  return nullptr;
}
void buffer_free(AccelDevice*, AccelBuffer* buffer) { std::free(buffer); }
AccelStatus* copy_in(AccelDevice*, const void* source, AccelBuffer* destination, uint64_t offset, uint64_t bytes) {
  std::memcpy(reinterpret_cast<char*>(destination) + offset, source, bytes);
  return nullptr;
}
AccelStatus* copy_out(AccelDevice*, AccelBuffer* source, uint64_t offset, void* destination, uint64_t bytes) {
  std::memcpy(destination, reinterpret_cast<char*>(source) + offset, bytes);
  return nullptr;
}
AccelStatus* copy_within(AccelDevice*, AccelBuffer* source, uint64_t source_offset, AccelBuffer* destination,
                         uint64_t destination_offset, uint64_t bytes) {
  std::memmove(reinterpret_cast<char*>(destination) + destination_offset,
               reinterpret_cast<char*>(source) + source_offset, bytes);
  return nullptr;
}
AccelStatus* execute(AccelDevice*, const AccelOpCall*) {
  return host->status_create(ACCEL_STATUS_UNIMPLEMENTED, "test device runs no ops");
}
AccelStatus* synchronize(AccelDevice*) { return nullptr; }

const AccelPluginApi plugin_api = {
    sizeof(AccelPluginApi),
    ACCEL_TEST_FAULT == FAULT_WRONG_MAJOR ? 99u : ACCEL_PLUGIN_API_MAJOR,
    ACCEL_TEST_FAULT == FAULT_OLD_MINOR ? 0u : ACCEL_PLUGIN_API_MINOR,
    ACCEL_TEST_PLUGIN_NAME, "0.0.1",
    &initialize, &physical_device_count, &physical_device_info, &no_device_reason,
    &device_open, &device_close, &supports_op, &buffer_allocate, &buffer_free,
    &copy_in, &copy_out, &copy_within, &execute, &synchronize, nullptr, nullptr, nullptr,
};

}  // namespace

#if ACCEL_TEST_FAULT == FAULT_ENTRY_IS_DATA
extern "C" ACCEL_PLUGIN_EXPORT const unsigned char ACCEL_PLUGIN_ENTRY_POINT[16] = {0xff, 0xff, 0xff, 0xff};
#elif ACCEL_TEST_FAULT != FAULT_MISSING_ENTRY
extern "C" ACCEL_PLUGIN_EXPORT const AccelPluginApi* ACCEL_PLUGIN_ENTRY_POINT(void) {
#if ACCEL_TEST_FAULT == FAULT_ENTRY_THROWS
  throw std::runtime_error("entry point exploded");
#elif ACCEL_TEST_FAULT == FAULT_BAD_TABLE
  return reinterpret_cast<const AccelPluginApi*>(std::uintptr_t{4096});
#endif
  return &plugin_api;
}
#endif
