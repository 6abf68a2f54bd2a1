// The CPU plugin through its C table, loaded with dlopen as the runtime does:
// versions and name, the device and its properties, buffers (including empty
// ones), copies, execute with report_op, and statuses for bad calls.
#include <accel/plugin/accel_plugin.h>

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

// The host owns statuses; this test is the host.
struct AccelStatus {
  AccelStatusCode code;
  std::string message;
};

namespace {

std::vector<AccelOpProfile> g_reports;

AccelStatus* make_status(AccelStatusCode code, const char* message) { return new AccelStatus{code, message}; }
void log_message(AccelLogLevel, const char*, const char*) {}
void record_op(void*, const AccelOpProfile* profile) { g_reports.push_back(*profile); }
const char* no_setting(const char*) { return nullptr; }

const AccelHostApi kHost = {sizeof(AccelHostApi), ACCEL_PLUGIN_API_MAJOR, ACCEL_PLUGIN_API_MINOR,
                            make_status, log_message, record_op, no_setting};

AccelStatusCode take(AccelStatus* status, std::string* message = nullptr) {
  if (status == nullptr) return ACCEL_STATUS_OK;
  const AccelStatusCode code = status->code;
  if (message) *message = status->message;
  delete status;
  return code;
}

class CpuPlugin : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    handle_ = dlopen(ACCEL_CPU_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    auto entry = reinterpret_cast<AccelGetPluginApiFunction>(dlsym(handle_, ACCEL_PLUGIN_ENTRY_POINT_NAME));
    ASSERT_NE(entry, nullptr);
    api_ = entry();
    ASSERT_EQ(take(api_->initialize(&kHost, &context_)), ACCEL_STATUS_OK);
  }
  void SetUp() override {
    AccelDeviceOptions options{};
    options.struct_size = sizeof(options);
    options.logical_count = 1;
    options.options = "foo=bar;threads=2";
    ASSERT_EQ(take(api_->device_open(context_, &options, &device_)), ACCEL_STATUS_OK);
  }
  void TearDown() override { api_->device_close(device_); }

  static inline void* handle_ = nullptr;  // never closed: plugins stay loaded
  static inline const AccelPluginApi* api_ = nullptr;
  static inline AccelPluginContext* context_ = nullptr;
  AccelDevice* device_ = nullptr;
};

TEST_F(CpuPlugin, ReportsVersionNameAndOneCpuDevice) {
  EXPECT_EQ(api_->api_major, static_cast<uint32_t>(ACCEL_PLUGIN_API_MAJOR));
  EXPECT_GE(api_->api_minor, static_cast<uint32_t>(ACCEL_PLUGIN_API_MIN_MINOR));
  EXPECT_EQ(api_->struct_size, sizeof(AccelPluginApi));
  EXPECT_STREQ(api_->name, "cpu");
  int32_t count = 0;
  ASSERT_EQ(take(api_->physical_device_count(context_, &count)), ACCEL_STATUS_OK);
  EXPECT_EQ(count, 1);
  AccelDeviceInfo info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(take(api_->physical_device_info(context_, 0, &info)), ACCEL_STATUS_OK);
  EXPECT_STREQ(info.type, "CPU");
  EXPECT_GT(std::strlen(info.description), 0u);
  EXPECT_GT(info.memory_bytes, 0u);
  std::map<std::string, std::string> properties;
  for (int i = 0; i < info.num_properties; ++i) properties[info.properties[i].key] = info.properties[i].value;
  for (const char* key : {"cores", "threads", "isa", "gemm_library"}) EXPECT_TRUE(properties.count(key)) << key;
  EXPECT_EQ(take(api_->physical_device_info(context_, 1, &info)), ACCEL_STATUS_NOT_FOUND);
  EXPECT_EQ(api_->no_device_reason(context_), nullptr);
}

