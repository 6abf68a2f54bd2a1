// ResNet-50 (keras.applications' layout, 224x224x3, 1000 classes) trains one
// step at batch 8 on the CPU and on the emulated TPU v4; on the TPU every op
// of the step is timed by the emulator (simulated cycles), which is what the
// experiment report lists per op.
#include "model_zoo.hpp"

#include <accel/keras/backend.hpp>
#include <accel/ops.hpp>
#include <accel/placement.hpp>
#include <accel/profiler.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>

namespace accel::model_zoo {
namespace {

constexpr int64_t kBatch = 8;

struct Step {
  double loss = 0;
  double largest_kernel_change = 0;
  std::vector<profiler::OpRecord> records;
};

Step train_one_step(const std::string& device) {
  DeviceScope scope(device);
  keras::clear_session();
  keras::set_random_seed(3);
  const std::shared_ptr<keras::Model> model = resnet50({{224, 224, 3}, 1000});
  model->compile("sgd", "sparse_categorical_crossentropy");
  const Tensor images = ops::random_uniform(Shape{kBatch, 224, 224, 3}, 5);
  const Tensor labels = ops::cast(ops::random_uniform(Shape{kBatch}, 6, 0.0, 999.0), DType::kInt32);
  const Variable first_kernel = model->trainable_weights().front();
  const std::vector<float> before = first_kernel.value().to_vector<float>();

  profiler::start();
  const keras::History history = model->fit(images, labels, {.batch_size = kBatch, .verbose = 0});
  profiler::stop();

  Step step;
  step.loss = history.history.at("loss").back();
  const std::vector<float> after = first_kernel.value().to_vector<float>();
  for (size_t i = 0; i < before.size(); ++i) {
    step.largest_kernel_change = std::max(step.largest_kernel_change, static_cast<double>(std::abs(after[i] - before[i])));
  }
  step.records = profiler::records();
  return step;
}

TEST(ResNet50StepTest, TrainsOneStepAtBatch8OnTheCpu) {
  const Step step = train_one_step("/CPU:0");
  EXPECT_TRUE(std::isfinite(step.loss));
  EXPECT_GT(step.loss, 0.0);
  EXPECT_GT(step.largest_kernel_change, 0.0) << "the step must update conv1's kernel";
}

TEST(ResNet50StepTest, TrainsOneStepAtBatch8OnTheEmulatedTpuWithEveryOpTimed) {
  const Step step = train_one_step("/TPU:0");
  EXPECT_TRUE(std::isfinite(step.loss));
  EXPECT_GT(step.largest_kernel_change, 0.0);

  std::map<std::string, double> simulated_seconds;
  for (const profiler::OpRecord& record : step.records) {
    if (record.device.find("TPU") == std::string::npos) continue;
    EXPECT_EQ(record.time_source, profiler::TimeSource::kSimulated) << record.op;
    simulated_seconds[record.op] += record.duration_seconds;
  }
  // The convolutions forward and backward, the classifier's matmul and the
  // optimizer's update are all on the TPU's timeline with a simulated time.
  for (const char* op : {"Conv2D", "Conv2DBackpropInput (CONV2D_BACKWARD_INPUT)",
                         "Conv2DBackpropFilter (CONV2D_BACKWARD_FILTER)", "MatMul"}) {
    ASSERT_TRUE(simulated_seconds.count(op)) << op << " did not run on the TPU";
    EXPECT_GT(simulated_seconds[op], 0.0) << op;
  }
  // Every op on the TPU's timeline has its own simulated time (what the
  // report lists); the breakdown is printed for the reader.
  double total = 0;
  for (const auto& [op, seconds] : simulated_seconds) {
    EXPECT_GT(seconds, 0.0) << op;
    total += seconds;
  }
  for (const auto& [op, seconds] : simulated_seconds) {
    std::fprintf(stderr, "  %-28s %9.3f ms  %5.1f %%\n", op.c_str(), seconds * 1e3, 100.0 * seconds / total);
  }
  std::fprintf(stderr, "  simulated step: %.3f ms\n", total * 1e3);
}

}  // namespace
}  // namespace accel::model_zoo
