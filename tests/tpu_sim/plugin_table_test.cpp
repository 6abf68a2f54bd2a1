// The TPU emulator plugin through its C table, loaded with dlopen and driven
// by a test host whose settings each test chooses: the "accel.tpu_sim.v1"
// extension (per-core totals, reset, all-reduce, system JSON), the
// cycle-accurate mode against the analytical one, the SCALE-Sim convention,
// HBM accounting across logical devices, the fused kernels of compiled
// programs (claimed, run and timed), on-chip residency through execute
// (tpu_sim.vmem_residency), and bad settings.
#include <accel/plugin/accel_plugin.h>
#include <accel/plugin/tpu_sim_extension.h>

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <initializer_list>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "timing/interconnect_model.hpp"
#include "timing/op_timing.hpp"
#include "timing/presets.hpp"

// The host owns statuses; this test is the host.
struct AccelStatus {
  AccelStatusCode code;
  std::string message;
};

namespace {

namespace tpu = accel::tpu;

std::map<std::string, std::string> g_settings;
std::vector<AccelOpProfile> g_reports;
std::vector<std::string> g_details;  // each report's detail_json, which lives only during report_op

AccelStatus* make_status(AccelStatusCode code, const char* message) { return new AccelStatus{code, message}; }
void log_message(AccelLogLevel, const char*, const char*) {}
void record_op(void*, const AccelOpProfile* profile) {
  g_reports.push_back(*profile);
  g_details.emplace_back(profile->detail_json != nullptr ? profile->detail_json : "");
}
const char* setting(const char* key) {
  auto found = g_settings.find(key);
  return found == g_settings.end() ? nullptr : found->second.c_str();
}

const AccelHostApi kHost = {sizeof(AccelHostApi), ACCEL_PLUGIN_API_MAJOR, ACCEL_PLUGIN_API_MINOR,
                            make_status, log_message, record_op, setting};

AccelStatusCode take(AccelStatus* status, std::string* message = nullptr) {
  if (status == nullptr) return ACCEL_STATUS_OK;
  const AccelStatusCode code = status->code;
  if (message) *message = status->message;
  delete status;
  return code;
}

const AccelPluginApi* plugin_api() {
  static const AccelPluginApi* api = [] {
    void* handle = dlopen(ACCEL_TPU_SIM_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);  // never closed
    EXPECT_NE(handle, nullptr) << dlerror();
    auto entry = reinterpret_cast<AccelGetPluginApiFunction>(dlsym(handle, ACCEL_PLUGIN_ENTRY_POINT_NAME));
    return entry();
  }();
  return api;
}

// One initialized plugin context under the given settings, one logical device per core asked for.
class EmulatedSystem {
 public:
  EmulatedSystem(std::initializer_list<std::pair<const std::string, std::string>> settings) {
    g_settings = settings;
    status_ = take(api()->initialize(&kHost, &context_), &message_);
    g_settings.clear();
    // The plugin API has no way to destroy a context (plugins live as long as
    // the process); keep each one reachable, as the runtime does.
    static auto* contexts = new std::vector<AccelPluginContext*>();  // never destroyed
    contexts->push_back(context_);
  }
  EmulatedSystem(const EmulatedSystem&) = delete;
  EmulatedSystem& operator=(const EmulatedSystem&) = delete;
  ~EmulatedSystem() {
    for (AccelDevice* device : devices_) api()->device_close(device);
  }
  const AccelPluginApi* api() const { return plugin_api(); }
  AccelPluginContext* context() const { return context_; }
  AccelStatusCode status() const { return status_; }
  const std::string& message() const { return message_; }
  const AccelTpuSimExtension& extension() const {
    return *static_cast<const AccelTpuSimExtension*>(api()->get_extension(context_, ACCEL_TPU_SIM_EXTENSION_NAME));
  }
  AccelDevice* open(int32_t physical_index) {
    AccelDeviceOptions options{};
    options.struct_size = sizeof(options);
    options.physical_index = physical_index;
    options.logical_count = 1;
    AccelDevice* device = nullptr;
    EXPECT_EQ(take(api()->device_open(context_, &options, &device)), ACCEL_STATUS_OK);
    devices_.push_back(device);
    return device;
  }

 private:
  AccelPluginContext* context_ = nullptr;
  AccelStatusCode status_ = ACCEL_STATUS_OK;
  std::string message_;
  std::vector<AccelDevice*> devices_;
};

// A float32 tensor of `shape` in a fresh buffer of `device`.
struct DeviceTensor {
  AccelTensor tensor{};
  AccelBuffer* buffer = nullptr;
};

DeviceTensor allocate(const EmulatedSystem& system, AccelDevice* device, std::vector<int64_t> shape) {
  DeviceTensor result;
  result.tensor.struct_size = sizeof(AccelTensor);
  result.tensor.dtype = ACCEL_DTYPE_F32;
  result.tensor.rank = static_cast<int32_t>(shape.size());
  uint64_t count = 1;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    result.tensor.shape[axis] = shape[axis];
    count *= static_cast<uint64_t>(shape[axis]);
  }
  EXPECT_EQ(take(system.api()->buffer_allocate(device, count * 4, &result.buffer)), ACCEL_STATUS_OK);
  result.tensor.buffer = result.buffer;
  std::vector<float> zeros(count, 0.5f);
  EXPECT_EQ(take(system.api()->copy_host_to_device(device, zeros.data(), result.buffer, 0, count * 4)), ACCEL_STATUS_OK);
  return result;
}

