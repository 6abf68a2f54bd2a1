// Tests of the CUDA plugin through its C API, loaded with dlopen from the build
// tree. The API-table and discovery tests run everywhere; the op and memory
// tests need a GPU and are skipped ("no GPU: <reason>") without one.
#include <accel/plugin/accel_plugin.h>
#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/nccl_extension.h>
#include <accel/plugin/philox.h>
#include <accel/plugin/plugin_sdk.hpp>

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

// The host owns statuses; this test host keeps code and message.
struct AccelStatus {
  AccelStatusCode code;
  std::string message;
};

namespace {

std::mutex g_mutex;
std::vector<AccelOpProfile> g_profiles;
std::vector<std::string> g_logs;
std::map<std::string, std::string> g_settings;

AccelStatus* status_create(AccelStatusCode code, const char* message) {
  return new AccelStatus{code, message != nullptr ? message : ""};
}
void log_message(AccelLogLevel, const char* plugin, const char* message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_logs.push_back(std::string(plugin) + ": " + message);
}
void report_op(void*, const AccelOpProfile* profile) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_profiles.push_back(*profile);
}
const char* get_setting(const char* key) {
  auto it = g_settings.find(key);
  return it == g_settings.end() ? nullptr : it->second.c_str();
}

// Set once a test has run an op that loads cuBLAS, cuDNN or NCCL in this process.
bool g_math_op_ran = false;

// True when a file whose path contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  return text.find(name) != std::string::npos;
}

const AccelHostApi kHost = {sizeof(AccelHostApi), ACCEL_PLUGIN_API_MAJOR, ACCEL_PLUGIN_API_MINOR,
                            status_create,        log_message,            report_op,
                            get_setting};

// Takes ownership of a returned status: "" for OK, else "<code>: <message>".
std::string take(AccelStatus* status) {
  if (status == nullptr) return "";
  std::string text = std::to_string(static_cast<int>(status->code)) + ": " + status->message;
  delete status;
  return text;
}

const AccelPluginApi* load_plugin() {
  static const AccelPluginApi* api = [] () -> const AccelPluginApi* {
    void* handle = dlopen(ACCEL_CUDA_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      ADD_FAILURE() << "dlopen failed: " << dlerror();
      return nullptr;
    }
    auto entry = reinterpret_cast<AccelGetPluginApiFunction>(dlsym(handle, ACCEL_PLUGIN_ENTRY_POINT_NAME));
    if (entry == nullptr) {
      ADD_FAILURE() << "no entry point: " << dlerror();
      return nullptr;
    }
    return entry();  // never dlclose'd, as the runtime does
  }();
  return api;
}

AccelPluginContext* initialized_context() {
  static AccelPluginContext* context = [] () -> AccelPluginContext* {
    const AccelPluginApi* api = load_plugin();
    if (api == nullptr) return nullptr;
    AccelPluginContext* created = nullptr;
    std::string error = take(api->initialize(&kHost, &created));
    EXPECT_EQ(error, "");
    return created;
  }();
  return context;
}

TEST(CudaPluginApi, TableIsComplete) {
  const AccelPluginApi* api = load_plugin();
  ASSERT_NE(api, nullptr);
  EXPECT_GE(api->struct_size, sizeof(AccelPluginApi));
  EXPECT_EQ(api->api_major, static_cast<uint32_t>(ACCEL_PLUGIN_API_MAJOR));
  EXPECT_GE(api->api_minor, static_cast<uint32_t>(ACCEL_PLUGIN_API_MIN_MINOR));
  EXPECT_STREQ(api->name, "cuda");
  EXPECT_NE(api->version, nullptr);
  EXPECT_NE(api->initialize, nullptr);
  EXPECT_NE(api->physical_device_count, nullptr);
  EXPECT_NE(api->physical_device_info, nullptr);
  EXPECT_NE(api->no_device_reason, nullptr);
  EXPECT_NE(api->device_open, nullptr);
  EXPECT_NE(api->device_close, nullptr);
  EXPECT_NE(api->supports_op, nullptr);
  EXPECT_NE(api->buffer_allocate, nullptr);
  EXPECT_NE(api->buffer_free, nullptr);
  EXPECT_NE(api->copy_host_to_device, nullptr);
  EXPECT_NE(api->copy_device_to_host, nullptr);
  EXPECT_NE(api->copy_device_to_device, nullptr);
  EXPECT_NE(api->execute, nullptr);
  EXPECT_NE(api->synchronize, nullptr);
  EXPECT_NE(api->memory_info, nullptr);
  EXPECT_EQ(api->api_minor, static_cast<uint32_t>(ACCEL_PLUGIN_API_MINOR));
  EXPECT_NE(api->supports_epilogue, nullptr);  // since 1.2
  EXPECT_NE(api->recording_begin, nullptr);    // since 1.5: CUDA graphs
  EXPECT_NE(api->recording_end, nullptr);
  EXPECT_NE(api->recording_replay, nullptr);
  EXPECT_NE(api->recording_release, nullptr);
}

TEST(CudaPluginDiscovery, InitializesWithOrWithoutGpu) {
  const AccelPluginApi* api = load_plugin();
  ASSERT_NE(api, nullptr);
  AccelPluginContext* context = initialized_context();
  ASSERT_NE(context, nullptr);
  int32_t count = -1;
  ASSERT_EQ(take(api->physical_device_count(context, &count)), "");
  ASSERT_GE(count, 0);
  const char* reason = api->no_device_reason(context);
  if (count == 0) {
    ASSERT_NE(reason, nullptr);
    EXPECT_GT(std::strlen(reason), 0u);
    // Opening a device that does not exist is an error, not a crash.
    AccelDeviceOptions options{};
    options.struct_size = sizeof(options);
    options.logical_count = 1;
    AccelDevice* device = nullptr;
    std::string error = take(api->device_open(context, &options, &device));
    EXPECT_NE(error, "");
    EXPECT_EQ(device, nullptr);
    AccelDeviceInfo info{};
    info.struct_size = sizeof(info);
    EXPECT_NE(take(api->physical_device_info(context, 0, &info)), "");
    return;
  }
  EXPECT_EQ(reason, nullptr);
  for (int32_t index = 0; index < count; ++index) {
    AccelDeviceInfo info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(take(api->physical_device_info(context, index, &info)), "");
    EXPECT_STREQ(info.type, "GPU");
    EXPECT_GT(info.memory_bytes, 0u);
    bool has_capability = false;
    for (int32_t p = 0; p < info.num_properties; ++p) {
      if (std::string(info.properties[p].key) == "compute_capability") has_capability = true;
    }
    EXPECT_TRUE(has_capability);
  }
}

// Discovery, as `accel devices` does it, must not load the heavy math libraries
// (libcublas + libcublasLt alone take ~50 ms to load): they load on the first op
// that needs them.
TEST(CudaPluginLazyLoading, DiscoveryLoadsNoMathLibrary) {
  if (g_math_op_ran) GTEST_SKIP() << "an earlier test in this process ran a cuBLAS / cuDNN op";
  const AccelPluginApi* api = load_plugin();
  ASSERT_NE(api, nullptr);
  AccelPluginContext* context = initialized_context();
  ASSERT_NE(context, nullptr);
  int32_t count = -1;
  ASSERT_EQ(take(api->physical_device_count(context, &count)), "");
  for (int32_t index = 0; index < count; ++index) {
    AccelDeviceInfo info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(take(api->physical_device_info(context, index, &info)), "");
  }
  ASSERT_TRUE(mapped("libaccel-plugin-cuda")) << "reading /proc/self/maps";
  EXPECT_FALSE(mapped("libcublas")) << "libcublas / libcublasLt loaded by discovery";
  EXPECT_FALSE(mapped("libcudnn")) << "libcudnn loaded by discovery";
  EXPECT_FALSE(mapped("libnccl")) << "libnccl loaded by discovery";
}

