// Compiled steps replayed as device recordings (plugin API 1.5) on the
// recording test plugin (recording_plugin.cpp): a run of nodes is recorded
// once and replayed while its buffers stay where they were; it is recorded
// again when they move and given up, with the reason, when they keep moving
// or when the device cannot record one of its ops. A batch on the host is
// staged into a buffer kept on the device, so its run is recorded too. Replays give bit for bit
// what node-by-node dispatch gives, also for a compiled Keras training step
// whose weights the optimizer updates between replays.
#include <accel/accel.hpp>
#include <accel/config.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/layers.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/keras/sequential.hpp>
#include <accel/profiler.hpp>
#include <accel/runtime.hpp>

#include <gtest/gtest.h>

#include "../../common/batch_losses.hpp"

#include <memory>
#include <string>
#include <vector>

namespace accel {
namespace {

constexpr const char* kRecording = "/RECORDING:0";

std::vector<float> on_host(const Tensor& tensor) { return tensor.to(find_device("/CPU:0")).to_vector<float>(); }

// Three chained products on the recording device: the first two write the
// arena, the last the result (a kept buffer, handed out as a copy).
struct Chain {
  Tensor w1, w2, w3;
  std::vector<Tensor> operator()(const std::vector<Tensor>& arguments) const {
    DeviceScope on_device(kRecording);
    return {ops::matmul(ops::matmul(ops::matmul(arguments[0], w1), w2), w3)};
  }
};

Chain make_chain(const std::string& device) {
  DeviceScope scope(device);
  return {ops::random_normal(Shape{16, 32}, 1), ops::random_normal(Shape{32, 32}, 2), ops::random_normal(Shape{32, 8}, 3)};
}

Tensor argument(const std::string& device, uint64_t seed) {
  DeviceScope scope(device);
  return ops::random_normal(Shape{4, 16}, seed);
}

class RecordedReplay : public ::testing::Test {
 protected:
  void TearDown() override { config::set_setting("recording_test.refuse_op", "none"); }
};

TEST_F(RecordedReplay, ReplaysTheRunWhileItsBuffersStayAndMatchesDispatch) {
  const Chain chain = make_chain(kRecording);
  Function recorded = function([&](const std::vector<Tensor>& arguments) { return chain(arguments); });
  const Tensor x = argument(kRecording, 4);
  const std::vector<float> expected = on_host(chain({x})[0]);
  std::vector<std::vector<float>> results;
  for (int call = 0; call < 5; ++call) results.push_back(on_host(recorded({x})[0]));
  for (const std::vector<float>& result : results) EXPECT_EQ(result, expected);

  const FunctionStatistics statistics = recorded.statistics();
  EXPECT_EQ(statistics.replays, 5);  // the first call traced, then ran the program too
  EXPECT_EQ(statistics.recorded_runs, 1);
  EXPECT_EQ(statistics.recorded_nodes, 3);
  EXPECT_EQ(statistics.recordings, 1);
  EXPECT_EQ(statistics.recorded_replays, 5);
  EXPECT_EQ(statistics.recording_reason, "");
}

// x, also read by a host op, is not staged: the products read the caller's
// buffer, a new one at every call.
std::vector<Tensor> chain_and_host_square(const Chain& chain, const std::vector<Tensor>& arguments) {
  std::vector<Tensor> results = chain(arguments);
  DeviceScope on_host("/CPU:0");
  results.push_back(ops::mul(arguments[0], arguments[0]));
  return results;
}

TEST_F(RecordedReplay, RecordsAgainWhenBuffersMoveAndGivesUpWhenTheyKeepMoving) {
  const Chain chain = make_chain(kRecording);
  Function recorded = function([&](const std::vector<Tensor>& arguments) { return chain_and_host_square(chain, arguments); });
  for (uint64_t call = 0; call < 6; ++call) {
    const Tensor x = argument(kRecording, 10 + call);  // a new buffer every call
    EXPECT_EQ(on_host(recorded({x})[0]), on_host(chain({x})[0])) << "call " << call;
  }
  const FunctionStatistics statistics = recorded.statistics();
  EXPECT_EQ(statistics.recordings, 3);
  EXPECT_EQ(statistics.recorded_replays, 3);  // each recording ran once
  EXPECT_EQ(statistics.recorded_runs, 0);
  EXPECT_NE(statistics.recording_reason.find("buffers moved in 3 runs in a row"), std::string::npos)
      << statistics.recording_reason;
}

TEST_F(RecordedReplay, AnOpTheDeviceCannotRecordLeavesTheRunToDispatchWithTheReason) {
  config::set_setting("recording_test.refuse_op", "MATMUL");
  const Chain chain = make_chain(kRecording);
  Function recorded = function([&](const std::vector<Tensor>& arguments) { return chain(arguments); });
  const Tensor x = argument(kRecording, 5);
  const std::vector<float> expected = on_host(chain({x})[0]);
  for (int call = 0; call < 3; ++call) EXPECT_EQ(on_host(recorded({x})[0]), expected) << "call " << call;
  const FunctionStatistics statistics = recorded.statistics();
  EXPECT_EQ(statistics.recordings, 0);
  EXPECT_EQ(statistics.recorded_runs, 0);
  EXPECT_NE(statistics.recording_reason.find("MATMUL cannot be recorded here"), std::string::npos)
      << statistics.recording_reason;
}

TEST_F(RecordedReplay, ANewHostBatchEveryCallIsStagedOntoTheDeviceAndTheRunReplayed) {
  const Chain chain = make_chain(kRecording);
  Function recorded = function([&](const std::vector<Tensor>& arguments) { return chain(arguments); });
  std::vector<Tensor> batches, results;
  for (uint64_t call = 0; call < 5; ++call) {
    batches.push_back(argument("/CPU:0", 20 + call));  // as fit cuts each batch on the host
    results.push_back(recorded({batches.back()})[0]);
  }
  // Checked after the last call: each result is the caller's own tensor,
  // not the buffer the recording writes at every replay.
  for (size_t call = 0; call < batches.size(); ++call) {
    EXPECT_EQ(on_host(results[call]), on_host(chain({batches[call]})[0])) << "call " << call;
  }
  const FunctionStatistics statistics = recorded.statistics();
  EXPECT_EQ(statistics.recorded_runs, 1);
  EXPECT_EQ(statistics.recorded_nodes, 3);
  EXPECT_EQ(statistics.recordings, 1);  // the batch is copied into the same device buffer each call
  EXPECT_EQ(statistics.recorded_replays, 5);
}

TEST_F(RecordedReplay, ANewDeviceBufferEveryCallIsStagedToo) {
  const Chain chain = make_chain(kRecording);
  Function recorded = function([&](const std::vector<Tensor>& arguments) { return chain(arguments); });
  for (uint64_t call = 0; call < 5; ++call) {
    const Tensor x = argument(kRecording, 50 + call);  // as a strategy copies each batch to its device
    EXPECT_EQ(on_host(recorded({x})[0]), on_host(chain({x})[0])) << "call " << call;
  }
  const FunctionStatistics statistics = recorded.statistics();
  EXPECT_EQ(statistics.recorded_runs, 1);
  EXPECT_EQ(statistics.recordings, 1);
  EXPECT_EQ(statistics.recorded_replays, 5);
}

TEST_F(RecordedReplay, AnArgumentAlsoReadOnTheHostIsNotStaged) {
  const Chain chain = make_chain(kRecording);
  Function recorded = function([&](const std::vector<Tensor>& arguments) { return chain_and_host_square(chain, arguments); });
  const Tensor x = argument("/CPU:0", 30);
  for (int call = 0; call < 3; ++call) EXPECT_EQ(on_host(recorded({x})[0]), on_host(chain({x})[0]));
  const FunctionStatistics statistics = recorded.statistics();
  EXPECT_EQ(statistics.recorded_runs, 1);  // the first product copies x in itself: the other two are recorded
  EXPECT_EQ(statistics.recorded_nodes, 2);
  EXPECT_EQ(statistics.recordings, 1);
}

TEST_F(RecordedReplay, AProfiledCallDispatchesNodeByNodeSoEveryOpIsTimed) {
  const Chain chain = make_chain(kRecording);
  Function recorded = function([&](const std::vector<Tensor>& arguments) { return chain(arguments); });
  const Tensor x = argument(kRecording, 40);
  const std::vector<float> expected = on_host(chain({x})[0]);
  for (int call = 0; call < 3; ++call) recorded({x});  // traced and recorded, then replayed
  ASSERT_EQ(recorded.statistics().recorded_replays, 3);

  profiler::start();
  EXPECT_EQ(on_host(recorded({x})[0]), expected);
  profiler::stop();
  int products = 0;
  for (const profiler::OpRecord& record : profiler::records()) {
    if (record.op == "MatMul" && record.device.find("RECORDING") != std::string::npos) ++products;
  }
  EXPECT_EQ(products, 3);
  EXPECT_EQ(recorded.statistics().recorded_replays, 3);  // not replayed while profiled

  EXPECT_EQ(on_host(recorded({x})[0]), expected);  // the recording is still valid afterwards
  EXPECT_EQ(recorded.statistics().recorded_replays, 4);
  EXPECT_EQ(recorded.statistics().recordings, 1);
}

// The MLP trained with compiled steps on the recording device against the
// CPU: the same host kernels, so the same bits, though the forward and
// backward passes ran as replays of one recording while Adam updated the
// weights in place between them.
struct Training {
  std::vector<double> losses;
  std::vector<std::vector<float>> weights;
  FunctionStatistics statistics;
};

Training train_mlp(const std::string& device) {
  DeviceScope on_device(device);
  keras::set_random_seed(3);
  auto model = std::make_shared<keras::Sequential>(std::vector<std::shared_ptr<keras::Layer>>{
      std::make_shared<keras::Flatten>(), std::make_shared<keras::Dense>(64, keras::DenseOptions{.activation = "relu"}),
      std::make_shared<keras::Dense>(10, keras::DenseOptions{.activation = "softmax"})});
  model->build({keras::kUnknownDim, 28, 28});
  model->compile(std::make_shared<keras::Adam>(keras::AdamOptions{.learning_rate = 0.002}),
                 "sparse_categorical_crossentropy", {"accuracy"}, {.jit_compile = true});
  Tensor x, y;
  {
    DeviceScope on_host("/CPU:0");
    x = ops::random_uniform(Shape{20 * 32, 28, 28}, 7);
    y = ops::cast(ops::mul(ops::random_uniform(Shape{20 * 32}, 8), ops::fill(Shape{}, 9.99)), DType::kInt32);
  }
  auto losses = std::make_shared<accel::testing::BatchLosses>();
  model->fit(x, y, {.batch_size = 32, .verbose = 0, .callbacks = {losses}, .seed = 11});
  Training training;
  training.losses = losses->losses;
  for (const Variable& weight : model->weights()) training.weights.push_back(on_host(weight.value()));
  training.statistics = model->train_function()->statistics();
  return training;
}

TEST_F(RecordedReplay, CompiledKerasTrainingReplaysBitForBitAsTheCpu) {
  const Training cpu = train_mlp("/CPU:0");
  const Training recording = train_mlp(kRecording);
  EXPECT_EQ(recording.losses, cpu.losses);
  EXPECT_EQ(recording.weights, cpu.weights);
  EXPECT_EQ(cpu.statistics.recorded_runs, 0);  // the CPU plugin does not record
  // Two runs: the forward and backward passes with the loss, and the
  // accuracy after the updates (Adam's nodes, refreshed each step, between).
  EXPECT_EQ(recording.statistics.recorded_runs, 2) << recording.statistics.recording_reason;
  EXPECT_EQ(recording.statistics.recorded_nodes, recording.statistics.compiled_ops - 4);
  EXPECT_EQ(recording.statistics.recording_reason, "");
  // Every step replays each run (the traced one too); each run was recorded once.
  EXPECT_EQ(recording.statistics.recordings, recording.statistics.recorded_runs);
  EXPECT_EQ(recording.statistics.recorded_replays, recording.statistics.recorded_runs * 20);
}

}  // namespace
}  // namespace accel

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  accel::runtime::require_plugin(ACCEL_RECORDING_PLUGIN);
  return RUN_ALL_TESTS();
}
