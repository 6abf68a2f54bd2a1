#include "op_benchmark.hpp"

#include "step_recorder.hpp"

#include <accel/error.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/plugin/accel_plugin.h>
#include <accel/profiler.hpp>
#include <accel/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>

namespace accel::experiment {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  return values[values.size() / 2];
}

Tensor random_input(const Shape& shape, DType dtype, uint64_t seed) {
  const Tensor values = ops::random_uniform(shape, seed, -1.0, 1.0);
  return dtype == DType::kFloat32 ? values : ops::cast(values, dtype);
}

// One benchmarked op: its inputs made on the device, the call, and its work.
struct Workload {
  std::string profiled_op;  // what the profiler's records call it: profiler::op_name
  std::function<Tensor()> run;
  double flops = 0;
  double bytes = 0;
};

Workload make_workload(const std::string& op, const std::vector<int64_t>& size, DType dtype) {
  const double element_bytes = static_cast<double>(dtype_size(dtype));
  if (op == "matmul") {
    const int64_t m = size[0];
    const int64_t n = size.size() == 3 ? size[1] : size[0];
    const int64_t k = size.size() == 3 ? size[2] : size[0];
    Tensor a = random_input(Shape{m, k}, dtype, 1);
    Tensor b = random_input(Shape{k, n}, dtype, 2);
    return {profiler::op_name(ACCEL_OP_MATMUL), [a, b] { return ops::matmul(a, b); }, 2.0 * m * n * k,
            element_bytes * static_cast<double>(m * k + k * n + m * n)};
  }
  if (op == "conv2d") {
    const int64_t batch = size[0], height = size[1], width = size[2], channels = size[3], filters = size[4],
                  rows = size[5], columns = size[6];
    Tensor input = random_input(Shape{batch, height, width, channels}, dtype, 1);
    Tensor filter = random_input(Shape{rows, columns, channels, filters}, dtype, 2);
    const int64_t out_height = height - rows + 1, out_width = width - columns + 1;
    const double outputs = static_cast<double>(batch * out_height * out_width * filters);
    return {profiler::op_name(ACCEL_OP_CONV2D), [input, filter] { return ops::conv2d(input, filter); },
            2.0 * outputs * static_cast<double>(rows * columns * channels),
            element_bytes * (static_cast<double>(batch * height * width * channels + rows * columns * channels * filters) +
                             outputs)};
  }
  if (op == "softmax") {
    const int64_t rows = size[0];
    const int64_t columns = size.size() > 1 ? size[1] : size[0];
    Tensor logits = random_input(Shape{rows, columns}, dtype, 1);
    return {profiler::op_name(ACCEL_OP_SOFTMAX), [logits] { return ops::softmax(logits); },
            5.0 * static_cast<double>(rows * columns), 2.0 * element_bytes * static_cast<double>(rows * columns)};
  }
  const int64_t elements = size[0];
  Tensor x = random_input(Shape{elements}, dtype, 1);
  if (op == "add") {
    Tensor y = random_input(Shape{elements}, dtype, 2);
    return {profiler::op_name(ACCEL_OP_ADD), [x, y] { return ops::add(x, y); }, static_cast<double>(elements),
            3.0 * element_bytes * static_cast<double>(elements)};
  }
  if (op == "relu") {
    return {profiler::op_name(ACCEL_OP_RELU), [x] { return ops::relu(x); }, static_cast<double>(elements),
            2.0 * element_bytes * static_cast<double>(elements)};
  }
  throw InvalidArgumentError(fmt::format("benchmark: unknown op '{}'", op));
}

BenchmarkPoint time_size(const BenchmarkConfig& benchmark, const std::vector<int64_t>& size, const Device& device) {
  DeviceScope on_device(device);
  const DType dtype = parse_dtype(benchmark.dtype);
  const Workload workload = make_workload(benchmark.op, size, dtype);
  for (int64_t round = 0; round < benchmark.warmup; ++round) workload.run();
  runtime::synchronize();
  std::vector<double> device_seconds;
  std::vector<double> wall_seconds;
  std::string time_source = kMeasuredWall;
  for (int64_t round = 0; round < benchmark.repeats; ++round) {
    profiler::start();
    const Clock::time_point start = Clock::now();
    workload.run();
    runtime::synchronize();
    wall_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    profiler::stop();
    double op_seconds = 0;
    for (const profiler::OpRecord& record : profiler::records()) {
      // Wherever it ran: an op the device lacks runs on the CPU (and says so in the placement log).
      if (record.op != workload.profiled_op) continue;
      op_seconds += record.duration_seconds;
      time_source = time_source_label(record.time_source);
    }
    device_seconds.push_back(op_seconds);
  }
  BenchmarkPoint point;
  point.op = benchmark.op;
  point.size = size;
  point.dtype = benchmark.dtype;
  point.repeats = benchmark.repeats;
  point.flops = workload.flops;
  point.bytes = workload.bytes;
  point.seconds = median(device_seconds);
  point.time_source = time_source;
  point.wall_seconds = median(wall_seconds);
  return point;
}

}  // namespace

std::vector<BenchmarkPoint> run_op_benchmark(const BenchmarkConfig& benchmark, const std::string& device_name,
                                             const std::atomic<bool>* interrupt) {
  const Device device = find_device(device_name);
  std::vector<BenchmarkPoint> points;
  for (const std::vector<int64_t>& size : benchmark.sizes) {
    if (interrupt != nullptr && interrupt->load()) break;
    points.push_back(time_size(benchmark, size, device));
  }
  return points;
}

}  // namespace accel::experiment
