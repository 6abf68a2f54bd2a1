// schedule_device_step: one chip's step as a static schedule, the chip
// running one op at a time and each network one collective at a time
// (tpu_pod_estimate.hpp says the rules). With the blocks as a loop, each
// block call is an iteration of a while loop, as MaxText's scan over its
// decoder layers compiles: XLA schedules a loop's body on its own, so a
// collective of an iteration overlaps only that iteration's ops, the next
// iteration starts once all of this one's collectives are done, what reads
// the loop's results waits for the whole loop, and nothing else runs on the
// chip while it runs.
#include <accel/experiment/tpu_pod_estimate.hpp>

#include <accel/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace accel::experiment {
namespace {

using keras::distribution::DeviceStepAnalysis;
using keras::distribution::StepEvent;

// The loops the block calls make: the forward calls one loop, the backward
// calls another, iterations in program order.
struct BlockLoops {
  std::vector<int32_t> iteration_of;   // per event; -1: outside the loops
  std::vector<int32_t> loop_of;        // per iteration: 0 forward, 1 backward
  std::vector<int32_t> previous;       // per iteration: the one before it in its loop, -1 for the first
  std::vector<int32_t> events_in;      // per iteration
  std::array<int32_t, 2> loop_events{0, 0};
  // Per loop: the events outside it that its events read (the loop's
  // operands), and per event outside, the loops that read it.
  std::array<std::set<size_t>, 2> operands;
  std::vector<std::vector<int32_t>> operand_of;
};

BlockLoops find_block_loops(const std::vector<StepEvent>& events, bool scan_layers) {
  BlockLoops loops;
  loops.iteration_of.assign(events.size(), -1);
  loops.operand_of.resize(events.size());
  if (!scan_layers) return loops;
  std::map<std::pair<bool, int32_t>, int32_t> iteration_of_call;
  std::array<int32_t, 2> last{-1, -1};
  for (size_t index = 0; index < events.size(); ++index) {
    const StepEvent& event = events[index];
    if (event.block < 0) continue;
    auto [found, added] = iteration_of_call.try_emplace({event.backward, event.block},
                                                        static_cast<int32_t>(loops.loop_of.size()));
    if (added) {
      const int32_t loop = event.backward ? 1 : 0;
      loops.loop_of.push_back(loop);
      loops.previous.push_back(last[static_cast<size_t>(loop)]);
      loops.events_in.push_back(0);
      last[static_cast<size_t>(loop)] = found->second;
    }
    loops.iteration_of[index] = found->second;
    ++loops.events_in[static_cast<size_t>(found->second)];
    ++loops.loop_events[static_cast<size_t>(loops.loop_of[static_cast<size_t>(found->second)])];
  }
  for (size_t index = 0; index < events.size(); ++index) {
    const int32_t iteration = loops.iteration_of[index];
    if (iteration < 0) continue;
    const auto loop = static_cast<size_t>(loops.loop_of[static_cast<size_t>(iteration)]);
    for (int32_t from : events[index].inputs_from) {
      if (from < 0 || static_cast<size_t>(from) >= events.size()) continue;  // refused below
      if (loops.iteration_of[static_cast<size_t>(from)] >= 0) continue;
      if (loops.operands[loop].insert(static_cast<size_t>(from)).second) {
        loops.operand_of[static_cast<size_t>(from)].push_back(static_cast<int32_t>(loop));
      }
    }
  }
  return loops;
}

}  // namespace