// The NCCL extension is there with or without a GPU; asking its version loads
// NCCL (found through the plugin's RUNPATH), which needs no GPU.
TEST(CudaPluginNccl, ExtensionLoadsNcclOnFirstUse) {
  const AccelPluginApi* api = load_plugin();
  ASSERT_NE(api, nullptr);
  AccelPluginContext* context = initialized_context();
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(api->get_extension(context, "accel.no_such_extension"), nullptr);
  const auto* nccl = static_cast<const AccelNcclExtension*>(api->get_extension(context, ACCEL_NCCL_EXTENSION_NAME));
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->struct_size, sizeof(AccelNcclExtension));
  g_math_op_ran = true;
  int32_t version = 0;
  ASSERT_EQ(take(nccl->version(context, &version)), "");
  EXPECT_EQ(version / 10000, NCCL_MAJOR) << version;
  EXPECT_TRUE(mapped("libnccl"));
}

TEST(CudaPluginNccl, BadArgumentsAreInvalidArgumentErrors) {
  const AccelPluginApi* api = load_plugin();
  ASSERT_NE(api, nullptr);
  AccelPluginContext* context = initialized_context();
  ASSERT_NE(context, nullptr);
  const auto* nccl = static_cast<const AccelNcclExtension*>(api->get_extension(context, ACCEL_NCCL_EXTENSION_NAME));
  ASSERT_NE(nccl, nullptr);
  const std::string invalid = std::to_string(static_cast<int>(ACCEL_STATUS_INVALID_ARGUMENT)) + ": ";
  EXPECT_EQ(take(nccl->all_reduce(nullptr, 0, nullptr, nullptr, 4, ACCEL_DTYPE_F32, ACCEL_NCCL_SUM)),
            invalid + "NCCL all-reduce: null argument");
  uint8_t id[ACCEL_NCCL_UNIQUE_ID_BYTES] = {};
  AccelNcclCommunicator* communicator = nullptr;
  EXPECT_EQ(take(nccl->communicators_create(context, nullptr, 0, id, 0, 1, &communicator)),
            invalid + "NCCL communicators: no devices");
  nccl->communicator_destroy(nullptr);  // a no-op
}

// ------------------------------------------------------------ GPU tests

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = load_plugin();
    ASSERT_NE(api_, nullptr);
    context_ = initialized_context();
    ASSERT_NE(context_, nullptr);
    int32_t count = 0;
    ASSERT_EQ(take(api_->physical_device_count(context_, &count)), "");
    if (count == 0) {
      const char* reason = api_->no_device_reason(context_);
      GTEST_SKIP() << "no GPU: " << (reason != nullptr ? reason : "unknown");
    }
    device_ = open(0, 1);
    ASSERT_NE(device_, nullptr);
  }
  void TearDown() override {
    for (auto& [device, buffer] : buffers_) api_->buffer_free(device, buffer);
    buffers_.clear();
    if (device_ != nullptr) api_->device_close(device_);
  }

  AccelDevice* open(uint64_t limit, int32_t growth) {
    AccelDeviceOptions options{};
    options.struct_size = sizeof(options);
    options.physical_index = 0;
    options.logical_index = 0;
    options.logical_count = 1;
    options.memory_limit_bytes = limit;
    options.memory_growth = growth;
    AccelDevice* device = nullptr;
    EXPECT_EQ(take(api_->device_open(context_, &options, &device)), "");
    return device;
  }

  AccelTensor tensor(AccelDType dtype, std::vector<int64_t> shape, size_t element_size) {
    AccelTensor t{};
    t.struct_size = sizeof(t);
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(shape.size());
    uint64_t count = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      t.shape[d] = shape[d];
      count *= static_cast<uint64_t>(shape[d]);
    }
    AccelBuffer* buffer = nullptr;
    EXPECT_EQ(take(api_->buffer_allocate(device_, count * element_size, &buffer)), "");
    buffers_.push_back({device_, buffer});
    t.buffer = buffer;
    return t;
  }
  AccelTensor upload(const std::vector<float>& values, std::vector<int64_t> shape) {
    AccelTensor t = tensor(ACCEL_DTYPE_F32, std::move(shape), sizeof(float));
    EXPECT_EQ(take(api_->copy_host_to_device(device_, values.data(), t.buffer, 0,
                                             values.size() * sizeof(float))),
              "");
    return t;
  }
  std::vector<float> download(const AccelTensor& t, size_t count) {
    std::vector<float> values(count);
    EXPECT_EQ(take(api_->copy_device_to_host(device_, t.buffer, 0, values.data(), count * sizeof(float))), "");
    return values;
  }
  std::string run(AccelOp op, std::vector<AccelTensor> inputs, std::vector<AccelTensor> outputs,
                  const void* attributes, uint64_t sequence = 1) {
    if (op == ACCEL_OP_MATMUL || (op >= ACCEL_OP_CONV2D && op <= ACCEL_OP_CONV2D_BACKWARD_FILTER)) {
      g_math_op_ran = true;
    }
    AccelOpCall call{};
    call.struct_size = sizeof(call);
    call.op = op;
    call.num_inputs = static_cast<int32_t>(inputs.size());
    call.inputs = inputs.data();
    call.num_outputs = static_cast<int32_t>(outputs.size());
    call.outputs = outputs.data();
    call.attributes = attributes;
    call.sequence = sequence;
    return take(api_->execute(device_, &call));
  }

  const AccelPluginApi* api_ = nullptr;
  AccelPluginContext* context_ = nullptr;
  AccelDevice* device_ = nullptr;
  std::vector<std::pair<AccelDevice*, AccelBuffer*>> buffers_;
};

std::vector<float> ramp(size_t count, float scale) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = scale * static_cast<float>((i * 7) % 13) - 3.0f;
  return values;
}

TEST_F(CudaGpuTest, MatmulMatchesHostLoop) {
  const int64_t batch = 2, m = 3, k = 5, n = 4;
  std::vector<float> a = ramp(batch * m * k, 0.25f), b = ramp(batch * n * k, 0.5f);
  AccelTensor ta = upload(a, {batch, m, k});
  AccelTensor tb = upload(b, {batch, n, k});  // transposed: [batch, N, K]
  AccelTensor ty = tensor(ACCEL_DTYPE_F32, {batch, m, n}, sizeof(float));
  AccelMatmulAttributes attributes{sizeof(attributes), 0, 1, 0, {}};
  ASSERT_EQ(run(ACCEL_OP_MATMUL, {ta, tb}, {ty}, &attributes), "");
  std::vector<float> y = download(ty, batch * m * n);
  for (int64_t s = 0; s < batch; ++s) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double expected = 0.0;
        for (int64_t p = 0; p < k; ++p) expected += double(a[(s * m + i) * k + p]) * b[(s * n + j) * k + p];
        EXPECT_NEAR(y[(s * m + i) * n + j], expected, 1e-4) << s << "," << i << "," << j;
      }
    }
  }
}

TEST_F(CudaGpuTest, FirstMatmulLoadsCublas) {
  // Opening a device (SetUp) creates no cuBLAS / cuDNN handle.
  if (!g_math_op_ran) {
    EXPECT_FALSE(mapped("libcublas")) << "device_open loaded cuBLAS";
    EXPECT_FALSE(mapped("libcudnn")) << "device_open loaded cuDNN";
  }
  AccelTensor ta = upload({1.0f, 2.0f}, {1, 2}), tb = upload({3.0f, 4.0f}, {2, 1});
  AccelTensor ty = tensor(ACCEL_DTYPE_F32, {1, 1}, sizeof(float));
  AccelMatmulAttributes attributes{sizeof(attributes), 0, 0, 0, {}};
  ASSERT_EQ(run(ACCEL_OP_MATMUL, {ta, tb}, {ty}, &attributes), "");
  EXPECT_EQ(download(ty, 1)[0], 11.0f);
  EXPECT_TRUE(mapped("libcublas"));
}