// Runs y[m, n] = a[m, k] . b[k, n] on `device`; returns the status code.
AccelStatusCode run_matmul(const EmulatedSystem& system, AccelDevice* device, int64_t m, int64_t n, int64_t k,
                           std::string* message = nullptr) {
  DeviceTensor a = allocate(system, device, {m, k}), b = allocate(system, device, {k, n}), y = allocate(system, device, {m, n});
  const AccelTensor inputs[] = {a.tensor, b.tensor};
  AccelOpCall call{};
  call.struct_size = sizeof(call);
  call.op = ACCEL_OP_MATMUL;
  call.num_inputs = 2;
  call.inputs = inputs;
  call.num_outputs = 1;
  call.outputs = &y.tensor;
  const AccelStatusCode code = take(system.api()->execute(device, &call), message);
  for (AccelBuffer* buffer : {a.buffer, b.buffer, y.buffer}) system.api()->buffer_free(device, buffer);
  return code;
}

TEST(TpuSimTable, ExtensionTotalsFollowTheReportedOps) {
  EmulatedSystem system({});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  const AccelTpuSimExtension& extension = system.extension();
  ASSERT_EQ(extension.struct_size, sizeof(AccelTpuSimExtension));
  EXPECT_EQ(system.api()->get_extension(system.context(), "accel.tpu_sim.v0"), nullptr);
  AccelDevice* device = system.open(1);
  g_reports.clear();
  ASSERT_EQ(run_matmul(system, device, 64, 300, 200), ACCEL_STATUS_OK);
  ASSERT_EQ(run_matmul(system, device, 8, 8, 8), ACCEL_STATUS_OK);
  ASSERT_EQ(g_reports.size(), 2u);
  AccelTpuSimDeviceTotals totals{};
  totals.struct_size = sizeof(totals);
  ASSERT_EQ(take(extension.device_totals(system.context(), 1, &totals)), ACCEL_STATUS_OK);
  EXPECT_EQ(totals.ops, 2);
  EXPECT_EQ(totals.cycles, static_cast<int64_t>(g_reports[0].cycles + g_reports[1].cycles));
  EXPECT_EQ(totals.hbm_bytes, static_cast<int64_t>(g_reports[0].bytes_accessed + g_reports[1].bytes_accessed));
  EXPECT_EQ(totals.useful_macs, 64 * 300 * 200 + 8 * 8 * 8);
  EXPECT_DOUBLE_EQ(totals.seconds, static_cast<double>(totals.cycles) / 1.05e9);
  EXPECT_GT(totals.mxu_utilization, 0.0);
  EXPECT_DOUBLE_EQ(g_reports[1].start_seconds, g_reports[0].duration_seconds);  // back to back

  AccelTpuSimDeviceTotals other{};
  other.struct_size = sizeof(other);
  ASSERT_EQ(take(extension.device_totals(system.context(), 0, &other)), ACCEL_STATUS_OK);
  EXPECT_EQ(other.ops, 0);  // TPU:0 ran nothing
  std::string message;
  EXPECT_EQ(take(extension.device_totals(system.context(), 2, &other), &message), ACCEL_STATUS_NOT_FOUND);
  EXPECT_NE(message.find("devices 0 to 1"), std::string::npos) << message;

  ASSERT_EQ(take(extension.reset_totals(system.context(), -1)), ACCEL_STATUS_OK);
  ASSERT_EQ(take(extension.device_totals(system.context(), 1, &totals)), ACCEL_STATUS_OK);
  EXPECT_EQ(totals.ops, 0);
  EXPECT_EQ(totals.cycles, 0);
  g_reports.clear();
  ASSERT_EQ(run_matmul(system, device, 8, 8, 8), ACCEL_STATUS_OK);
  EXPECT_EQ(g_reports.at(0).start_seconds, 0.0);  // the timeline restarted

  const std::string json = extension.system_json(system.context());
  EXPECT_NE(json.find("\"preset\":\"tpu_v4\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"chips\":1"), std::string::npos) << json;
}

TEST(TpuSimTable, AllReduceUsesTheInterconnectModel) {
  EmulatedSystem system({{"tpu_sim.chips", "4"}});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  const AccelTpuSimExtension& extension = system.extension();
  AccelTpuSimAllReduce estimate{};
  estimate.struct_size = sizeof(estimate);
  ASSERT_EQ(take(extension.all_reduce(system.context(), 1e9, 8, &estimate)), ACCEL_STATUS_OK);
  // The whole v4-8 slice: the same figure as `accel tpu estimate allreduce 1e9`.
  const tpu::AllReduceEstimate v4_8 = tpu::estimate_all_reduce(tpu::load_system({}), 1e9);
  EXPECT_DOUBLE_EQ(estimate.seconds, v4_8.seconds);
  EXPECT_EQ(estimate.chips, 4);
  EXPECT_EQ(estimate.steps, v4_8.steps);
  // Two cores of one chip combine through HBM only; one core has nothing to do.
  ASSERT_EQ(take(extension.all_reduce(system.context(), 1e9, 2, &estimate)), ACCEL_STATUS_OK);
  EXPECT_EQ(estimate.chips, 1);
  EXPECT_DOUBLE_EQ(estimate.seconds, 2.0 * 1e9 / 1200e9);
  EXPECT_EQ(estimate.link_seconds, 0.0);
  ASSERT_EQ(take(extension.all_reduce(system.context(), 1e9, 1, &estimate)), ACCEL_STATUS_OK);
  EXPECT_EQ(estimate.seconds, 0.0);
  EXPECT_EQ(take(extension.all_reduce(system.context(), 1e9, 9, &estimate)), ACCEL_STATUS_INVALID_ARGUMENT);
}

