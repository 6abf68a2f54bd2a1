// The TPU emulator's entry point and its AccelPluginApi table: thin C
// functions that check arguments, run the work inside sdk::guard (no
// exception crosses the boundary) and forward to the files that own it:
// system_settings (which system), tensor_core (the devices), hbm_buffers,
// op_execution, tpu_sim_extension; fused_work says which epilogues it times.
#include <accel/plugin/host_kernels.hpp>
#include <accel/plugin/plugin_sdk.hpp>

#include <nlohmann/json.hpp>

#include <cstring>
#include <memory>

#include "fused_work.hpp"
#include "tpu_sim_plugin.hpp"

namespace accel::tpu_sim {
namespace {

// The host API given to the latest initialize(), for the calls that come
// without a context or device; the others use the host that created theirs.
const AccelHostApi* g_host = nullptr;

const AccelHostApi* host_of(const AccelPluginContext* context) { return context != nullptr ? context->host : g_host; }
const AccelHostApi* host_of(const AccelDevice* device) { return device != nullptr ? device->context->host : g_host; }

template <typename Owner, typename Body>
AccelStatus* guarded(const Owner* owner, Body&& body) noexcept {
  return sdk::guard(host_of(owner), std::forward<Body>(body));
}

std::string describe_system(const AccelPluginContext& context) {
  const tpu::Hardware& hw = context.hardware;
  nlohmann::json system = {
      {"preset", hw.name},
      {"source", hw.source},
      {"chips", hw.chips},
      {"cores_per_chip", hw.cores_per_chip},
      {"devices", context.cores.size()},
      {"mode", context.settings.cycle_accurate ? "cycle_accurate" : "analytical"},
      {"convention", to_string(context.settings.convention)},
      {"vmem_residency", to_string(context.settings.vmem_residency)},
      {"values", context.settings.timing_only ? "none" : "compute"},
      {"megacore", context.settings.megacore && context.hardware.megacore},
      {"clock_hz", hw.clock_hz},
      {"mxus_per_core", hw.core.mxus},
      {"array", {hw.core.mxu.rows, hw.core.mxu.columns}},
      {"dataflow", to_string(hw.core.mxu.dataflow)},
      {"hbm_capacity_bytes_per_chip", hw.hbm.capacity_bytes},
      {"hbm_bandwidth_bytes_per_s", hw.hbm.bandwidth_bytes_per_s},
      {"topology", to_string(hw.interconnect.topology)},
      {"dims", hw.interconnect.dims},
      {"dcn_bandwidth_bytes_per_s", hw.interconnect.dcn_bandwidth_bytes_per_s},
  };
  system["energy"] = nullptr;  // the preset has no energy figures
  if (hw.energy) {
    const tpu::EnergyConfig& energy = *hw.energy;
    auto optional = [](const std::optional<double>& value) { return value ? nlohmann::json(*value) : nlohmann::json(); };
    system["energy"] = {{"mac_pj", energy.mac_pj},
                        {"sram_pj_per_byte", energy.sram_pj_per_byte},
                        {"hbm_pj_per_byte", energy.hbm_pj_per_byte},
                        {"link_pj_per_byte", optional(energy.link_pj_per_byte)},
                        {"vector_pj_per_element_op", optional(energy.vector_pj_per_element_op)},
                        {"idle_power_w", optional(energy.idle_power_w)},
                        {"sources", energy.sources}};
  }
  return system.dump();
}

AccelStatus* initialize(const AccelHostApi* host, AccelPluginContext** context) noexcept {
  if (host == nullptr) return nullptr;  // cannot even make a status; the host checks its own pointer
  if (context == nullptr) return host->status_create(ACCEL_STATUS_INVALID_ARGUMENT, "null context pointer");
  g_host = host;
  return sdk::guard(host, [&] {
    auto created = std::make_unique<AccelPluginContext>();
    created->host = host;
    created->settings = read_settings(*host);
    created->hardware = load_system_hardware(created->settings);
    tpu::TimingOptions options;
    options.convention = created->settings.convention;
    options.cycle_accurate = created->settings.cycle_accurate;
    created->timing = std::make_unique<tpu::TimingModel>(created->hardware, options);
    create_cores(*created);
    created->system_json = describe_system(*created);
    *context = created.release();  // lives as long as the process: plugins are never unloaded
  });
}

AccelStatus* physical_device_count(AccelPluginContext* context, int32_t* count) noexcept {
  return guarded(context, [&] {
    sdk::require_argument(context != nullptr && count != nullptr, "null argument");
    *count = static_cast<int32_t>(context->cores.size());
  });
}

AccelStatus* physical_device_info(AccelPluginContext* context, int32_t index, AccelDeviceInfo* info) noexcept {
  return guarded(context, [&] {
    sdk::require_argument(context != nullptr && info != nullptr, "null argument");
    sdk::require_argument(info->struct_size >= sizeof(AccelDeviceInfo), "AccelDeviceInfo struct too small");
    const TensorCore& core = core_at(*context, index);
    info->type = "TPU";
    info->description = core.description.c_str();
    info->memory_bytes = core.hbm_capacity_bytes;
    info->num_properties = static_cast<int32_t>(core.properties.size());
    info->properties = core.properties.data();
  });
}

const char* no_device_reason(AccelPluginContext*) noexcept { return nullptr; }

AccelStatus* device_open(AccelPluginContext* context, const AccelDeviceOptions* options,
                         AccelDevice** device) noexcept {
  return guarded(context, [&] {
    sdk::require_argument(context != nullptr && options != nullptr && device != nullptr, "null argument");
    sdk::require_argument(options->struct_size >= sizeof(AccelDeviceOptions), "AccelDeviceOptions struct too small");
    TensorCore& core = core_at(*context, options->physical_index);
    *device = new AccelDevice{context, &core, options->host_context};
  });
}

void device_close(AccelDevice* device) noexcept { delete device; }

// Every op the host kernels run, FUSED_ELEMENTWISE and
// MAX_POOL_BACKWARD_CONV2D_BACKWARD_FILTER included: they compute its numbers
// (the latter as its two ops, with the MXU's bf16 operands), op_costing
// times it.
int32_t supports_op(AccelDevice*, AccelOp op, AccelDType dtype) noexcept {
  return host_kernels::supports(op, dtype) ? 1 : 0;
}

// An epilogue the timing model can cost (fused_work) and the host kernels run.
int32_t supports_epilogue(AccelDevice*, AccelOp op, AccelDType dtype, int32_t epilogue_flags,
                          AccelOp activation) noexcept {
  return epilogue_is_known(op, epilogue_flags, activation) &&
                 host_kernels::supports_epilogue(op, dtype, epilogue_flags, activation)
             ? 1
             : 0;
}

AccelStatus* buffer_allocate(AccelDevice* device, uint64_t bytes, AccelBuffer** buffer) noexcept {
  return guarded(device, [&] {
    sdk::require_argument(device != nullptr && buffer != nullptr, "null argument");
    *buffer = allocate_hbm(*device->core, bytes);
  });
}

void buffer_free(AccelDevice*, AccelBuffer* buffer) noexcept { free_hbm(buffer); }

AccelStatus* copy_host_to_device(AccelDevice* device, const void* source, AccelBuffer* destination, uint64_t offset,
                                 uint64_t bytes) noexcept {
  return guarded(device, [&] {
    sdk::require_argument(destination != nullptr && (source != nullptr || bytes == 0), "null argument");
    copy_in(source, *destination, offset, bytes);
  });
}

AccelStatus* copy_device_to_host(AccelDevice* device, AccelBuffer* source, uint64_t offset, void* destination,
                                 uint64_t bytes) noexcept {
  return guarded(device, [&] {
    sdk::require_argument(source != nullptr && (destination != nullptr || bytes == 0), "null argument");
    copy_out(*source, offset, destination, bytes);
  });
}

AccelStatus* copy_device_to_device(AccelDevice* device, AccelBuffer* source, uint64_t source_offset,
                                   AccelBuffer* destination, uint64_t destination_offset,
                                   uint64_t bytes) noexcept {
  return guarded(device, [&] {
    sdk::require_argument(source != nullptr && destination != nullptr, "null buffer");
    copy_between(*source, source_offset, *destination, destination_offset, bytes);
  });
}

AccelStatus* execute(AccelDevice* device, const AccelOpCall* call) noexcept {
  return guarded(device, [&] {
    sdk::require_argument(device != nullptr && call != nullptr, "null argument");
    execute_call(*device, *call);
  });
}

AccelStatus* synchronize(AccelDevice*) noexcept { return nullptr; }  // execution is synchronous

const void* get_extension(AccelPluginContext*, const char* name) noexcept {
  if (name == nullptr || std::strcmp(name, ACCEL_TPU_SIM_EXTENSION_NAME) != 0) return nullptr;
  return extension_table();
}

constexpr AccelPluginApi kApi = {
    sizeof(AccelPluginApi),
    ACCEL_PLUGIN_API_MAJOR,
    ACCEL_PLUGIN_API_MINOR,
    kPluginName,
    "0.1.0",
    initialize,
    physical_device_count,
    physical_device_info,
    no_device_reason,
    device_open,
    device_close,
    supports_op,
    buffer_allocate,
    buffer_free,
    copy_host_to_device,
    copy_device_to_host,
    copy_device_to_device,
    execute,
    synchronize,
    nullptr,  // memory_info: the core accounts memory per logical device
    get_extension,
    supports_epilogue,
    nullptr,  // recording_begin .. recording_release: no recording: a compiled step is timed as one program already
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace
}  // namespace accel::tpu_sim

extern "C" ACCEL_PLUGIN_EXPORT const AccelPluginApi* ACCEL_PLUGIN_ENTRY_POINT(void) {
  return &accel::tpu_sim::kApi;
}