TEST_F(CudaGpuTest, AddBroadcastsLikeNumpy) {
  std::vector<float> a = ramp(6, 1.0f), b = {10.0f, 20.0f, 30.0f};
  AccelTensor ta = upload(a, {2, 3}), tb = upload(b, {3});
  AccelTensor ty = tensor(ACCEL_DTYPE_F32, {2, 3}, sizeof(float));
  ASSERT_EQ(run(ACCEL_OP_ADD, {ta, tb}, {ty}, nullptr), "");
  std::vector<float> y = download(ty, 6);
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], a[i] + b[i % 3]);
}

// Plugin API 1.5: a matmul then an add captured into a CUDA graph run only
// when replayed, and each replay reads the inputs' current contents; a copy
// with the host cannot be captured, fails the capture, and leaves the device
// usable.
TEST_F(CudaGpuTest, RecordingCapturesOpsAsACudaGraphThatReplaysOnCurrentInputs) {
  AccelTensor ta = upload({1.0f, 2.0f}, {1, 2}), tb = upload({3.0f, 4.0f}, {2, 1});
  AccelTensor tc = upload({0.5f}, {1, 1});
  AccelTensor product = tensor(ACCEL_DTYPE_F32, {1, 1}, sizeof(float));
  AccelTensor sum = upload({-1.0f}, {1, 1});
  AccelMatmulAttributes attributes{sizeof(attributes), 0, 0, 0, {}};
  ASSERT_EQ(run(ACCEL_OP_MATMUL, {ta, tb}, {product}, &attributes), "");  // cuBLAS loaded outside the capture

  ASSERT_EQ(take(api_->recording_begin(device_)), "");
  ASSERT_EQ(run(ACCEL_OP_MATMUL, {ta, tb}, {product}, &attributes), "");
  ASSERT_EQ(run(ACCEL_OP_ADD, {product, tc}, {sum}, nullptr), "");
  AccelRecording* recording = nullptr;
  ASSERT_EQ(take(api_->recording_end(device_, &recording)), "");
  ASSERT_NE(recording, nullptr);
  EXPECT_EQ(download(sum, 1)[0], -1.0f);  // captured, not run

  ASSERT_EQ(take(api_->recording_replay(device_, recording)), "");
  EXPECT_EQ(download(sum, 1)[0], 11.5f);
  const std::vector<float> new_a = {2.0f, 2.0f};
  ASSERT_EQ(take(api_->copy_host_to_device(device_, new_a.data(), ta.buffer, 0, 2 * sizeof(float))), "");
  ASSERT_EQ(take(api_->recording_replay(device_, recording)), "");
  EXPECT_EQ(download(sum, 1)[0], 14.5f);
  api_->recording_release(device_, recording);

  ASSERT_EQ(take(api_->recording_begin(device_)), "");
  EXPECT_NE(take(api_->copy_host_to_device(device_, new_a.data(), ta.buffer, 0, 2 * sizeof(float))), "");
  AccelRecording* refused = nullptr;
  EXPECT_NE(take(api_->recording_end(device_, &refused)), "");
  EXPECT_EQ(refused, nullptr);
  ASSERT_EQ(run(ACCEL_OP_ADD, {product, tc}, {sum}, nullptr), "");
  EXPECT_EQ(download(sum, 1)[0], 14.5f);
}

TEST_F(CudaGpuTest, ReduceSumAndSoftmax) {
  std::vector<float> x = ramp(12, 0.5f);
  AccelTensor tx = upload(x, {3, 4});
  AccelTensor sum = tensor(ACCEL_DTYPE_F32, {3}, sizeof(float));
  AccelReduceAttributes reduce{};
  reduce.struct_size = sizeof(reduce);
  reduce.num_axes = 1;
  reduce.axes[0] = 1;
  ASSERT_EQ(run(ACCEL_OP_REDUCE_SUM, {tx}, {sum}, &reduce), "");
  AccelTensor soft = tensor(ACCEL_DTYPE_F32, {3, 4}, sizeof(float));
  ASSERT_EQ(run(ACCEL_OP_SOFTMAX, {tx}, {soft}, nullptr), "");
  std::vector<float> sums = download(sum, 3), probabilities = download(soft, 12);
  for (int r = 0; r < 3; ++r) {
    float expected = 0.0f, total = 0.0f;
    for (int c = 0; c < 4; ++c) {
      expected += x[r * 4 + c];
      total += probabilities[r * 4 + c];
    }
    EXPECT_NEAR(sums[r], expected, 1e-5);
    EXPECT_NEAR(total, 1.0f, 1e-5);
  }
}

TEST_F(CudaGpuTest, RandomUniformMatchesPhilox) {
  AccelTensor ty = tensor(ACCEL_DTYPE_F32, {1000}, sizeof(float));
  AccelRandomAttributes attributes{sizeof(attributes), 42, 7, -1.0, 3.0};
  ASSERT_EQ(run(ACCEL_OP_RANDOM_UNIFORM, {}, {ty}, &attributes), "");
  std::vector<float> y = download(ty, 1000);
  for (uint64_t i = 0; i < 1000; ++i) {
    const float expected = static_cast<float>(
        -1.0 + 4.0 * accel_bits_to_unit_float(accel_philox_bits(42, 7 + i)));
    ASSERT_EQ(y[i], expected) << i;
  }
}

TEST_F(CudaGpuTest, LargeCopiesRoundTrip) {
  const size_t count = (20u << 20) / sizeof(float);  // more than two staging buffers
  std::vector<float> x = ramp(count, 1.0f);
  AccelTensor t = upload(x, {static_cast<int64_t>(count)});
  EXPECT_EQ(download(t, count), x);
}

TEST_F(CudaGpuTest, AllocationPastTheLimitFailsAndTheDeviceStaysUsable) {
  for (int32_t growth : {1, 0}) {
    SCOPED_TRACE(growth ? "memory growth" : "reserved");
    const uint64_t limit = 64u << 20;
    AccelDevice* device = open(limit, growth);
    ASSERT_NE(device, nullptr);
    AccelBuffer* buffer = nullptr;
    AccelStatus* status = api_->buffer_allocate(device, 2 * limit, &buffer);
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(status->code, ACCEL_STATUS_RESOURCE_EXHAUSTED);
    EXPECT_NE(status->message.find("requested"), std::string::npos) << status->message;
    EXPECT_NE(status->message.find("limit"), std::string::npos) << status->message;
    delete status;
    ASSERT_EQ(take(api_->buffer_allocate(device, 1u << 20, &buffer)), "");
    AccelMemoryInfo info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(take(api_->memory_info(device, &info)), "");
    EXPECT_GE(info.current_bytes, 1u << 20);
    EXPECT_GE(info.peak_bytes, info.current_bytes);
    EXPECT_EQ(info.limit_bytes, limit);
    api_->buffer_free(device, buffer);
    ASSERT_EQ(take(api_->memory_info(device, &info)), "");
    EXPECT_EQ(info.current_bytes, 0u);
    api_->device_close(device);
  }
}