AccelTpuSimDeviceTotals totals_of(const EmulatedSystem& system, int32_t core) {
  AccelTpuSimDeviceTotals totals{};
  totals.struct_size = sizeof(totals);
  EXPECT_EQ(take(system.extension().device_totals(system.context(), core, &totals)), ACCEL_STATUS_OK);
  return totals;
}

TEST(TpuSimTable, EnergyTotalsAddUpTheOpsAndTheAllReduce) {
  // tpu_v4's figures, plus a link figure so that the all-reduce has link energy.
  EmulatedSystem system({{"tpu_sim.chips", "2"}, {"tpu_sim.overrides", "energy.link_pj_per_byte=10"}});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  EXPECT_NE(std::string(system.extension().system_json(system.context())).find(R"("link_pj_per_byte":10.0)"),
            std::string::npos);
  AccelDevice* device = system.open(0);
  g_reports.clear();
  g_details.clear();
  ASSERT_EQ(run_matmul(system, device, 64, 300, 200), ACCEL_STATUS_OK);
  ASSERT_EQ(g_details.size(), 1u);
  EXPECT_NE(g_details[0].find(R"("energy":{"total_j":)"), std::string::npos) << g_details[0];
  AccelTpuSimDeviceTotals totals = totals_of(system, 0);
  EXPECT_EQ(totals.energy_known, 1);
  EXPECT_EQ(totals.energy_missing, 0);
  EXPECT_DOUBLE_EQ(totals.mac_energy_j, 64.0 * 300 * 200 * 0.59e-12);
  EXPECT_DOUBLE_EQ(totals.hbm_energy_j, static_cast<double>(totals.hbm_bytes) * 43.75e-12);
  EXPECT_DOUBLE_EQ(totals.energy_j, totals.mac_energy_j + totals.sram_energy_j + totals.hbm_energy_j +
                                        totals.link_energy_j + totals.vector_energy_j);
  EXPECT_EQ(totals.link_energy_j, 0.0);

  // 1 MB over the 4 cores of 2 chips: each chip sends 2 (2 - 1) / 2 of it over
  // its links and combines its two cores' partials through HBM (2 MB).
  const int32_t cores[] = {0, 1, 2, 3};
  AccelTpuSimAllReduce estimate{};
  estimate.struct_size = sizeof(estimate);
  double start = 0;
  ASSERT_EQ(take(system.extension().run_all_reduce(system.context(), 1e6, cores, 4, &estimate, &start)), ACCEL_STATUS_OK);
  double link = 0, hbm_after = 0;
  for (int32_t core : cores) {
    const AccelTpuSimDeviceTotals after = totals_of(system, core);
    link += after.link_energy_j;
    hbm_after += after.hbm_energy_j;
  }
  EXPECT_DOUBLE_EQ(link, 2 * 1e6 * 10e-12);
  EXPECT_DOUBLE_EQ(hbm_after - totals.hbm_energy_j, 2 * 2e6 * 43.75e-12);
  ASSERT_EQ(take(system.extension().reset_totals(system.context(), -1)), ACCEL_STATUS_OK);
  EXPECT_EQ(totals_of(system, 0).energy_j, 0.0);
  EXPECT_EQ(totals_of(system, 0).energy_known, 1);
}

TEST(TpuSimTable, APresetWithoutEnergyFiguresReportsNone) {
  EmulatedSystem system({{"tpu_sim.preset", "tpu_v5e"}, {"tpu_sim.chips", "2"}});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  EXPECT_NE(std::string(system.extension().system_json(system.context())).find(R"("energy":null)"), std::string::npos);
  AccelDevice* device = system.open(0);
  g_details.clear();
  ASSERT_EQ(run_matmul(system, device, 64, 64, 64), ACCEL_STATUS_OK);
  EXPECT_NE(g_details.at(0).find(R"("energy":null)"), std::string::npos) << g_details[0];
  const int32_t cores[] = {0, 1};
  AccelTpuSimAllReduce estimate{};
  estimate.struct_size = sizeof(estimate);
  double start = 0;
  ASSERT_EQ(take(system.extension().run_all_reduce(system.context(), 1e6, cores, 2, &estimate, &start)), ACCEL_STATUS_OK);
  const AccelTpuSimDeviceTotals totals = totals_of(system, 0);
  EXPECT_EQ(totals.energy_known, 0);
  EXPECT_EQ(totals.energy_j, 0.0);
  EXPECT_EQ(totals.link_energy_j, 0.0);
}

TEST(TpuSimTable, CycleAccurateModeGivesTheAnalyticalCycles) {
  for (const char* dataflow : {"ws", "os", "is"}) {
    for (const char* convention : {"tpu", "scalesim"}) {
      SCOPED_TRACE(std::string(dataflow) + " " + convention);
      const std::string overrides = std::string("core.mxu.rows=16;core.mxu.columns=16;core.mxu.dataflow=") + dataflow;
      std::vector<uint64_t> cycles;
      for (const char* mode : {"analytical", "cycle_accurate"}) {
        EmulatedSystem system({{"tpu_sim.overrides", overrides}, {"tpu_sim.mode", mode}, {"tpu_sim.convention", convention}});
        ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
        AccelDevice* device = system.open(0);
        g_reports.clear();
        ASSERT_EQ(run_matmul(system, device, 37, 70, 45), ACCEL_STATUS_OK);  // several folds on 4 MXUs
        cycles.push_back(g_reports.at(0).cycles);
      }
      EXPECT_EQ(cycles[0], cycles[1]);
    }
  }
}

