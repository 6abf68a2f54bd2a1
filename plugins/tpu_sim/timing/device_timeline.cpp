#include "timing/device_timeline.hpp"

#include "timing/checked_count.hpp"

namespace accel::tpu {

DeviceTimeline::DeviceTimeline(std::string device_name, int device_index, double clock_hz,
                               std::int64_t peak_macs_per_cycle)
    : device_name_(std::move(device_name)),
      device_index_(device_index),
      clock_hz_(clock_hz),
      peak_macs_per_cycle_(peak_macs_per_cycle) {}

void DeviceTimeline::record(const OpTiming& timing, std::string name) {
  events_.push_back({name.empty() ? timing.op : std::move(name), end_cycle_, timing});
  end_cycle_ = saturating_add(end_cycle_, timing.cycles);
}

DeviceTotals DeviceTimeline::totals() const {
  DeviceTotals totals;
  for (const auto& event : events_) {
    ++totals.ops;
    // Totals of a long run saturate rather than wrap to negative values.
    totals.cycles = saturating_add(totals.cycles, event.timing.cycles);
    totals.useful_macs = saturating_add(totals.useful_macs, event.timing.useful_macs);
    totals.hbm_bytes = saturating_add(totals.hbm_bytes, event.timing.hbm_bytes);
    totals.stall_cycles = saturating_add(totals.stall_cycles, event.timing.stall_cycles);
  }
  totals.seconds = static_cast<double>(totals.cycles) / clock_hz_;
  if (totals.cycles > 0) {
    totals.mxu_utilization = static_cast<double>(totals.useful_macs) /
                             (static_cast<double>(peak_macs_per_cycle_) * static_cast<double>(totals.cycles));
  }
  return totals;
}

nlohmann::json DeviceTimeline::trace_events() const {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", device_index_},
                    {"args", {{"name", device_name_}}}});
  const double us_per_cycle = 1e6 / clock_hz_;
  for (const auto& event : events_) {
    const OpTiming& t = event.timing;
    events.push_back({{"name", event.name},
                      {"cat", "tpu_sim"},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", device_index_},
                      {"ts", static_cast<double>(event.start_cycle) * us_per_cycle},
                      {"dur", static_cast<double>(t.cycles) * us_per_cycle},
                      {"args",
                       {{"cycles", t.cycles},
                        {"stall_cycles", t.stall_cycles},
                        {"mxu_utilization", t.mxu_utilization},
                        {"hbm_bytes", t.hbm_bytes},
                        {"bound", std::string(to_string(t.bound))}}}});
  }
  return events;
}

nlohmann::json DeviceTimeline::chrome_trace(const std::vector<DeviceTimeline>& devices) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& device : devices) {
    for (auto& event : device.trace_events()) events.push_back(std::move(event));
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
}

}  // namespace accel::tpu