TEST_F(CudaGpuTest, OpsReportDeviceTime) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_profiles.clear();
  }
  AccelTensor ty = tensor(ACCEL_DTYPE_F32, {256}, sizeof(float));
  AccelFillAttributes fill{sizeof(fill), 2.5};
  ASSERT_EQ(run(ACCEL_OP_FILL, {}, {ty}, &fill, 777), "");
  ASSERT_EQ(take(api_->synchronize(device_)), "");
  std::lock_guard<std::mutex> lock(g_mutex);
  ASSERT_FALSE(g_profiles.empty());
  EXPECT_EQ(g_profiles.back().sequence, 777u);
  EXPECT_EQ(g_profiles.back().time_source, ACCEL_TIME_DEVICE);
  EXPECT_GE(g_profiles.back().duration_seconds, 0.0);
}

TEST_F(CudaGpuTest, SupportsOpIsTruthful) {
  EXPECT_TRUE(api_->supports_op(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32));
  EXPECT_FALSE(api_->supports_op(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_I32));
  EXPECT_FALSE(api_->supports_op(device_, ACCEL_OP_DIV, ACCEL_DTYPE_I32));
  // An unsupported call is refused, not run wrongly.
  AccelTensor a = tensor(ACCEL_DTYPE_I32, {4}, 4), b = tensor(ACCEL_DTYPE_I32, {4}, 4);
  AccelTensor y = tensor(ACCEL_DTYPE_I32, {4}, 4);
  EXPECT_NE(run(ACCEL_OP_DIV, {a, b}, {y}, nullptr), "");
}

TEST_F(CudaGpuTest, Conv2dMatchesHostLoop) {
  const int64_t n = 1, h = 5, w = 4, c = 2, kh = 3, kw = 2, o = 3;
  // stride 2x1, asymmetric pads (top 1, bottom 0, left 0, right 1)
  AccelConv2dAttributes attributes{sizeof(attributes), 2, 1, 1, 1, 1, 0, 0, 1, 0, {}};
  const int64_t oh = (h + 1 - kh) / 2 + 1, ow = (w + 1 - kw) / 1 + 1;
  std::vector<float> x = ramp(n * h * w * c, 0.5f), f = ramp(kh * kw * c * o, 0.25f);
  AccelTensor tx = upload(x, {n, h, w, c}), tf = upload(f, {kh, kw, c, o});
  AccelTensor ty = tensor(ACCEL_DTYPE_F32, {n, oh, ow, o}, sizeof(float));
  ASSERT_EQ(run(ACCEL_OP_CONV2D, {tx, tf}, {ty}, &attributes), "");
  std::vector<float> y = download(ty, n * oh * ow * o);
  for (int64_t i = 0; i < oh; ++i) {
    for (int64_t j = 0; j < ow; ++j) {
      for (int64_t q = 0; q < o; ++q) {
        double expected = 0.0;
        for (int64_t r = 0; r < kh; ++r) {
          for (int64_t s = 0; s < kw; ++s) {
            const int64_t hi = i * 2 - 1 + r, wi = j - 0 + s;
            if (hi < 0 || hi >= h || wi < 0 || wi >= w) continue;
            for (int64_t p = 0; p < c; ++p) {
              expected += double(x[(hi * w + wi) * c + p]) * f[((r * kw + s) * c + p) * o + q];
            }
          }
        }
        EXPECT_NEAR(y[(i * ow + j) * o + q], expected, 1e-4) << i << "," << j << "," << q;
      }
    }
  }
}

// The CPU plugin's kernels (TensorFlow's semantics) on the same data, for
// the ops whose CUDA path depends on the geometry or dtype.
std::vector<float> on_host(AccelOp op, const std::vector<std::vector<float>>& inputs,
                           const std::vector<std::vector<int64_t>>& input_shapes,
                           const std::vector<int64_t>& output_shape, const void* attributes) {
  auto host_tensor = [](const std::vector<int64_t>& shape, const float* data) {
    accel::host_kernels::HostTensor t;
    t.rank = static_cast<int32_t>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) t.shape[d] = shape[d];
    t.data = const_cast<float*>(data);
    return t;
  };
  int64_t count = 1;
  for (int64_t dim : output_shape) count *= dim;
  std::vector<float> output(static_cast<size_t>(count));
  std::vector<accel::host_kernels::HostTensor> in;
  for (size_t i = 0; i < inputs.size(); ++i) in.push_back(host_tensor(input_shapes[i], inputs[i].data()));
  const accel::host_kernels::HostTensor out = host_tensor(output_shape, output.data());
  accel::host_kernels::execute(op, in, {&out, 1}, attributes);
  return output;
}

// Convolutions: forward, input gradient and filter gradient against the CPU
// plugin's kernels, with the algorithm cuDNN's timed search picks (the
// default) and with its heuristic pick (cuda.cudnn_autotune=0), on a shape
// where cuDNN has several algorithms to choose from and on a strided one with
// asymmetric pads. Each is run twice: the second call takes the cached choice.
TEST_F(CudaGpuTest, ConvolutionsMatchTheHostKernelsWithTimedAndHeuristicAlgorithms) {
  struct Geometry {
    const char* name;
    int64_t n, h, w, c, kh, kw, o;
    AccelConv2dAttributes attributes;
  };
  const Geometry geometries[] = {
      {"3x3 same", 4, 12, 12, 16, 3, 3, 24, {sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 1, 1, 1, 1, 0, {}}},
      {"3x3/2, pads 0 1", 2, 11, 10, 8, 3, 3, 16, {sizeof(AccelConv2dAttributes), 2, 2, 1, 1, 0, 1, 0, 1, 0, {}}},
  };
  for (const char* autotune : {"1", "0"}) {
    SCOPED_TRACE(std::string("cuda.cudnn_autotune=") + autotune);
    g_settings["cuda.cudnn_autotune"] = autotune;
    AccelDevice* device = open(0, 1);  // the setting is read when a device opens
    g_settings.erase("cuda.cudnn_autotune");
    ASSERT_NE(device, nullptr);
    std::swap(device_, device);
    for (const Geometry& g : geometries) {
      SCOPED_TRACE(g.name);
      const AccelConv2dAttributes& a = g.attributes;
      const int64_t oh = (g.h + a.pad_top + a.pad_bottom - g.kh) / a.stride_h + 1;
      const int64_t ow = (g.w + a.pad_left + a.pad_right - g.kw) / a.stride_w + 1;
      const std::vector<int64_t> x_shape{g.n, g.h, g.w, g.c}, f_shape{g.kh, g.kw, g.c, g.o};
      const std::vector<int64_t> y_shape{g.n, oh, ow, g.o};
      std::vector<float> x(static_cast<size_t>(g.n * g.h * g.w * g.c));
      std::vector<float> f(static_cast<size_t>(g.kh * g.kw * g.c * g.o));
      std::vector<float> dy(static_cast<size_t>(g.n * oh * ow * g.o));
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
      for (size_t i = 0; i < f.size(); ++i) f[i] = std::cos(0.11f * static_cast<float>(i));
      for (size_t i = 0; i < dy.size(); ++i) dy[i] = std::sin(0.23f * static_cast<float>(i) + 1.0f);
      AccelTensor tx = upload(x, x_shape), tf = upload(f, f_shape), tdy = upload(dy, y_shape);
      struct Pass {
        AccelOp op;
        std::vector<float> first, second;
        std::vector<int64_t> first_shape, second_shape, output_shape;
      };
      const Pass passes[] = {{ACCEL_OP_CONV2D, x, f, x_shape, f_shape, y_shape},
                             {ACCEL_OP_CONV2D_BACKWARD_INPUT, dy, f, y_shape, f_shape, x_shape},
                             {ACCEL_OP_CONV2D_BACKWARD_FILTER, x, dy, x_shape, y_shape, f_shape}};
      for (const Pass& pass : passes) {
        SCOPED_TRACE(pass.op);
        const std::vector<float> want =
            on_host(pass.op, {pass.first, pass.second}, {pass.first_shape, pass.second_shape}, pass.output_shape, &a);
        AccelTensor first = pass.op == ACCEL_OP_CONV2D_BACKWARD_INPUT ? tdy : tx;
        AccelTensor second = pass.op == ACCEL_OP_CONV2D_BACKWARD_FILTER ? tdy : tf;
        // Sums of up to 576 products of magnitude <= 1, in cuDNN's order: FFT
        // and Winograd algorithms round more than a direct sum, and an output
        // near zero may be a sum of large terms, so the bound scales with the
        // output's largest magnitude. A wrong layout or algorithm is off by O(1).
        double largest = 1.0;
        for (float value : want) largest = std::max(largest, std::fabs(double(value)));
        const double tolerance = 1e-4 * largest;
        for (int call = 0; call < 2; ++call) {
          AccelTensor out = tensor(ACCEL_DTYPE_F32, pass.output_shape, sizeof(float));
          ASSERT_EQ(run(pass.op, {first, second}, {out}, &a), "");
          const std::vector<float> got = download(out, want.size());
          for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], tolerance) << "call " << call << " at " << i;
          }
        }
      }
    }
    std::swap(device_, device);
    for (auto& [owner, buffer] : buffers_) {
      if (owner == device) api_->buffer_free(owner, buffer);
    }
    std::erase_if(buffers_, [device](const auto& entry) { return entry.first == device; });
    api_->device_close(device);
  }
}