TEST_F(CpuPlugin, BuffersCopiesAndExecuteWithTiming) {
  AccelBuffer *a = nullptr, *b = nullptr, *empty = nullptr;
  ASSERT_EQ(take(api_->buffer_allocate(device_, 3 * sizeof(float), &a)), ACCEL_STATUS_OK);
  ASSERT_EQ(take(api_->buffer_allocate(device_, 3 * sizeof(float), &b)), ACCEL_STATUS_OK);
  ASSERT_EQ(take(api_->buffer_allocate(device_, 0, &empty)), ACCEL_STATUS_OK);
  ASSERT_NE(empty, nullptr);
  const float values[3] = {1, 2, 3};
  ASSERT_EQ(take(api_->copy_host_to_device(device_, values, a, 0, sizeof(values))), ACCEL_STATUS_OK);
  ASSERT_EQ(take(api_->copy_device_to_device(device_, a, 0, b, 0, sizeof(values))), ACCEL_STATUS_OK);

  AccelTensor x{sizeof(AccelTensor), ACCEL_DTYPE_F32, 1, {3}, a, 0};
  AccelTensor y{sizeof(AccelTensor), ACCEL_DTYPE_F32, 1, {3}, b, 0};
  AccelTensor inputs[2] = {x, x};
  AccelOpCall call{sizeof(AccelOpCall), ACCEL_OP_ADD, 2, inputs, 1, &y, nullptr, 77};
  g_reports.clear();
  ASSERT_EQ(take(api_->execute(device_, &call)), ACCEL_STATUS_OK);
  ASSERT_EQ(take(api_->synchronize(device_)), ACCEL_STATUS_OK);
  float result[3] = {};
  ASSERT_EQ(take(api_->copy_device_to_host(device_, b, 0, result, sizeof(result))), ACCEL_STATUS_OK);
  EXPECT_EQ(result[0], 2.0f);
  EXPECT_EQ(result[2], 6.0f);
  ASSERT_EQ(g_reports.size(), 1u);
  EXPECT_EQ(g_reports[0].sequence, 77u);
  EXPECT_EQ(g_reports[0].op, ACCEL_OP_ADD);
  EXPECT_EQ(g_reports[0].time_source, ACCEL_TIME_WALL);
  EXPECT_GE(g_reports[0].duration_seconds, 0.0);

  // A tensor at an offset inside a buffer.
  AccelTensor tail{sizeof(AccelTensor), ACCEL_DTYPE_F32, 1, {1}, b, 2 * sizeof(float)};
  AccelTensor tail_out{sizeof(AccelTensor), ACCEL_DTYPE_F32, 1, {1}, a, 0};
  AccelOpCall neg{sizeof(AccelOpCall), ACCEL_OP_NEG, 1, &tail, 1, &tail_out, nullptr, 78};
  ASSERT_EQ(take(api_->execute(device_, &neg)), ACCEL_STATUS_OK);
  ASSERT_EQ(take(api_->copy_device_to_host(device_, a, 0, result, sizeof(float))), ACCEL_STATUS_OK);
  EXPECT_EQ(result[0], -6.0f);

  std::string message;
  EXPECT_EQ(take(api_->copy_device_to_host(device_, a, 8, result, 8), &message), ACCEL_STATUS_OUT_OF_RANGE);
  AccelTensor too_big{sizeof(AccelTensor), ACCEL_DTYPE_F32, 1, {4}, a, 0};
  AccelOpCall overflow{sizeof(AccelOpCall), ACCEL_OP_NEG, 1, &too_big, 1, &y, nullptr, 79};
  EXPECT_EQ(take(api_->execute(device_, &overflow), &message), ACCEL_STATUS_INVALID_ARGUMENT);
  AccelTensor ints{sizeof(AccelTensor), ACCEL_DTYPE_I32, 1, {3}, a, 0};
  AccelOpCall unsupported{sizeof(AccelOpCall), ACCEL_OP_EXP, 1, &ints, 1, &ints, nullptr, 80};
  EXPECT_EQ(take(api_->execute(device_, &unsupported), &message), ACCEL_STATUS_UNIMPLEMENTED);
  EXPECT_NE(message.find("EXP"), std::string::npos) << message;

  api_->buffer_free(device_, a);
  api_->buffer_free(device_, b);
  api_->buffer_free(device_, empty);
}

TEST_F(CpuPlugin, SupportsOpAgreesWithTheKernels) {
  EXPECT_EQ(api_->supports_op(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32), 1);
  EXPECT_EQ(api_->supports_op(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_I32), 0);
  EXPECT_EQ(api_->supports_op(device_, ACCEL_OP_CONCAT, ACCEL_DTYPE_BOOL), 1);
}

