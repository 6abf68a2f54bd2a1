// Op records and their Chrome trace-event export (see accel/profiler.hpp).
#include <accel/profiler.hpp>

#include "runtime/logical_device.hpp"
#include "runtime/op_registry.hpp"
#include "runtime/profiler_state.hpp"

#include <accel/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

namespace accel {
namespace {

struct ProfilerState {
  std::atomic<bool> recording{false};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::mutex mutex;
  std::vector<profiler::OpRecord> records;
};

ProfilerState& state() {
  static auto* profiler = new ProfilerState();  // plugins may report during exit
  return *profiler;
}

profiler::TimeSource time_source(AccelTimeSource source) {
  switch (source) {
    case ACCEL_TIME_DEVICE: return profiler::TimeSource::kDevice;
    case ACCEL_TIME_SIMULATED: return profiler::TimeSource::kSimulated;
    default: return profiler::TimeSource::kWall;
  }
}

const char* time_source_name(profiler::TimeSource source) {
  switch (source) {
    case profiler::TimeSource::kDevice: return "device";
    case profiler::TimeSource::kSimulated: return "simulated";
    default: return "wall";
  }
}

}  // namespace

namespace detail {

bool profiler_recording() noexcept { return state().recording.load(std::memory_order_relaxed); }

void record_op_profile(const LogicalDevice& device, const AccelOpProfile& profile) {
  if (!profiler_recording() || profile.struct_size < offsetof(AccelOpProfile, detail_json)) return;
  // A field appended after 1.0 is read only when the plugin's struct holds it.
  const bool holds_detail = ACCEL_STRUCT_HOLDS(&profile, AccelOpProfile, detail_json);
  const bool named = ACCEL_STRUCT_HOLDS(&profile, AccelOpProfile, category) && profile.name != nullptr;
  profiler::OpRecord record;
  if (named) {  // not a primitive op: a collective or other plugin work
    record.op = profile.name;
    record.category = profile.category != nullptr ? profile.category : "other";
  } else {
    const OpInfo& info = op_info(profile.op);
    record.sequence = profile.sequence;
    record.op = op_display_name(profile.op);
    record.category = info.category;
  }
  record.device = device.name();
  record.time_source = time_source(profile.time_source);
  record.start_seconds = profile.start_seconds;
  if (profile.time_source == ACCEL_TIME_WALL && profile.start_seconds == 0.0) {
    // Host-timed ops: place them on the profiler's own timeline, ending now.
    record.start_seconds = std::max(0.0, profiler::elapsed_seconds() - profile.duration_seconds);
  }
  record.duration_seconds = profile.duration_seconds;
  record.cycles = profile.cycles;
  record.clock_hz = profile.clock_hz;
  record.flops = profile.flops;
  record.bytes_accessed = profile.bytes_accessed;
  record.utilization = profile.utilization;
  record.bound = profile.bound == ACCEL_BOUND_COMPUTE ? "compute"
                 : profile.bound == ACCEL_BOUND_MEMORY ? "memory" : "";
  if (holds_detail && profile.detail_json != nullptr) {
    record.detail_json = profile.detail_json;
  }
  std::lock_guard lock(state().mutex);
  state().records.push_back(std::move(record));
}

}  // namespace detail

namespace profiler {

std::string op_name(int32_t op) { return detail::op_display_name(op); }

void start() {
  std::lock_guard lock(state().mutex);
  state().records.clear();
  state().started = std::chrono::steady_clock::now();
  state().recording = true;
}

void stop() { state().recording = false; }
bool is_recording() { return detail::profiler_recording(); }

std::vector<OpRecord> records() {
  std::lock_guard lock(state().mutex);
  return state().records;
}

double elapsed_seconds() {
  std::lock_guard lock(state().mutex);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - state().started).count();
}

void record(OpRecord op) {
  if (!detail::profiler_recording()) return;
  std::lock_guard lock(state().mutex);
  state().records.push_back(std::move(op));
}

void write_chrome_trace(const std::string& path) {
  std::vector<OpRecord> all = records();
  std::map<std::string, int> process_ids;
  nlohmann::json events = nlohmann::json::array();
  for (const OpRecord& record : all) {
    auto [entry, inserted] = process_ids.try_emplace(record.device, static_cast<int>(process_ids.size()) + 1);
    if (inserted) {
      events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", entry->second},
                        {"args", {{"name", record.device}}}});
    }
    nlohmann::json args = {{"sequence", record.sequence}, {"time_source", time_source_name(record.time_source)}};
    if (record.cycles != 0) args["cycles"] = record.cycles;
    if (record.flops != 0) args["flops"] = record.flops;
    if (record.bytes_accessed != 0) args["bytes_accessed"] = record.bytes_accessed;
    if (record.utilization != 0) args["utilization"] = record.utilization;
    if (!record.bound.empty()) args["bound"] = record.bound;
    if (!record.detail_json.empty()) {
      args["detail"] = nlohmann::json::parse(record.detail_json, nullptr, false);
    }
    events.push_back({{"name", record.op}, {"cat", record.category}, {"ph", "X"},
                      {"pid", entry->second}, {"tid", 1},
                      {"ts", record.start_seconds * 1e6}, {"dur", record.duration_seconds * 1e6},
                      {"args", std::move(args)}});
  }
  std::filesystem::path target(path);
  std::filesystem::path temporary = target;
  temporary += ".tmp";
  {
    std::ofstream file(temporary);
    if (!file) throw NotFoundError("cannot write trace file " + temporary.string());
    file << nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}}.dump();
  }
  std::filesystem::rename(temporary, target);
}

}  // namespace profiler
}  // namespace accel