// A timed search synchronizes, which a CUDA graph capture forbids: a shape
// first seen inside a recording takes cuDNN's heuristic pick there, and the
// first eager call of that shape searches and caches.
TEST_F(CudaGpuTest, AConvolutionFirstSeenWhileRecordingIsCapturedWithoutATimedSearch) {
  AccelConv2dAttributes attributes{sizeof(attributes), 1, 1, 1, 1, 0, 0, 0, 0, 0, {}};
  AccelTensor warm_x = upload(ramp(1 * 3 * 3 * 2, 0.5f), {1, 3, 3, 2}), warm_f = upload(ramp(2, 0.5f), {1, 1, 2, 1});
  AccelTensor warm_y = tensor(ACCEL_DTYPE_F32, {1, 3, 3, 1}, sizeof(float));
  ASSERT_EQ(run(ACCEL_OP_CONV2D, {warm_x, warm_f}, {warm_y}, &attributes), "");  // cuDNN loaded outside the capture

  const std::vector<int64_t> x_shape{2, 6, 5, 4}, f_shape{1, 1, 4, 3}, y_shape{2, 6, 5, 3};
  const std::vector<float> x = ramp(2 * 6 * 5 * 4, 0.25f), f = ramp(4 * 3, 0.5f);
  AccelTensor tx = upload(x, x_shape), tf = upload(f, f_shape);
  AccelTensor ty = tensor(ACCEL_DTYPE_F32, y_shape, sizeof(float));
  const std::vector<float> want = on_host(ACCEL_OP_CONV2D, {x, f}, {x_shape, f_shape}, y_shape, &attributes);

  ASSERT_EQ(take(api_->recording_begin(device_)), "");
  ASSERT_EQ(run(ACCEL_OP_CONV2D, {tx, tf}, {ty}, &attributes), "");
  AccelRecording* recording = nullptr;
  ASSERT_EQ(take(api_->recording_end(device_, &recording)), "");
  ASSERT_NE(recording, nullptr);
  ASSERT_EQ(take(api_->recording_replay(device_, recording)), "");
  std::vector<float> got = download(ty, want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << "replayed, at " << i;
  api_->recording_release(device_, recording);

  AccelTensor eager = tensor(ACCEL_DTYPE_F32, y_shape, sizeof(float));
  ASSERT_EQ(run(ACCEL_OP_CONV2D, {tx, tf}, {eager}, &attributes), "");
  got = download(eager, want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << "eager, at " << i;
}

// A setting the plugin cannot read fails the device's opening with a message
// that names it, instead of running with a guess.
TEST_F(CudaGpuTest, AnUnreadableAutotuneSettingFailsTheDeviceOpening) {
  g_settings["cuda.cudnn_autotune"] = "sometimes";
  AccelDeviceOptions options{};
  options.struct_size = sizeof(options);
  options.logical_count = 1;
  AccelDevice* device = nullptr;
  const std::string error = take(api_->device_open(context_, &options, &device));
  g_settings.erase("cuda.cudnn_autotune");
  EXPECT_EQ(device, nullptr);
  EXPECT_NE(error.find("cuda.cudnn_autotune"), std::string::npos) << error;
  EXPECT_EQ(error.rfind(std::to_string(static_cast<int>(ACCEL_STATUS_INVALID_ARGUMENT)) + ":", 0), 0u) << error;
}

// Pooling runs on cuDNN for symmetric padding and on the plugin's kernels for
// TensorFlow's SAME with one more row / column at the end; both must agree with
// the CPU. The max gradient's ties (all-zero windows after relu) go to the
// window's first element, as on the CPU.
TEST_F(CudaGpuTest, PoolingMatchesTheHostKernels) {
  struct Geometry {
    const char* name;
    int64_t h, w;
    AccelPoolAttributes attributes;
  };
  const Geometry geometries[] = {
      {"valid 2x2/2 (cuDNN)", 8, 6, {sizeof(AccelPoolAttributes), 2, 2, 2, 2, 0, 0, 0, 0}},
      {"pads 1 3x3/2 (cuDNN)", 7, 9, {sizeof(AccelPoolAttributes), 3, 3, 2, 2, 1, 1, 1, 1}},
      {"same, end pads (kernels)", 7, 9, {sizeof(AccelPoolAttributes), 3, 2, 2, 2, 1, 1, 0, 1}},
  };
  const int64_t n = 2, c = 3;
  for (const Geometry& g : geometries) {
    SCOPED_TRACE(g.name);
    const AccelPoolAttributes& a = g.attributes;
    const int64_t oh = (g.h + a.pad_top + a.pad_bottom - a.window_h) / a.stride_h + 1;
    const int64_t ow = (g.w + a.pad_left + a.pad_right - a.window_w) / a.stride_w + 1;
    const std::vector<int64_t> x_shape{n, g.h, g.w, c}, y_shape{n, oh, ow, c};
    std::vector<float> x(static_cast<size_t>(n * g.h * g.w * c));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
    std::vector<float> dy = ramp(static_cast<size_t>(n * oh * ow * c), 0.125f);
    // Distinct values; all ties (relu's zeros); all -inf (the max must stay -inf, as on the CPU).
    const std::vector<float> zeros(x.size(), 0.0f), minus_infinity(x.size(), -INFINITY);
    for (const std::vector<float>& input : {x, zeros, minus_infinity}) {
      SCOPED_TRACE(input[1] == 0.0f ? "all ties" : std::isinf(input[1]) ? "all -inf" : "distinct");
      AccelTensor tx = upload(input, x_shape), tdy = upload(dy, y_shape);
      for (AccelOp op : {ACCEL_OP_MAX_POOL, ACCEL_OP_AVG_POOL}) {
        AccelTensor ty = tensor(ACCEL_DTYPE_F32, y_shape, sizeof(float));
        ASSERT_EQ(run(op, {tx}, {ty}, &a), "");
        const std::vector<float> want = on_host(op, {input}, {x_shape}, y_shape, &a);
        const std::vector<float> got = download(ty, want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          if (got[i] == want[i]) continue;  // equal infinities match; ASSERT_NEAR would see inf - inf
          // cuDNN's max starts from the lowest finite float, so a window of only -inf gives
          // that (as TensorFlow and PyTorch on GPU); docs/cuda-plugin.md says so.
          if (want[i] == -INFINITY && got[i] == std::numeric_limits<float>::lowest()) continue;
          ASSERT_NEAR(got[i], want[i], 1e-6) << op << " at " << i;
        }
      }
      AccelTensor tdx = tensor(ACCEL_DTYPE_F32, x_shape, sizeof(float));
      ASSERT_EQ(run(ACCEL_OP_MAX_POOL_BACKWARD, {tx, tdy}, {tdx}, &a), "");
      std::vector<float> want = on_host(ACCEL_OP_MAX_POOL_BACKWARD, {input, dy}, {x_shape, y_shape}, x_shape, &a);
      std::vector<float> got = download(tdx, want.size());
      for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << "max gradient at " << i;
      ASSERT_EQ(run(ACCEL_OP_AVG_POOL_BACKWARD, {tdy}, {tdx}, &a), "");
      want = on_host(ACCEL_OP_AVG_POOL_BACKWARD, {dy}, {y_shape}, x_shape, &a);
      got = download(tdx, want.size());
      for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << "average gradient at " << i;
    }
  }
}

// Softmax and log-softmax (cuDNN for float32) against the CPU, on rows short
// and long, with values large enough that an unshifted exp would overflow.
TEST_F(CudaGpuTest, SoftmaxMatchesTheHostKernels) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{5, 10}, {3, 2, 1000}, {1, 1}}) {
    int64_t count = 1;
    for (int64_t dim : shape) count *= dim;
    std::vector<float> x(static_cast<size_t>(count));
    for (size_t i = 0; i < x.size(); ++i) x[i] = 100.0f * std::sin(0.61f * static_cast<float>(i));
    AccelTensor tx = upload(x, shape);
    for (AccelOp op : {ACCEL_OP_SOFTMAX, ACCEL_OP_LOG_SOFTMAX}) {
      AccelTensor ty = tensor(ACCEL_DTYPE_F32, shape, sizeof(float));
      ASSERT_EQ(run(op, {tx}, {ty}, nullptr), "");
      const std::vector<float> want = on_host(op, {x}, {shape}, shape, nullptr);
      const std::vector<float> got = download(ty, want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_TRUE(std::isfinite(got[i])) << op << " at " << i;
        ASSERT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i]))) << op << " at " << i;
      }
    }
  }
}