// Plugin API 1.2: the CPU plugin claims FUSED_ELEMENTWISE and every epilogue,
// and runs a fusion sent through its table.
TEST_F(CpuPlugin, ClaimsFusionsAndEpiloguesOfApi12) {
  ASSERT_GE(api_->api_minor, 2u);
  EXPECT_EQ(api_->supports_op(device_, ACCEL_OP_FUSED_ELEMENTWISE, ACCEL_DTYPE_F32), 1);
  ASSERT_NE(api_->supports_epilogue, nullptr);
  EXPECT_EQ(api_->supports_epilogue(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32,
                                    ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_SIGMOID), 1);
  EXPECT_EQ(api_->supports_epilogue(device_, ACCEL_OP_CONV2D_BACKWARD_INPUT, ACCEL_DTYPE_F32,
                                    ACCEL_EPILOGUE_RELU_MASK, ACCEL_OP_RELU), 1);
  EXPECT_EQ(api_->supports_epilogue(device_, ACCEL_OP_CONV2D_BACKWARD_FILTER, ACCEL_DTYPE_F32,
                                    ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU), 0);
  EXPECT_EQ(api_->supports_epilogue(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, ACCEL_EPILOGUE_ACTIVATION,
                                    ACCEL_OP_EXP), 0);

  // y = relu(x) * 2, written over x (an output may be the same tensor as an input).
  AccelBuffer* buffer = nullptr;
  ASSERT_EQ(take(api_->buffer_allocate(device_, 4 * sizeof(float), &buffer)), ACCEL_STATUS_OK);
  const float values[4] = {-1, 2, -3, 4};
  ASSERT_EQ(take(api_->copy_host_to_device(device_, values, buffer, 0, sizeof(values))), ACCEL_STATUS_OK);
  AccelTensor x{sizeof(AccelTensor), ACCEL_DTYPE_F32, 1, {4}, buffer, 0};
  const AccelFusedInstruction instructions[] = {
      {ACCEL_FUSED_LOAD, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, {0, 0, 0}, 0.0},
      {ACCEL_FUSED_OP, ACCEL_OP_RELU, ACCEL_DTYPE_F32, {0, 0, 0}, 0.0},
      {ACCEL_FUSED_CONSTANT, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, {0, 0, 0}, 2.0},
      {ACCEL_FUSED_OP, ACCEL_OP_MUL, ACCEL_DTYPE_F32, {1, 2, 0}, 0.0},
  };
  const AccelFusedOutput output{3, ACCEL_OP_MATMUL, 0, {}, 0};
  AccelFusedElementwiseAttributes program{sizeof(program), 1, {4}, 4, instructions, 1, &output};
  AccelOpCall call{sizeof(AccelOpCall), ACCEL_OP_FUSED_ELEMENTWISE, 1, &x, 1, &x, &program, 90};
  g_reports.clear();
  ASSERT_EQ(take(api_->execute(device_, &call)), ACCEL_STATUS_OK);
  float result[4] = {};
  ASSERT_EQ(take(api_->copy_device_to_host(device_, buffer, 0, result, sizeof(result))), ACCEL_STATUS_OK);
  EXPECT_EQ(result[0], 0.0f);
  EXPECT_EQ(result[1], 4.0f);
  EXPECT_EQ(result[3], 8.0f);
  ASSERT_EQ(g_reports.size(), 1u);
  EXPECT_EQ(g_reports[0].op, ACCEL_OP_FUSED_ELEMENTWISE);
  EXPECT_EQ(g_reports[0].flops, 8.0);  // RELU and MUL on 4 elements
  api_->buffer_free(device_, buffer);
}

TEST_F(CpuPlugin, BadThreadOptionIsInvalidArgument) {
  AccelDeviceOptions options{};
  options.struct_size = sizeof(options);
  options.options = "threads=zero";
  AccelDevice* device = nullptr;
  EXPECT_EQ(take(api_->device_open(context_, &options, &device)), ACCEL_STATUS_INVALID_ARGUMENT);
}

}  // namespace