TEST(TpuSimTable, CycleAccurateModeRefusesLargeShapesNamingTheLimit) {
  EmulatedSystem system({{"tpu_sim.mode", "cycle_accurate"}});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  std::string message;
  EXPECT_EQ(run_matmul(system, device, 2048, 2048, 2048, &message), ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(message.find("MATMUL: tpu_sim.mode=cycle_accurate steps at most 100000000 PE-cycles"), std::string::npos)
      << message;
}

TEST(TpuSimTable, ScaleSimConventionReproducesItsCycleCount) {
  EmulatedSystem system({{"tpu_sim.convention", "scalesim"}, {"tpu_sim.overrides", "core.mxus=1"}});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  g_reports.clear();
  ASSERT_EQ(run_matmul(system, device, 676, 32, 9), ACCEL_STATUS_OK);
  // SCALE-Sim v2 ws on 128x128: F = 1 fold of 2R + C + T - 2 cycles, reported minus one.
  EXPECT_EQ(g_reports.at(0).cycles, static_cast<uint64_t>(2 * 128 + 128 + 676 - 2 - 1));
}

TEST(TpuSimTable, HbmIsSharedByTheLogicalDevicesOfACore) {
  EmulatedSystem system({{"tpu_sim.overrides", "hbm.capacity_bytes=2 MiB"}});  // 1 MiB per core
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* first = system.open(0);
  AccelDevice* second = system.open(0);
  AccelDevice* other_core = system.open(1);
  AccelBuffer *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(take(system.api()->buffer_allocate(first, 768 * 1024, &a)), ACCEL_STATUS_OK);
  std::string message;
  EXPECT_EQ(take(system.api()->buffer_allocate(second, 512 * 1024, &b), &message), ACCEL_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_NE(message.find("cannot allocate 524288 bytes; 786432 bytes in use of a 1048576-byte capacity"),
            std::string::npos) << message;
  ASSERT_EQ(take(system.api()->buffer_allocate(other_core, 512 * 1024, &c)), ACCEL_STATUS_OK);
  system.api()->buffer_free(first, a);
  ASSERT_EQ(take(system.api()->buffer_allocate(second, 512 * 1024, &b)), ACCEL_STATUS_OK);
  system.api()->buffer_free(second, b);
  system.api()->buffer_free(other_core, c);
}

// Runs `op` on `device` into `outputs`; returns the op's report (zeros if none came).
AccelOpProfile run_op(const EmulatedSystem& system, AccelDevice* device, AccelOp op, std::vector<AccelTensor> inputs,
                      std::vector<AccelTensor> outputs, const void* attributes = nullptr) {
  AccelOpCall call{};
  call.struct_size = sizeof(call);
  call.op = op;
  call.num_inputs = static_cast<int32_t>(inputs.size());
  call.inputs = inputs.data();
  call.num_outputs = static_cast<int32_t>(outputs.size());
  call.outputs = outputs.data();
  call.attributes = attributes;
  g_reports.clear();
  EXPECT_EQ(take(system.api()->execute(device, &call)), ACCEL_STATUS_OK) << static_cast<int>(op);
  EXPECT_EQ(g_reports.size(), 1u);
  return g_reports.empty() ? AccelOpProfile{} : g_reports.back();
}

// Runs y = op(x) on `device` (with `attributes`, for a fusion); returns the
// HBM bytes its report gives.
double run_unary(const EmulatedSystem& system, AccelDevice* device, AccelOp op, const DeviceTensor& x,
                 const DeviceTensor& y, const void* attributes = nullptr) {
  return run_op(system, device, op, {x.tensor}, {y.tensor}, attributes).bytes_accessed;
}

TEST(TpuSimTable, VmemResidencyAllReadsRecentResultsFromVmem) {
  EmulatedSystem system({{"tpu_sim.vmem_residency", "all"}});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  EXPECT_NE(std::string(system.extension().system_json(system.context())).find(R"("vmem_residency":"all")"),
            std::string::npos);
  AccelDevice* device = system.open(0);
  const DeviceTensor x = allocate(system, device, {256, 256}), y = allocate(system, device, {256, 256}),
                     z = allocate(system, device, {256, 256});
  const double tensor_bytes = 256.0 * 256 * 4;
  EXPECT_DOUBLE_EQ(run_unary(system, device, ACCEL_OP_NEG, x, y), 2 * tensor_bytes);  // x came from the host
  EXPECT_DOUBLE_EQ(run_unary(system, device, ACCEL_OP_NEG, y, z), tensor_bytes);      // y is still in VMEM
  // A host copy into y makes the kept copy stale: read from HBM again.
  const std::vector<float> values(256 * 256, 1.0f);
  ASSERT_EQ(take(system.api()->copy_host_to_device(device, values.data(), y.buffer, 0, 4)), ACCEL_STATUS_OK);
  EXPECT_DOUBLE_EQ(run_unary(system, device, ACCEL_OP_NEG, y, z), 2 * tensor_bytes);
  for (AccelBuffer* buffer : {x.buffer, y.buffer, z.buffer}) system.api()->buffer_free(device, buffer);
}

TEST(TpuSimTable, EagerOpsReadFromHbmByDefault) {
  EmulatedSystem system({});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  const DeviceTensor x = allocate(system, device, {256, 256}), y = allocate(system, device, {256, 256}),
                     z = allocate(system, device, {256, 256});
  const double tensor_bytes = 256.0 * 256 * 4;
  EXPECT_DOUBLE_EQ(run_unary(system, device, ACCEL_OP_NEG, x, y), 2 * tensor_bytes);
  EXPECT_DOUBLE_EQ(run_unary(system, device, ACCEL_OP_NEG, y, z), 2 * tensor_bytes);
  for (AccelBuffer* buffer : {x.buffer, y.buffer, z.buffer}) system.api()->buffer_free(device, buffer);
}

// A compiled program's edge on one device: y = relu(x) as a fusion, then
// z = -y read back by a plain op (default mode: it reads a fused kernel's
// output). Returns the NEG's report and its detail_json.
std::pair<AccelOpProfile, std::string> fusion_then_neg(
    std::initializer_list<std::pair<const std::string, std::string>> settings, std::vector<int64_t> shape) {
  EmulatedSystem system(settings);
  EXPECT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  const DeviceTensor x = allocate(system, device, shape), y = allocate(system, device, shape),
                     z = allocate(system, device, shape);
  const AccelFusedInstruction instructions[] = {
      {ACCEL_FUSED_LOAD, ACCEL_OP_NEG, ACCEL_DTYPE_F32, {0, 0, 0}, 0},
      {ACCEL_FUSED_OP, ACCEL_OP_RELU, ACCEL_DTYPE_F32, {0, 0, 0}, 0},
  };
  const AccelFusedOutput output{1, static_cast<AccelOp>(0), 0, {}, 0};
  AccelFusedElementwiseAttributes program{};
  program.struct_size = sizeof(program);
  program.rank = static_cast<int32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), program.shape);
  program.num_instructions = 2;
  program.instructions = instructions;
  program.num_outputs = 1;
  program.outputs = &output;
  run_unary(system, device, ACCEL_OP_FUSED_ELEMENTWISE, x, y, &program);
  g_details.clear();
  run_unary(system, device, ACCEL_OP_NEG, y, z);
  std::pair<AccelOpProfile, std::string> result{g_reports.empty() ? AccelOpProfile{} : g_reports.back(),
                                                g_details.empty() ? std::string() : g_details.back()};
  for (AccelBuffer* buffer : {x.buffer, y.buffer, z.buffer}) system.api()->buffer_free(device, buffer);
  return result;
}