// A one-rank clique (the most one GPU can hold: NCCL refuses two ranks on one
// GPU): the all-reduce runs on the device's stream and leaves the values.
TEST_F(CudaGpuTest, NcclOneRankCliqueAllReducesInPlace) {
  const auto* nccl = static_cast<const AccelNcclExtension*>(api_->get_extension(context_, ACCEL_NCCL_EXTENSION_NAME));
  ASSERT_NE(nccl, nullptr);
  g_math_op_ran = true;
  uint8_t id[ACCEL_NCCL_UNIQUE_ID_BYTES] = {};
  ASSERT_EQ(take(nccl->unique_id(context_, id)), "");
  AccelNcclCommunicator* communicator = nullptr;
  ASSERT_EQ(take(nccl->communicators_create(context_, &device_, 1, id, 0, 1, &communicator)), "");
  const std::vector<float> values = ramp(1000, 0.5f);
  AccelTensor t = upload(values, {1000});
  const uint64_t offset = 0;
  ASSERT_EQ(take(nccl->all_reduce(&communicator, 1, &t.buffer, &offset, values.size(), ACCEL_DTYPE_F32,
                                  ACCEL_NCCL_SUM)),
            "");
  EXPECT_EQ(download(t, values.size()), values);
  const uint64_t past_end = 8;
  EXPECT_NE(take(nccl->all_reduce(&communicator, 1, &t.buffer, &past_end, values.size(), ACCEL_DTYPE_F32,
                                  ACCEL_NCCL_SUM)),
            "");
  EXPECT_NE(take(nccl->all_reduce(&communicator, 1, &t.buffer, &offset, 4, ACCEL_DTYPE_BOOL, ACCEL_NCCL_SUM)),
            "");
  nccl->communicator_destroy(communicator);
}

// ------------------------------------------ plugin API 1.2: fusions and epilogues
// Against the CPU plugin's kernels, for what the conformance suite's float32
// cases leave out: half precision, int64, broadcasting, NaN in max, an output
// written over its input, the errors, and the bf16 matmul / padded backprop
// epilogues.

class CudaFusedTest : public CudaGpuTest {
 protected:
  template <typename T>
  AccelTensor upload_as(AccelDType dtype, const std::vector<T>& values, std::vector<int64_t> shape) {
    AccelTensor t = tensor(dtype, std::move(shape), sizeof(T));
    EXPECT_EQ(take(api_->copy_host_to_device(device_, values.data(), t.buffer, 0, values.size() * sizeof(T))), "");
    return t;
  }
  template <typename T>
  std::vector<T> download_as(const AccelTensor& t, size_t count) {
    std::vector<T> values(count);
    EXPECT_EQ(take(api_->copy_device_to_host(device_, t.buffer, 0, values.data(), count * sizeof(T))), "");
    return values;
  }
};

accel::host_kernels::HostTensor host_tensor_of(AccelDType dtype, const std::vector<int64_t>& shape, void* data) {
  accel::host_kernels::HostTensor t;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) t.shape[d] = shape[d];
  t.data = data;
  return t;
}

AccelFusedInstruction load_instruction(int32_t input, AccelDType dtype) {
  return {ACCEL_FUSED_LOAD, ACCEL_OP_MATMUL, dtype, {input, 0, 0}, 0.0};
}
AccelFusedInstruction constant_instruction(double value, AccelDType dtype) {
  return {ACCEL_FUSED_CONSTANT, ACCEL_OP_MATMUL, dtype, {0, 0, 0}, value};
}
AccelFusedInstruction op_instruction(AccelOp op, AccelDType dtype, int32_t a, int32_t b = 0, int32_t c = 0) {
  return {ACCEL_FUSED_OP, op, dtype, {a, b, c}, 0.0};
}
AccelFusedOutput fused_output(int32_t value, AccelOp reduce_op = static_cast<AccelOp>(0),
                              std::vector<int32_t> axes = {}, int32_t keep_dims = 0) {
  AccelFusedOutput output{value, reduce_op, static_cast<int32_t>(axes.size()), {}, keep_dims};
  for (size_t k = 0; k < axes.size(); ++k) output.axes[k] = axes[k];
  return output;
}
AccelFusedElementwiseAttributes fused_program(std::vector<int64_t> shape,
                                              const std::vector<AccelFusedInstruction>& instructions,
                                              const std::vector<AccelFusedOutput>& outputs) {
  AccelFusedElementwiseAttributes program{};
  program.struct_size = sizeof(program);
  program.rank = static_cast<int32_t>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) program.shape[d] = shape[d];
  program.num_instructions = static_cast<int32_t>(instructions.size());
  program.instructions = instructions.data();
  program.num_outputs = static_cast<int32_t>(outputs.size());
  program.outputs = outputs.data();
  return program;
}

