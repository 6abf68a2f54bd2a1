#include "buffered_producer.hpp"

#include <accel/placement.hpp>

#include "element_codec.hpp"

namespace accel::data::detail {

BufferedProducer::BufferedProducer(std::unique_ptr<IteratorNode> input, MapFunction transform,
                                   BufferedProducerSettings settings, const IteratorContext& context)
    : transform_(std::move(transform)),
      settings_(std::move(settings)),
      host_device_(context.host_device),
      input_(std::move(input)),
      tuner_(settings_.initial, settings_.tune_parallelism, settings_.tune_depth, context.budget) {
  std::lock_guard lock(mutex_);
  start_workers_locked();
}

BufferedProducer::~BufferedProducer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_all();
  result_available_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void BufferedProducer::start_workers_locked() {
  while (static_cast<int32_t>(workers_.size()) < tuner_.knobs().parallelism) {
    auto index = static_cast<int32_t>(workers_.size());
    workers_.emplace_back([this, index] { worker_loop(index); });
  }
}

void BufferedProducer::worker_loop(int32_t worker_index) {
  // Ops a map function calls run on the host, never on an accelerator.
  DeviceScope on_host(host_device_);
  std::unique_lock lock(mutex_);
  while (true) {
    work_available_.wait(lock, [&] {
      return stopping_ || (!paused_ && !input_exhausted_ && worker_index < tuner_.knobs().parallelism &&
                           slots_taken_ < tuner_.knobs().depth);
    });
    if (stopping_) return;
    ++slots_taken_;
    ++in_flight_;
    lock.unlock();

    uint64_t sequence = 0;
    Result result;
    {
      std::lock_guard pull(pull_mutex_);
      sequence = next_pull_sequence_++;
      if (!input_returned_end_) {
        try {
          result.element = input_->next();
        } catch (...) {
          result.error = std::current_exception();
        }
        // After an input error the stream ends: the error is its last item.
        if (!result.element) input_returned_end_ = true;
      }
    }
    if (result.element && transform_) {
      try {
        result.element = transform_(*result.element);
      } catch (...) {
        result.error = std::current_exception();
        result.element.reset();
      }
    }

    lock.lock();
    --in_flight_;
    if (!result.element && !result.error) {
      input_exhausted_ = true;
      end_sequence_ = std::min(end_sequence_, sequence);
      --slots_taken_;
    } else {
      if (result.element) {
        ++elements_produced_;
      }
      ready_.emplace(sequence, std::move(result));
    }
    result_available_.notify_all();
  }
}

std::optional<Element> BufferedProducer::next() {
  std::unique_lock lock(mutex_);
  std::chrono::steady_clock::time_point wait_start;
  bool waited = false;
  Result result;
  while (true) {
    auto found = settings_.deterministic ? ready_.find(next_output_sequence_) : ready_.begin();
    if (found != ready_.end()) {
      result = std::move(found->second);
      ready_.erase(found);
      ++next_output_sequence_;
      break;
    }
    bool at_end = settings_.deterministic ? next_output_sequence_ >= end_sequence_
                                          : input_exhausted_ && in_flight_ == 0 && ready_.empty();
    if (at_end) return std::nullopt;
    if (!waited) {
      waited = true;
      wait_start = std::chrono::steady_clock::now();
      ++consumer_waits_;
    }
    result_available_.wait(lock);
  }
  auto waited_for = waited ? std::chrono::steady_clock::now() - wait_start : std::chrono::nanoseconds(0);
  consumer_waited_ += std::chrono::duration_cast<std::chrono::nanoseconds>(waited_for);
  --slots_taken_;
  uint64_t bytes = result.element ? result.element->byte_size() : 0;
  if (tuner_.observe(std::chrono::duration_cast<std::chrono::nanoseconds>(waited_for), bytes)) {
    start_workers_locked();
  }
  lock.unlock();
  work_available_.notify_all();
  if (result.error) std::rethrow_exception(result.error);
  return std::move(result.element);
}

void BufferedProducer::pause_locked(std::unique_lock<std::mutex>& lock) {
  paused_ = true;
  result_available_.wait(lock, [&] { return in_flight_ == 0; });
}

void BufferedProducer::resume_locked() {
  paused_ = false;
  work_available_.notify_all();
}

void BufferedProducer::save(nlohmann::json& state) {
  std::unique_lock lock(mutex_);
  pause_locked(lock);
  {
    std::lock_guard pull(pull_mutex_);
    input_->save(state["input"]);
    state["input_returned_end"] = input_returned_end_;
  }
  nlohmann::json buffered = nlohmann::json::array();
  for (const auto& [sequence, result] : ready_) {
    // A pending error is not state worth keeping: restoring re-runs nothing for it.
    if (result.element) buffered.push_back(nlohmann::json::binary(encode_element(*result.element)));
  }
  state["buffered"] = std::move(buffered);
  state["input_exhausted"] = input_exhausted_;
  resume_locked();
}

void BufferedProducer::restore(const nlohmann::json& state) {
  std::unique_lock lock(mutex_);
  pause_locked(lock);
  ready_.clear();
  uint64_t count = 0;
  for (const auto& encoded : state.at("buffered")) {
    MemoryElementReader reader(encoded.get_binary(), "iterator checkpoint (" + settings_.transformation + " buffer)");
    ready_.emplace(count++, Result{decode_element(reader), nullptr});
  }
  {
    std::lock_guard pull(pull_mutex_);
    input_->restore(state.at("input"));
    input_returned_end_ = state.at("input_returned_end").get<bool>();
    next_pull_sequence_ = count;
  }
  slots_taken_ = static_cast<int32_t>(count);
  next_output_sequence_ = 0;
  input_exhausted_ = state.at("input_exhausted").get<bool>();
  end_sequence_ = input_exhausted_ ? count : UINT64_MAX;
  resume_locked();
}

NodeReport BufferedProducer::report() const {
  std::lock_guard lock(mutex_);
  NodeReport report;
  report.transformation = settings_.transformation;
  report.autotuned = tuner_.autotuned();
  report.parallelism = tuner_.knobs().parallelism;
  report.buffer_depth = tuner_.knobs().depth;
  report.elements_produced = elements_produced_;
  report.consumer_waits = consumer_waits_;
  report.consumer_wait_seconds = std::chrono::duration<double>(consumer_waited_).count();
  report.average_element_bytes = tuner_.average_element_bytes();
  return report;
}

void BufferedProducer::report_input(std::vector<NodeReport>& reports) const {
  std::lock_guard pull(pull_mutex_);
  input_->report(reports);
}

}  // namespace accel::data::detail