// CMEM as the second level of on-chip residency: 24 MiB is more than half a
// v4 core's VMEM (8 MiB) and within its share of the chip's CMEM (64 MiB).
TEST(TpuSimTable, ACompiledIntermediateTooLargeForVmemIsReadFromCmemOnV4) {
  const std::vector<int64_t> shape{2048, 3072};
  const double tensor_bytes = 2048.0 * 3072 * 4;
  const auto [v4, v4_json] = fusion_then_neg({{"tpu_sim.values", "none"}}, shape);
  EXPECT_DOUBLE_EQ(v4.bytes_accessed, tensor_bytes);  // z's write only
  const nlohmann::json details = nlohmann::json::parse(v4_json);
  EXPECT_EQ(details.at("cmem_read_bytes").get<double>(), tensor_bytes);
  EXPECT_EQ(details.at("vmem_read_bytes").get<double>(), 0);

  // The same chip without CMEM, and a chip without CMEM whose VMEM half is
  // too small for it (v3: 16 MiB): through HBM.
  for (const char* preset : {"tpu_v4", "tpu_v3"}) {
    const auto [none, none_json] = fusion_then_neg(
        {{"tpu_sim.values", "none"}, {"tpu_sim.preset", preset}, {"tpu_sim.overrides", "cmem_bytes=0"}}, shape);
    EXPECT_DOUBLE_EQ(none.bytes_accessed, 2 * tensor_bytes) << preset;
    EXPECT_EQ(none_json.find("cmem_read_bytes"), std::string::npos) << preset;
    EXPECT_GT(none.cycles, v4.cycles) << preset;
  }
  // v5e has no CMEM either; its VMEM half (64 MiB) holds the tensor.
  const auto [v5e, v5e_json] = fusion_then_neg({{"tpu_sim.values", "none"}, {"tpu_sim.preset", "tpu_v5e"}}, shape);
  EXPECT_DOUBLE_EQ(v5e.bytes_accessed, tensor_bytes);
  EXPECT_EQ(nlohmann::json::parse(v5e_json).at("vmem_read_bytes").get<double>(), tensor_bytes);
  EXPECT_EQ(v5e_json.find("cmem_read_bytes"), std::string::npos);
}

TEST(TpuSimTable, EagerOpsReadTheirLargeResultsFromHbmOnV4) {
  EmulatedSystem system({{"tpu_sim.values", "none"}});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  const DeviceTensor x = allocate(system, device, {2048, 3072}), y = allocate(system, device, {2048, 3072}),
                     z = allocate(system, device, {2048, 3072});
  const double tensor_bytes = 2048.0 * 3072 * 4;
  EXPECT_DOUBLE_EQ(run_unary(system, device, ACCEL_OP_NEG, x, y), 2 * tensor_bytes);
  g_details.clear();
  EXPECT_DOUBLE_EQ(run_unary(system, device, ACCEL_OP_NEG, y, z), 2 * tensor_bytes);  // not from CMEM
  ASSERT_FALSE(g_details.empty());
  EXPECT_EQ(g_details.back().find("cmem_read_bytes"), std::string::npos);
  for (AccelBuffer* buffer : {x.buffer, y.buffer, z.buffer}) system.api()->buffer_free(device, buffer);
}