bool same_or_both_nan(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

TEST_F(CudaFusedTest, ClaimsEveryDtypeAndEveryEpilogueOfItsPlainOps) {
  for (int32_t dtype = 0; dtype < ACCEL_DTYPE_COUNT; ++dtype) {
    EXPECT_TRUE(api_->supports_op(device_, ACCEL_OP_FUSED_ELEMENTWISE, static_cast<AccelDType>(dtype))) << dtype;
  }
  const int32_t all = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK;
  for (AccelOp activation : {ACCEL_OP_RELU, ACCEL_OP_SIGMOID, ACCEL_OP_TANH}) {
    EXPECT_TRUE(api_->supports_epilogue(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_BF16, all, activation));
    EXPECT_TRUE(api_->supports_epilogue(device_, ACCEL_OP_CONV2D, ACCEL_DTYPE_F32, all, activation));
    EXPECT_TRUE(api_->supports_epilogue(device_, ACCEL_OP_CONV2D_BACKWARD_INPUT, ACCEL_DTYPE_F32, all, activation));
  }
  EXPECT_FALSE(api_->supports_epilogue(device_, ACCEL_OP_CONV2D, ACCEL_DTYPE_BF16, ACCEL_EPILOGUE_BIAS, ACCEL_OP_RELU));
  EXPECT_FALSE(api_->supports_epilogue(device_, ACCEL_OP_CONV2D_BACKWARD_FILTER, ACCEL_DTYPE_F32, ACCEL_EPILOGUE_BIAS,
                                       ACCEL_OP_RELU));
  EXPECT_FALSE(api_->supports_epilogue(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, ACCEL_EPILOGUE_ACTIVATION,
                                       ACCEL_OP_EXP));
  EXPECT_FALSE(api_->supports_epilogue(device_, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, 8, ACCEL_OP_RELU));
}

// bf16 values with a broadcast bias, a float32 [6,1] scale, CAST, a comparison,
// SELECT, int64, and reductions of four kinds over a NaN (max keeps it). No
// transcendental op, so every value is the host's bit for bit.
TEST_F(CudaFusedTest, HalfPrecisionProgramWithReductionsMatchesTheHostKernels) {
  const AccelDType bf16 = ACCEL_DTYPE_BF16, f32 = ACCEL_DTYPE_F32, i64 = ACCEL_DTYPE_I64;
  const std::vector<int64_t> shape{6, 40};
  std::vector<uint16_t> x(240), bias(40);
  std::vector<float> scale(6);
  for (size_t i = 0; i < x.size(); ++i) x[i] = accel::sdk::float_to_bf16(std::sin(0.3f * static_cast<float>(i)));
  x[5] = accel::sdk::float_to_bf16(NAN);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = accel::sdk::float_to_bf16(0.05f * static_cast<float>(i) - 1.0f);
  for (size_t i = 0; i < scale.size(); ++i) scale[i] = 1.5f - 0.5f * static_cast<float>(i);
  const std::vector<AccelFusedInstruction> instructions{
      load_instruction(0, bf16), load_instruction(1, bf16), op_instruction(ACCEL_OP_ADD, bf16, 0, 1),
      op_instruction(ACCEL_OP_SQUARE, bf16, 2), load_instruction(2, f32), op_instruction(ACCEL_OP_CAST, f32, 3),
      op_instruction(ACCEL_OP_MUL, f32, 5, 4), constant_instruction(0.25, f32),
      op_instruction(ACCEL_OP_GREATER, ACCEL_DTYPE_BOOL, 6, 7), op_instruction(ACCEL_OP_SELECT, f32, 8, 6, 7),
      constant_instruction(100.0, f32), op_instruction(ACCEL_OP_MUL, f32, 9, 10),
      op_instruction(ACCEL_OP_CAST, i64, 11), op_instruction(ACCEL_OP_EXP, f32, 6)};  // the last one is dead
  const std::vector<AccelFusedOutput> outputs{
      fused_output(3), fused_output(12), fused_output(9, ACCEL_OP_REDUCE_SUM, {0}),
      fused_output(3, ACCEL_OP_REDUCE_MAX, {1}, 1), fused_output(12, ACCEL_OP_REDUCE_MIN, {0, 1}),
      fused_output(6, ACCEL_OP_REDUCE_MEAN, {1})};
  const AccelFusedElementwiseAttributes program = fused_program(shape, instructions, outputs);
  const std::vector<std::vector<int64_t>> output_shapes{shape, shape, {40}, {6, 1}, {}, {6}};
  const std::vector<AccelDType> output_dtypes{bf16, i64, f32, bf16, i64, f32};

  std::vector<AccelTensor> device_outputs;
  for (size_t j = 0; j < outputs.size(); ++j) {
    device_outputs.push_back(tensor(output_dtypes[j], output_shapes[j], accel::sdk::dtype_size(output_dtypes[j])));
  }
  ASSERT_EQ(run(ACCEL_OP_FUSED_ELEMENTWISE,
                {upload_as(bf16, x, shape), upload_as(bf16, bias, {40}), upload_as(f32, scale, {6, 1})},
                device_outputs, &program),
            "");

  std::vector<uint16_t> want_y(240), want_max(6);
  std::vector<int64_t> want_i(240), want_min(1);
  std::vector<float> want_sum(40), want_mean(6);
  const std::vector<accel::host_kernels::HostTensor> host_inputs{
      host_tensor_of(bf16, shape, x.data()), host_tensor_of(bf16, {40}, bias.data()),
      host_tensor_of(f32, {6, 1}, scale.data())};
  const std::vector<accel::host_kernels::HostTensor> host_outputs{
      host_tensor_of(bf16, shape, want_y.data()), host_tensor_of(i64, shape, want_i.data()),
      host_tensor_of(f32, {40}, want_sum.data()), host_tensor_of(bf16, {6, 1}, want_max.data()),
      host_tensor_of(i64, {}, want_min.data()), host_tensor_of(f32, {6}, want_mean.data())};
  accel::host_kernels::execute(ACCEL_OP_FUSED_ELEMENTWISE, host_inputs, host_outputs, &program);

  const std::vector<uint16_t> y = download_as<uint16_t>(device_outputs[0], 240);
  for (size_t i = 0; i < y.size(); ++i) {
    ASSERT_TRUE(same_or_both_nan(accel::sdk::bf16_to_float(y[i]), accel::sdk::bf16_to_float(want_y[i]))) << i;
  }
  EXPECT_EQ(download_as<int64_t>(device_outputs[1], 240), want_i);
  const std::vector<float> sum = download_as<float>(device_outputs[2], 40);
  for (size_t i = 0; i < sum.size(); ++i) EXPECT_NEAR(sum[i], want_sum[i], 1e-5) << i;
  const std::vector<uint16_t> max = download_as<uint16_t>(device_outputs[3], 6);
  for (size_t i = 0; i < max.size(); ++i) {
    EXPECT_TRUE(same_or_both_nan(accel::sdk::bf16_to_float(max[i]), accel::sdk::bf16_to_float(want_max[i]))) << i;
  }
  EXPECT_TRUE(std::isnan(accel::sdk::bf16_to_float(max[0])));  // the NaN of x[5] wins
  EXPECT_EQ(download_as<int64_t>(device_outputs[4], 1), want_min);
  const std::vector<float> mean = download_as<float>(device_outputs[5], 6);
  for (size_t i = 0; i < mean.size(); ++i) {
    EXPECT_TRUE(same_or_both_nan(mean[i], want_mean[i]) || std::fabs(mean[i] - want_mean[i]) < 1e-6) << i;
  }
}

// The buffer planner writes a fusion's output over an input it no longer needs.
TEST_F(CudaFusedTest, OutputWrittenOverItsInputReadsTheOldValues) {
  const int64_t count = 100000;
  const std::vector<float> x = ramp(count, 0.125f);
  AccelTensor tx = upload(x, {count});
  AccelTensor total = tensor(ACCEL_DTYPE_F32, {}, sizeof(float));
  // y = x * 2 + x (in place); sum(x * 2 + x)
  const std::vector<AccelFusedInstruction> instructions{
      load_instruction(0, ACCEL_DTYPE_F32), constant_instruction(2.0, ACCEL_DTYPE_F32),
      op_instruction(ACCEL_OP_MUL, ACCEL_DTYPE_F32, 0, 1), op_instruction(ACCEL_OP_ADD, ACCEL_DTYPE_F32, 2, 0)};
  const std::vector<AccelFusedOutput> outputs{fused_output(3), fused_output(3, ACCEL_OP_REDUCE_SUM, {0})};
  const AccelFusedElementwiseAttributes program = fused_program({count}, instructions, outputs);
  ASSERT_EQ(run(ACCEL_OP_FUSED_ELEMENTWISE, {tx}, {tx, total}, &program), "");
  const std::vector<float> y = download(tx, count);
  double expected_total = 0.0, magnitude = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    ASSERT_EQ(y[i], x[i] * 2.0f + x[i]) << i;
    expected_total += y[i];
    magnitude += std::fabs(y[i]);
  }
  EXPECT_NEAR(download(total, 1)[0], expected_total, 1e-6 * magnitude);
}

