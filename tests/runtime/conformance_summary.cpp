// The conformance suite's per-device tables (see conformance_summary.hpp).
#include "conformance_summary.hpp"

#include <accel/config.hpp>
#include <accel/profiler.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>


namespace accel::conformance {
namespace {

std::mutex outcomes_mutex;
std::vector<CaseOutcome>& outcomes() {
  static std::vector<CaseOutcome> all;
  return all;
}

const char* dtype_label(AccelDType dtype) {
  switch (dtype) {
    case ACCEL_DTYPE_F32: return "f32";
    case ACCEL_DTYPE_BF16: return "bf16";
    case ACCEL_DTYPE_F16: return "f16";
    case ACCEL_DTYPE_I32: return "i32";
    case ACCEL_DTYPE_I64: return "i64";
    case ACCEL_DTYPE_U8: return "u8";
    case ACCEL_DTYPE_BOOL: return "bool";
    default: return "?";
  }
}

std::string dtype_list(const std::set<AccelDType>& dtypes) {
  if (dtypes.empty()) return "-";
  std::vector<std::string> labels;
  for (AccelDType dtype : dtypes) labels.push_back(dtype_label(dtype));
  return fmt::format("{}", fmt::join(labels, " "));
}

std::string case_list(const std::vector<std::string>& cases) {
  if (cases.empty()) return "-";
  constexpr size_t kShown = 3;
  std::vector<std::string> shown(cases.begin(), cases.begin() + static_cast<std::ptrdiff_t>(std::min(kShown, cases.size())));
  std::string text = fmt::format("{}", fmt::join(shown, ", "));
  if (cases.size() > kShown) text += fmt::format(" (+{} more)", cases.size() - kShown);
  return text;
}

// "plugin tpu_sim: /path/libaccel-plugin-tpu_sim.so" for a logical device name.
std::string plugin_of(const std::string& device) {
  std::string physical_name;
  for (const auto& logical : config::list_logical_devices()) {
    if (logical.name == device) physical_name = logical.physical_device;
  }
  std::string plugin;
  for (const auto& physical : config::list_physical_devices()) {
    if (physical.name == physical_name) plugin = physical.plugin;
  }
  for (const auto& loaded : runtime::loaded_plugins()) {
    if (loaded.name == plugin) return fmt::format("plugin {}: {}", loaded.name, loaded.path);
  }
  return plugin.empty() ? "plugin unknown" : "plugin " + plugin;
}

struct OpRow {
  std::set<AccelDType> native;
  std::set<AccelDType> fallback;
  std::vector<std::string> failed_cases;
};

std::string device_table(const std::string& device, const std::vector<const CaseOutcome*>& cases) {
  std::map<int32_t, OpRow> rows;
  std::vector<std::string> failed_without_native_op;
  size_t passed = 0, failed = 0, skipped = 0;
  for (const CaseOutcome* outcome : cases) {
    if (outcome->result == CaseResult::kSkipped) {
      ++skipped;
      continue;
    }
    (outcome->result == CaseResult::kPassed ? passed : failed) += 1;
    std::set<int32_t> native_ops;
    for (const OpRun& run : outcome->runs) {
      OpRow& row = rows[run.op];
      (run.fell_back ? row.fallback : row.native).insert(run.dtype);
      if (!run.fell_back) native_ops.insert(run.op);
    }
    if (outcome->result != CaseResult::kFailed) continue;
    // A CPU fallback matches the reference by construction: the failure is
    // the device's, so it is charged to the ops the device ran itself.
    for (int32_t op : native_ops) rows[op].failed_cases.push_back(outcome->case_name);
    if (native_ops.empty()) failed_without_native_op.push_back(outcome->case_name);
  }

  size_t width = 2;
  for (const auto& [op, row] : rows) width = std::max(width, profiler::op_name(op).size());
  size_t native_count = 0, fallback_count = 0, failed_count = 0;
  std::string text = fmt::format("\nConformance of {} ({})\n", device, plugin_of(device));
  text += fmt::format("  {:<{}}  {:<22}  {:<22}  {}\n", "op", width, "native on the device", "fell back to the CPU",
                      "failed in");
  for (const auto& [op, row] : rows) {
    native_count += row.native.empty() ? 0 : 1;
    fallback_count += row.fallback.empty() ? 0 : 1;
    failed_count += row.failed_cases.empty() ? 0 : 1;
    text += fmt::format("  {:<{}}  {:<22}  {:<22}  {}\n", profiler::op_name(op), width, dtype_list(row.native),
                        dtype_list(row.fallback), case_list(row.failed_cases));
  }
  if (!failed_without_native_op.empty()) {
    text += fmt::format("  failed before an op completed on the device: {}\n", case_list(failed_without_native_op));
  }
  text += fmt::format("  {} ops ran natively, {} fell back to the CPU, {} failed; cases: {} passed, {} failed, {} "
                      "skipped (optional kernels the device does not claim)\n",
                      native_count, fallback_count, failed_count, passed, failed, skipped);
  return text;
}

}  // namespace

OpRecorder::OpRecorder() : fallbacks_seen_(runtime::fallback_stats().ops) { detail::add_op_observer(this); }

OpRecorder::~OpRecorder() { stop(); }

void OpRecorder::stop() {
  if (recording_) detail::remove_op_observer(this);
  recording_ = false;
}

void OpRecorder::on_op_executed(const detail::ExecutedOp& op) {
  if (op.op < 0 || op.op >= ACCEL_OP_COUNT) return;  // reshape: not a device op
  // The dtype the runtime asks the device about (dispatch's principal dtype).
  AccelDType dtype = ACCEL_DTYPE_F32;
  if (op.op == ACCEL_OP_SELECT && op.inputs.size() > 1) {
    dtype = static_cast<AccelDType>(op.inputs[1].dtype());
  } else if (!op.inputs.empty()) {
    dtype = static_cast<AccelDType>(op.inputs[0].dtype());
  } else if (!op.outputs.empty()) {
    dtype = static_cast<AccelDType>(op.outputs[0].dtype());
  }
  const uint64_t fallbacks = runtime::fallback_stats().ops;
  runs_.push_back({op.op, dtype, fallbacks != fallbacks_seen_});
  fallbacks_seen_ = fallbacks;
}

void record_case(CaseOutcome outcome) {
  std::lock_guard lock(outcomes_mutex);
  outcomes().push_back(std::move(outcome));
}

std::string summary_tables() {
  std::lock_guard lock(outcomes_mutex);
  std::vector<std::string> devices;
  std::map<std::string, std::vector<const CaseOutcome*>> by_device;
  for (const CaseOutcome& outcome : outcomes()) {
    if (!by_device.contains(outcome.device)) devices.push_back(outcome.device);
    by_device[outcome.device].push_back(&outcome);
  }
  std::string text;
  for (const std::string& device : devices) text += device_table(device, by_device[device]);
  return text;
}

}  // namespace accel::conformance