TEST(TpuSimTable, ClaimsFusionsAndTheEpiloguesItTimes) {
  EmulatedSystem system({});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  const AccelPluginApi& api = *system.api();
  EXPECT_EQ(api.supports_op(device, ACCEL_OP_FUSED_ELEMENTWISE, ACCEL_DTYPE_F32), 1);
  ASSERT_NE(api.supports_epilogue, nullptr);
  const int32_t bias_relu = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION;
  EXPECT_EQ(api.supports_epilogue(device, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, bias_relu, ACCEL_OP_RELU), 1);
  EXPECT_EQ(api.supports_epilogue(device, ACCEL_OP_CONV2D, ACCEL_DTYPE_F32, bias_relu, ACCEL_OP_TANH), 1);
  EXPECT_EQ(api.supports_epilogue(device, ACCEL_OP_CONV2D_BACKWARD_INPUT, ACCEL_DTYPE_F32, ACCEL_EPILOGUE_RELU_MASK,
                                  ACCEL_OP_RELU),
            1);
  EXPECT_EQ(api.supports_epilogue(device, ACCEL_OP_CONV2D_BACKWARD_FILTER, ACCEL_DTYPE_F32, ACCEL_EPILOGUE_BIAS,
                                  ACCEL_OP_RELU),
            0);
  EXPECT_EQ(api.supports_epilogue(device, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, ACCEL_EPILOGUE_ACTIVATION, ACCEL_OP_EXP), 0);
  EXPECT_EQ(api.supports_epilogue(device, ACCEL_OP_MATMUL, ACCEL_DTYPE_F32, 8, ACCEL_OP_RELU), 0);
}

TEST(TpuSimTable, RunsAndTimesFusedKernels) {
  EmulatedSystem system({});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  const DeviceTensor x = allocate(system, device, {128, 256}), bias = allocate(system, device, {256}),
                     y = allocate(system, device, {128, 256});
  const double x_bytes = 128.0 * 256 * 4, bias_bytes = 256.0 * 4;

  // y = relu(x + bias): one kernel reading x and the bias once.
  const AccelFusedInstruction instructions[] = {
      {ACCEL_FUSED_LOAD, ACCEL_OP_NEG, ACCEL_DTYPE_F32, {0, 0, 0}, 0},
      {ACCEL_FUSED_LOAD, ACCEL_OP_NEG, ACCEL_DTYPE_F32, {1, 0, 0}, 0},
      {ACCEL_FUSED_OP, ACCEL_OP_ADD, ACCEL_DTYPE_F32, {0, 1, 0}, 0},
      {ACCEL_FUSED_OP, ACCEL_OP_RELU, ACCEL_DTYPE_F32, {2, 0, 0}, 0},
  };
  const AccelFusedOutput output{3, static_cast<AccelOp>(0), 0, {}, 0};
  AccelFusedElementwiseAttributes program{};
  program.struct_size = sizeof(program);
  program.rank = 2;
  program.shape[0] = 128;
  program.shape[1] = 256;
  program.num_instructions = 4;
  program.instructions = instructions;
  program.num_outputs = 1;
  program.outputs = &output;
  const AccelTensor fusion_inputs[] = {x.tensor, bias.tensor};
  AccelOpCall call{};
  call.struct_size = sizeof(call);
  call.op = ACCEL_OP_FUSED_ELEMENTWISE;
  call.num_inputs = 2;
  call.inputs = fusion_inputs;
  call.num_outputs = 1;
  call.outputs = &y.tensor;
  call.attributes = &program;
  g_reports.clear();
  ASSERT_EQ(take(system.api()->execute(device, &call)), ACCEL_STATUS_OK);
  ASSERT_EQ(g_reports.size(), 1u);
  EXPECT_DOUBLE_EQ(g_reports[0].bytes_accessed, 2 * x_bytes + bias_bytes);
  EXPECT_GT(g_reports[0].cycles, 0u);
  EXPECT_GT(g_reports[0].flops, 0.0);
  float value = 0;
  ASSERT_EQ(take(system.api()->copy_device_to_host(device, y.buffer, 0, &value, 4)), ACCEL_STATUS_OK);
  EXPECT_EQ(value, 1.0f);  // relu(0.5 + 0.5)

  // out = relu(x . w + bias): the matmul's bytes plus the bias, nothing more.
  const DeviceTensor w = allocate(system, device, {256, 256}), out = allocate(system, device, {128, 256});
  AccelMatmulAttributes epilogue{};
  epilogue.struct_size = sizeof(epilogue);
  epilogue.epilogue_flags = ACCEL_EPILOGUE_BIAS | ACCEL_EPILOGUE_ACTIVATION;
  epilogue.activation = ACCEL_OP_RELU;
  const AccelTensor matmul_inputs[] = {x.tensor, w.tensor, bias.tensor};
  call.op = ACCEL_OP_MATMUL;
  call.num_inputs = 3;
  call.inputs = matmul_inputs;
  call.outputs = &out.tensor;
  call.attributes = &epilogue;
  g_reports.clear();
  ASSERT_EQ(take(system.api()->execute(device, &call)), ACCEL_STATUS_OK);
  const tpu::OpTiming plain = tpu::TimingModel(tpu::load_system({})).estimate_matmul(128, 256, 256, tpu::NumberType::kFp32);
  ASSERT_EQ(g_reports.size(), 1u);
  EXPECT_DOUBLE_EQ(g_reports[0].bytes_accessed, static_cast<double>(plain.hbm_bytes) + bias_bytes);
  ASSERT_EQ(take(system.api()->copy_device_to_host(device, out.buffer, 0, &value, 4)), ACCEL_STATUS_OK);
  EXPECT_EQ(value, 256 * 0.25f + 0.5f);
  for (AccelBuffer* buffer : {x.buffer, bias.buffer, y.buffer, w.buffer, out.buffer}) {
    system.api()->buffer_free(device, buffer);
  }
}

// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER (plugin API 1.4): the emulator
// claims it, computes the numbers its two ops compute here (bf16 MXU
// operands) bit for bit, and times one kernel that never writes or reads
// the pooling gradient in HBM.
TEST(TpuSimTable, PoolingGradientFusedIntoTheFilterGradientIsOneKernelWithTheTwoOpsNumbers) {
  EmulatedSystem system({});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  const AccelPluginApi& api = *system.api();
  ASSERT_EQ(api.supports_op(device, ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER, ACCEL_DTYPE_F32), 1);

  // The tutorial CNN's block at batch 8: x [8,28,28,1], conv 3x3 to [8,26,26,32], pool 2x2 to [8,13,13,32].
  auto filled = [&](std::vector<int64_t> shape, float scale) {
    DeviceTensor tensor = allocate(system, device, shape);
    const int64_t count = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    std::vector<float> values(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) values[static_cast<size_t>(i)] = scale * static_cast<float>((i * 7919) % 1009) / 1009.0f;
    EXPECT_EQ(take(api.copy_host_to_device(device, values.data(), tensor.buffer, 0, values.size() * 4)), ACCEL_STATUS_OK);
    return tensor;
  };
  const DeviceTensor x = filled({8, 28, 28, 1}, 1.0f), pool_x = filled({8, 26, 26, 32}, 2.0f),
                     pool_dy = filled({8, 13, 13, 32}, 0.3f);
  const DeviceTensor pooling_gradient = allocate(system, device, {8, 26, 26, 32});
  const DeviceTensor separate = allocate(system, device, {3, 3, 1, 32}), fused = allocate(system, device, {3, 3, 1, 32});
  const AccelConv2dAttributes convolution{sizeof(AccelConv2dAttributes), 1, 1, 1, 1, 0, 0, 0, 0, 0, {}};
  const AccelPoolAttributes pool{sizeof(AccelPoolAttributes), 2, 2, 2, 2, 0, 0, 0, 0};
  const AccelOpProfile routing = run_op(system, device, ACCEL_OP_MAX_POOL_BACKWARD, {pool_x.tensor, pool_dy.tensor},
                                        {pooling_gradient.tensor}, &pool);
  const AccelOpProfile filter_gradient = run_op(system, device, ACCEL_OP_CONV2D_BACKWARD_FILTER,
                                                {x.tensor, pooling_gradient.tensor}, {separate.tensor}, &convolution);
  const AccelPoolFilterGradientAttributes both{sizeof(AccelPoolFilterGradientAttributes), convolution, pool};
  const AccelOpProfile one_kernel = run_op(system, device, ACCEL_OP_MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER,
                                           {x.tensor, pool_x.tensor, pool_dy.tensor}, {fused.tensor}, &both);

  std::vector<float> expected(3 * 3 * 32), actual(3 * 3 * 32);
  ASSERT_EQ(take(api.copy_device_to_host(device, separate.buffer, 0, expected.data(), expected.size() * 4)), ACCEL_STATUS_OK);
  ASSERT_EQ(take(api.copy_device_to_host(device, fused.buffer, 0, actual.data(), actual.size() * 4)), ACCEL_STATUS_OK);
  EXPECT_EQ(actual, expected);

  const double gradient_bytes = 8.0 * 26 * 26 * 32 * 4;
  // The two ops write the pooling gradient and read it back at least once; the kernel does neither.
  EXPECT_LE(one_kernel.bytes_accessed + 2 * gradient_bytes, routing.bytes_accessed + filter_gradient.bytes_accessed);
  EXPECT_LT(one_kernel.cycles, routing.cycles + filter_gradient.cycles);
  EXPECT_EQ(one_kernel.flops, filter_gradient.flops);
  for (AccelBuffer* buffer : {x.buffer, pool_x.buffer, pool_dy.buffer, pooling_gradient.buffer, separate.buffer, fused.buffer}) {
    api.buffer_free(device, buffer);
  }
}

// BATCH_NORM and its gradient (plugin API 1.6): claimed, and timed as XLA
// runs them on a TPU, a reduction pass and an elementwise pass that each read
// the activations from HBM: x twice forward, dy and x twice backward.
TEST(TpuSimTable, BatchNormReadsTheActivationsTwiceEachWay) {
  EmulatedSystem system({});
  ASSERT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
  AccelDevice* device = system.open(0);
  const AccelPluginApi& api = *system.api();
  ASSERT_EQ(api.supports_op(device, ACCEL_OP_BATCH_NORM, ACCEL_DTYPE_F32), 1);
  ASSERT_EQ(api.supports_op(device, ACCEL_OP_BATCH_NORM_BACKWARD, ACCEL_DTYPE_F32), 1);
  const std::vector<int64_t> image{8, 14, 14, 32};
  const DeviceTensor x = allocate(system, device, image), y = allocate(system, device, image),
                     dy = allocate(system, device, image), dx = allocate(system, device, image);
  std::vector<DeviceTensor> features;
  for (int i = 0; i < 7; ++i) features.push_back(allocate(system, device, {32}));
  const AccelBatchNormAttributes attributes{sizeof(AccelBatchNormAttributes), 1e-3};
  auto run = [&](AccelOp op, std::vector<AccelTensor> inputs, std::vector<AccelTensor> outputs) {
    return run_op(system, device, op, std::move(inputs), std::move(outputs), &attributes);
  };
  // Every input is one no kernel wrote (none found on chip); their values (0.5) do not change the timing.
  const double activation = 8.0 * 14 * 14 * 32 * 4, feature = 32 * 4;
  const AccelOpProfile forward = run(ACCEL_OP_BATCH_NORM, {x.tensor, features[0].tensor, features[1].tensor},
                                     {y.tensor, features[2].tensor, features[3].tensor});
  EXPECT_EQ(forward.bytes_accessed, 2 * activation + 2 * feature + activation + 2 * feature);
  const AccelOpProfile backward =
      run(ACCEL_OP_BATCH_NORM_BACKWARD,
          {dy.tensor, x.tensor, features[0].tensor, features[4].tensor, features[5].tensor},
          {dx.tensor, features[6].tensor, features[1].tensor});
  EXPECT_EQ(backward.bytes_accessed, 4 * activation + 3 * feature + activation + 2 * feature);
  EXPECT_GT(backward.cycles, forward.cycles);
  for (const DeviceTensor* tensor : {&x, &y, &dy, &dx}) api.buffer_free(device, tensor->buffer);
  for (const DeviceTensor& tensor : features) api.buffer_free(device, tensor.buffer);
}