TEST_F(CudaFusedTest, BrokenProgramsAreInvalidArgumentsNamingTheInstruction) {
  AccelTensor a = upload_as<int32_t>(ACCEL_DTYPE_I32, {1, 2, 3, 4}, {4});
  AccelTensor b = upload_as<int32_t>(ACCEL_DTYPE_I32, {1, 0, 1, 1}, {4});
  AccelTensor y = tensor(ACCEL_DTYPE_I32, {4}, sizeof(int32_t));
  const std::vector<AccelFusedInstruction> divide{load_instruction(0, ACCEL_DTYPE_I32),
                                                  load_instruction(1, ACCEL_DTYPE_I32),
                                                  op_instruction(ACCEL_OP_DIV, ACCEL_DTYPE_I32, 0, 1)};
  const std::vector<AccelFusedOutput> stored{fused_output(2)};
  AccelFusedElementwiseAttributes program = fused_program({4}, divide, stored);
  std::string error = run(ACCEL_OP_FUSED_ELEMENTWISE, {a, b}, {y}, &program);
  EXPECT_EQ(error.rfind("1: FUSED_ELEMENTWISE(int32[4], int32[4] -> int32[4]): ", 0), 0u) << error;
  EXPECT_NE(error.find("instruction 2: integer division by zero"), std::string::npos) << error;

  const std::vector<AccelFusedInstruction> forward_reference{load_instruction(0, ACCEL_DTYPE_I32),
                                                             op_instruction(ACCEL_OP_NEG, ACCEL_DTYPE_I32, 1)};
  const std::vector<AccelFusedOutput> second{fused_output(1)};
  program = fused_program({4}, forward_reference, second);
  error = run(ACCEL_OP_FUSED_ELEMENTWISE, {a}, {y}, &program);
  EXPECT_NE(error.find("instruction 1: NEG operand 0 is value 1; an operand must be an earlier instruction (0 to 0)"),
            std::string::npos)
      << error;
  // An output overlapping an input other than as the same tensor.
  AccelTensor shifted = y;
  shifted.buffer = a.buffer;
  shifted.shape[0] = 2;
  shifted.byte_offset = 8;
  const std::vector<AccelFusedInstruction> copy{load_instruction(0, ACCEL_DTYPE_I32)};
  const std::vector<AccelFusedOutput> first{fused_output(0)};
  program = fused_program({2}, copy, first);
  AccelTensor head = a;
  head.shape[0] = 2;
  head.byte_offset = 4;
  error = run(ACCEL_OP_FUSED_ELEMENTWISE, {head}, {shifted}, &program);
  EXPECT_NE(error.find("overlaps input 0"), std::string::npos) << error;
}

// bf16 GEMM into float32 scratch, bias, sigmoid and mask, rounded once: as the
// host kernels stage it, to the rounding of cuBLAS's own summation order.
TEST_F(CudaFusedTest, Bf16MatmulEpilogueMatchesTheHostKernels) {
  const int64_t m = 9, k = 33, n = 20;
  auto bf16_ramp = [](size_t count, float scale) {
    std::vector<uint16_t> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = accel::sdk::float_to_bf16(scale * std::cos(0.7f * static_cast<float>(i)));
    return values;
  };
  const std::vector<uint16_t> a = bf16_ramp(m * k, 0.5f), b = bf16_ramp(k * n, 0.25f), bias = bf16_ramp(n, 1.0f),
                              mask = bf16_ramp(m * n, 1.0f);
  const int32_t flags = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK;
  const AccelMatmulAttributes attributes{sizeof(attributes), 0, 0, flags, ACCEL_OP_SIGMOID};
  AccelTensor ty = tensor(ACCEL_DTYPE_BF16, {m, n}, sizeof(uint16_t));
  g_math_op_ran = true;
  ASSERT_EQ(run(ACCEL_OP_MATMUL,
                {upload_as(ACCEL_DTYPE_BF16, a, {m, k}), upload_as(ACCEL_DTYPE_BF16, b, {k, n}),
                 upload_as(ACCEL_DTYPE_BF16, bias, {n}), upload_as(ACCEL_DTYPE_BF16, mask, {m, n})},
                {ty}, &attributes),
            "");
  std::vector<uint16_t> want(m * n);
  auto bf16_tensor = [](const std::vector<int64_t>& shape, const std::vector<uint16_t>& data) {
    return host_tensor_of(ACCEL_DTYPE_BF16, shape, const_cast<uint16_t*>(data.data()));
  };
  const std::vector<accel::host_kernels::HostTensor> in{bf16_tensor({m, k}, a), bf16_tensor({k, n}, b),
                                                         bf16_tensor({n}, bias), bf16_tensor({m, n}, mask)};
  const accel::host_kernels::HostTensor out = host_tensor_of(ACCEL_DTYPE_BF16, {m, n}, want.data());
  accel::host_kernels::execute(ACCEL_OP_MATMUL, in, {&out, 1}, &attributes);
  const std::vector<uint16_t> got = download_as<uint16_t>(ty, want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const float expected = accel::sdk::bf16_to_float(want[i]);
    ASSERT_NEAR(accel::sdk::bf16_to_float(got[i]), expected, std::fabs(expected) / 128 + 1e-6) << i;
  }
}

// The input gradient through the padded-and-cropped path, with the whole epilogue.
TEST_F(CudaFusedTest, Conv2dBackwardInputEpilogueMatchesTheHostKernels) {
  const int64_t n = 2, h = 5, w = 4, c = 3, kh = 3, kw = 2, o = 4;
  const int32_t flags = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION | ACCEL_EPILOGUE_RELU_MASK;
  const AccelConv2dAttributes attributes{sizeof(attributes), 2, 1, 1, 1, 1, 0, 0, 1, flags, ACCEL_OP_TANH};
  const int64_t oh = (h + 1 - kh) / 2 + 1, ow = (w + 1 - kw) / 1 + 1;
  const std::vector<int64_t> dy_shape{n, oh, ow, o}, f_shape{kh, kw, c, o}, x_shape{n, h, w, c};
  const std::vector<float> dy = ramp(n * oh * ow * o, 0.25f), f = ramp(kh * kw * c * o, 0.125f),
                           bias = ramp(c, 0.5f), mask = ramp(n * h * w * c, 0.75f);
  AccelTensor tdx = tensor(ACCEL_DTYPE_F32, x_shape, sizeof(float));
  g_math_op_ran = true;
  ASSERT_EQ(run(ACCEL_OP_CONV2D_BACKWARD_INPUT,
                {upload(dy, dy_shape), upload(f, f_shape), upload(bias, {c}), upload(mask, x_shape)}, {tdx},
                &attributes),
            "");
  const std::vector<float> want =
      on_host(ACCEL_OP_CONV2D_BACKWARD_INPUT, {dy, f, bias, mask}, {dy_shape, f_shape, {c}, x_shape}, x_shape,
              &attributes);
  const std::vector<float> got = download(tdx, want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << i;
}

}  // namespace