PodSchedule schedule_device_step(const DeviceStepAnalysis& analysis, const std::vector<ScheduledCollective>& collectives,
                                 bool scan_layers) {
  const std::vector<StepEvent>& events = analysis.events;
  if (collectives.size() != analysis.collectives.size()) {
    throw InvalidArgumentError(fmt::format("schedule_device_step: {} collective times for {} collectives",
                                           collectives.size(), analysis.collectives.size()));
  }
  const bool any_asynchronous = std::any_of(collectives.begin(), collectives.end(),
                                            [](const ScheduledCollective& collective) { return collective.asynchronous; });
  const size_t count = events.size();
  PodSchedule schedule;
  // Which events each one feeds, and how many of its inputs are still to come.
  std::vector<std::vector<size_t>> readers(count);
  std::vector<int32_t> waiting_inputs(count, 0);
  for (size_t index = 0; index < count; ++index) {
    for (int32_t from : events[index].inputs_from) {
      if (from < 0 || static_cast<size_t>(from) >= index) {
        throw InvalidArgumentError(fmt::format("schedule_device_step: event {} reads event {}, not an earlier one", index, from));
      }
      readers[static_cast<size_t>(from)].push_back(index);
      ++waiting_inputs[index];
    }
  }
  const BlockLoops loops = find_block_loops(events, scan_layers);
  auto loop_of_event = [&](size_t index) {
    const int32_t iteration = loops.iteration_of[index];
    return iteration < 0 ? -1 : loops.loop_of[static_cast<size_t>(iteration)];
  };
  // Ops that read only what exists from the step's start (a weight's cast,
  // no batch): XLA's scheduler moves them, and the gathers they feed, early.
  std::vector<bool> early(count, false);
  for (size_t index = 0; index < count; ++index) {
    const StepEvent& event = events[index];
    early[index] = any_asynchronous && !event.reads_batch &&
                   std::all_of(event.inputs_from.begin(), event.inputs_from.end(),
                               [&](int32_t from) { return early[static_cast<size_t>(from)]; });
  }
  std::vector<double> ready(count, 0.0);  // when its last input came to exist
  std::vector<double> end(count, 0.0);
  std::vector<bool> scheduled(count, false);
  std::array<double, 2> links_free{0, 0};  // per network
  double compute_free = 0;
  // The loops' progress: an event of an iteration waits for the one before
  // it (its first for the loop's operands), what reads a loop's events from
  // outside it for the whole loop.
  const size_t iterations = loops.loop_of.size();
  std::vector<int32_t> iteration_left(loops.events_in.begin(), loops.events_in.end());
  std::vector<double> iteration_end(iterations, 0.0);
  std::vector<std::vector<size_t>> waiting_for_iteration(iterations);
  std::array<int32_t, 2> loop_left = loops.loop_events;
  std::array<size_t, 2> operands_left{loops.operands[0].size(), loops.operands[1].size()};
  std::array<double, 2> loop_start{0, 0};
  std::array<double, 2> loop_end{0, 0};
  std::array<std::vector<size_t>, 2> waiting_for_loop;  // events outside it that read its events
  std::array<std::vector<size_t>, 2> waiting_for_operands;  // its first iterations' events
  int32_t running_loop = -1;                                // whose ops alone the chip runs now
  // Ops whose inputs exist, by (not early, program order): the chip runs the
  // first of those ready by the time it is free, else the one ready first.
  using Candidate = std::pair<bool, size_t>;
  std::set<Candidate> ready_ops;
  auto collective_of = [&](size_t event) -> const ScheduledCollective& {
    return collectives[static_cast<size_t>(events[event].collective)];
  };
  std::function<void(size_t)> complete;
  // Asynchronous collectives whose operands exist, per network in that
  // order, started as the chip's time reaches the moment the links can take
  // them: a synchronous collective the chip reaches first goes before those
  // not yet started (it blocks the chip; they wait on the links).
  std::array<std::deque<size_t>, 2> waiting_for_links;
  auto network_of = [&](size_t event) { return collective_of(event).network == 1 ? size_t{1} : size_t{0}; };
  auto link_start = [&](size_t network) {
    return std::max(links_free[network], ready[waiting_for_links[network].front()]);
  };
  // Starts the first waiting collective of the network that can start
  // soonest, if it starts by `time`; false if none does.
  auto start_on_links = [&](double time) {
    size_t network = 2;
    for (size_t candidate = 0; candidate < 2; ++candidate) {
      if (waiting_for_links[candidate].empty()) continue;
      if (network == 2 || link_start(candidate) < link_start(network)) network = candidate;
    }
    if (network == 2 || link_start(network) > time) return false;
    const size_t index = waiting_for_links[network].front();
    const double start = link_start(network);
    waiting_for_links[network].pop_front();
    end[index] = start + collective_of(index).seconds;
    links_free[network] = end[index];
    schedule.link_busy_seconds += collective_of(index).seconds;
    complete(index);
    return true;
  };
  auto start_when_ready = [&](size_t index) {
    const StepEvent& event = events[index];
    switch (event.kind) {
      case StepEvent::Kind::kFree:
        end[index] = ready[index];
        complete(index);
        break;
      case StepEvent::Kind::kCollective:
        if (collective_of(index).asynchronous) {
          waiting_for_links[network_of(index)].push_back(index);
        } else {
          ready_ops.insert({true, index});  // on the chip, in program order
        }
        break;
      case StepEvent::Kind::kOp:
        ready_ops.insert({!early[index], index});
        break;
    }
  };
  // Its inputs exist: held back until its loop lets it start, and while
  // it reads what another loop makes, until that loop has ended.
  auto available = [&](size_t index) {
    const int32_t iteration = loops.iteration_of[index];
    const int32_t own_loop = loop_of_event(index);
    for (int32_t from : events[index].inputs_from) {
      const int32_t loop = loop_of_event(static_cast<size_t>(from));
      if (loop < 0 || loop == own_loop) continue;
      if (loop_left[static_cast<size_t>(loop)] > 0) {
        waiting_for_loop[static_cast<size_t>(loop)].push_back(index);
        return;
      }
      ready[index] = std::max(ready[index], loop_end[static_cast<size_t>(loop)]);
    }
    if (iteration >= 0) {
      const auto loop = static_cast<size_t>(loops.loop_of[static_cast<size_t>(iteration)]);
      const int32_t previous = loops.previous[static_cast<size_t>(iteration)];
      if (previous < 0 && operands_left[loop] > 0) {
        waiting_for_operands[loop].push_back(index);
        return;
      }
      if (previous >= 0 && iteration_left[static_cast<size_t>(previous)] > 0) {
        waiting_for_iteration[static_cast<size_t>(previous)].push_back(index);
        return;
      }
      ready[index] = std::max(ready[index], previous < 0 ? loop_start[loop] : iteration_end[static_cast<size_t>(previous)]);
    }
    start_when_ready(index);
  };
  auto release = [&](std::vector<size_t>& waiting) {
    std::vector<size_t> released = std::move(waiting);
    waiting.clear();
    for (size_t index : released) available(index);
  };
  complete = [&](size_t index) {
    if (scheduled[index]) throw InternalError(fmt::format("schedule_device_step: event {} scheduled twice", index));
    scheduled[index] = true;
    if (const int32_t iteration = loops.iteration_of[index]; iteration >= 0) {
      const auto at = static_cast<size_t>(iteration);
      const auto loop = static_cast<size_t>(loops.loop_of[at]);
      iteration_end[at] = std::max(iteration_end[at], end[index]);
      loop_end[loop] = std::max(loop_end[loop], end[index]);
      if (--loop_left[loop] == 0) {
        if (running_loop == static_cast<int32_t>(loop)) running_loop = -1;
      }
      if (--iteration_left[at] == 0) release(waiting_for_iteration[at]);
      if (loop_left[loop] == 0) release(waiting_for_loop[loop]);
    }
    for (int32_t loop : loops.operand_of[index]) {
      const auto at = static_cast<size_t>(loop);
      loop_start[at] = std::max(loop_start[at], end[index]);
      if (--operands_left[at] == 0) release(waiting_for_operands[at]);
    }
    for (size_t reader : readers[index]) {
      ready[reader] = std::max(ready[reader], end[index]);
      if (--waiting_inputs[reader] == 0) available(reader);
    }
  };
  // What reads nothing starts the step (collected first: completing one
  // makes others available, which must not be made so twice).
  std::vector<size_t> reading_nothing;
  for (size_t index = 0; index < count; ++index) {
    if (waiting_inputs[index] == 0) reading_nothing.push_back(index);
  }
  for (size_t index : reading_nothing) available(index);
  while (true) {
    if (ready_ops.empty()) {
      // The chip waits for the links: the next collective starts, whenever.
      if (!start_on_links(std::numeric_limits<double>::infinity())) break;
      continue;
    }
    // The first candidate (early ones, then program order) ready by
    // compute_free, else the earliest ready; while a loop runs, only its ops
    // are candidates (when none of them can run, the chip waits for the
    // links, and only if nothing is on them runs another op).
    auto chosen = ready_ops.end();
    bool any_of_running_loop = false;
    if (running_loop >= 0) {
      for (const Candidate& candidate : ready_ops) {
        if (loop_of_event(candidate.second) == running_loop) {
          any_of_running_loop = true;
          break;
        }
      }
      if (!any_of_running_loop && start_on_links(std::numeric_limits<double>::infinity())) continue;
    }
    for (auto candidate = ready_ops.begin(); candidate != ready_ops.end(); ++candidate) {
      if (any_of_running_loop && loop_of_event(candidate->second) != running_loop) continue;
      if (ready[candidate->second] <= compute_free) {
        chosen = candidate;
        break;
      }
      if (chosen == ready_ops.end() || ready[candidate->second] < ready[chosen->second]) chosen = candidate;
    }
    const size_t index = chosen->second;
    // The collectives the links start before this op would: what they make
    // may change the choice.
    if (start_on_links(std::max(compute_free, ready[index]))) continue;
    ready_ops.erase(chosen);
    const StepEvent& event = events[index];
    if (const int32_t loop = loop_of_event(index); loop >= 0) running_loop = loop;
    const double start = std::max(compute_free, ready[index]);
    double seconds = event.seconds;
    if (event.kind == StepEvent::Kind::kCollective) {  // synchronous: the chip and the links both wait
      double& free = links_free[network_of(index)];
      seconds = collective_of(index).seconds;
      end[index] = std::max(start, free) + seconds;
      free = end[index];
      schedule.link_busy_seconds += seconds;
    } else {
      schedule.compute_seconds += seconds;
      end[index] = start + seconds;
    }
    compute_free = end[index];
    complete(index);
  }
  for (size_t index = 0; index < count; ++index) {
    if (!scheduled[index]) {
      throw InternalError(fmt::format("schedule_device_step: event {} ({}) was never scheduled", index, events[index].label));
    }
  }
  schedule.step_seconds = compute_free;
  for (double time : end) schedule.step_seconds = std::max(schedule.step_seconds, time);
  schedule.exposed_collective_seconds = std::max(0.0, schedule.step_seconds - schedule.compute_seconds);
  return schedule;
}

}  // namespace accel::experiment