// tpu_sim.megacore=on: a v4 chip is one device with both cores' MXUs, and a
// large matmul's compute takes half the cycles; a v5e (one core) is unchanged.
TEST(TpuSimTable, MegacoreMakesAV4ChipOneDeviceWithHalfTheComputeCycles) {
  const auto compute_cycles = [](std::initializer_list<std::pair<const std::string, std::string>> settings,
                                 int32_t* devices, std::string* json) {
    EmulatedSystem system(settings);
    EXPECT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
    EXPECT_EQ(take(system.api()->physical_device_count(system.context(), devices)), ACCEL_STATUS_OK);
    *json = system.extension().system_json(system.context());
    g_details.clear();
    EXPECT_EQ(run_matmul(system, system.open(0), 4096, 4096, 4096), ACCEL_STATUS_OK);
    return g_details.empty() ? int64_t{-1} : nlohmann::json::parse(g_details.back()).at("compute_cycles").get<int64_t>();
  };
  int32_t devices = 0, mega_devices = 0;
  std::string json, mega_json;
  const int64_t one = compute_cycles({{"tpu_sim.values", "none"}}, &devices, &json);
  const int64_t mega = compute_cycles({{"tpu_sim.values", "none"}, {"tpu_sim.megacore", "on"}}, &mega_devices, &mega_json);
  EXPECT_EQ(devices, 2);
  EXPECT_EQ(mega_devices, 1);
  EXPECT_NE(mega_json.find("\"megacore\":true"), std::string::npos) << mega_json;
  EXPECT_NE(json.find("\"megacore\":false"), std::string::npos) << json;
  // The busiest MXU runs half the folds; one fill and drain stays.
  const tpu::Hardware v4 = tpu::load_system({.preset_or_file = "tpu_v4"});
  const int64_t t = 4096, r = v4.core.mxu.rows, c = v4.core.mxu.columns;
  EXPECT_EQ(2 * mega - one, t + 2 * r + c - 2 - std::max(t, r)) << one << " vs " << mega;

  const int64_t v5e = compute_cycles({{"tpu_sim.values", "none"}, {"tpu_sim.preset", "tpu_v5e"}}, &devices, &json);
  const int64_t v5e_mega = compute_cycles(
      {{"tpu_sim.values", "none"}, {"tpu_sim.preset", "tpu_v5e"}, {"tpu_sim.megacore", "on"}}, &mega_devices, &mega_json);
  EXPECT_EQ(v5e_mega, v5e);
  EXPECT_EQ(mega_devices, devices);
  EXPECT_NE(mega_json.find("\"megacore\":false"), std::string::npos) << mega_json;
}

TEST(TpuSimTable, BadSettingsFailInitializeNamingThem) {
  for (const auto& [key, value, expected] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"tpu_sim.mode", "fast", "setting tpu_sim.mode='fast': expected analytical or cycle_accurate"},
           {"tpu_sim.convention", "xla", "setting tpu_sim.convention='xla': expected tpu or scalesim"},
           {"tpu_sim.vmem_residency", "on", "setting tpu_sim.vmem_residency='on': expected fused, all or off"},
           {"tpu_sim.vmem_residency", "off", ""},
           {"tpu_sim.chips", "two", "setting tpu_sim.chips='two'"},
           {"tpu_sim.chips", "2", ""},
           {"tpu_sim.megacore", "yes", "setting tpu_sim.megacore='yes': expected off or on"},
           {"tpu_sim.megacore", "on", ""},
           {"tpu_sim.overrides", "core.mxu.rows", "malformed override"},
           {"tpu_sim.overrides", "core.mxu.rows=0", "override 'core.mxu.rows=0'"},
       }) {
    EmulatedSystem system({{key, value}});
    if (expected.empty()) {
      EXPECT_EQ(system.status(), ACCEL_STATUS_OK) << system.message();
      continue;
    }
    EXPECT_EQ(system.status(), ACCEL_STATUS_INVALID_ARGUMENT) << key << "=" << value;
    EXPECT_NE(system.message().find(expected), std::string::npos) << system.message();
  }
  EmulatedSystem v1({{"tpu_sim.preset", "tpu_v1"}, {"tpu_sim.chips", "2"}});
  EXPECT_EQ(v1.status(), ACCEL_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(v1.message().find("2 chips but interconnect topology 'none'"), std::string::npos) << v1.message();
}

}  // namespace
