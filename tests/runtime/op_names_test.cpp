// How logs, traces and reports name ops: the TensorFlow name plus the op-set
// name where they differ ("ReluGrad (RELU_BACKWARD)"), in the placement log,
// the CPU-fallback warning and errors, and the profiler's records; and
// docs/op-set.md's table of every op's names, which must match the code.
#include <accel/accel.hpp>
#include <accel/plugin/op_set_names.hpp>
#include <accel/profiler.hpp>

#include <gtest/gtest.h>

#include "../common/fresh_process.hpp"
#include "runtime/op_registry.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace accel {
namespace {

TEST(OpNames, TheTensorFlowNameComesFirstAndTheOpSetNameWhereItDiffers) {
  EXPECT_EQ(profiler::op_name(ACCEL_OP_RELU_BACKWARD), "ReluGrad (RELU_BACKWARD)");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_ADAM_UPDATE), "ResourceApplyAdam (ADAM_UPDATE)");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_ADD), "AddV2 (ADD)");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_COPY), "Identity (COPY)");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_FUSED_ELEMENTWISE), "Fusion (FUSED_ELEMENTWISE)");
  // The same name but for case and underscores: once.
  EXPECT_EQ(profiler::op_name(ACCEL_OP_MATMUL), "MatMul");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_MAX_POOL), "MaxPool");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_LOGICAL_NOT), "LogicalNot");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_ERF), "Erf");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_BATCH_NORM), "FusedBatchNormV3 (BATCH_NORM)");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_BATCH_NORM_BACKWARD), "FusedBatchNormGradV3 (BATCH_NORM_BACKWARD)");
  EXPECT_EQ(profiler::op_name(ACCEL_OP_COUNT + 1), "Reshape");  // the tape's pseudo-op
  EXPECT_EQ(profiler::op_name(-1), "Unknown");
}

// The op-set names match the enum's: ACCEL_OP_<name> = <value> in accel_plugin.h.
TEST(OpNames, EveryOpSetNameIsItsEnumeratorWithoutThePrefix) {
  std::ifstream header(ACCEL_SOURCE_DIR "/core/include/accel/plugin/accel_plugin.h");
  ASSERT_TRUE(header) << "cannot read accel_plugin.h";
  std::stringstream text;
  text << header.rdbuf();
  for (int32_t op = 0; op < ACCEL_OP_COUNT; ++op) {
    const std::string enumerator = std::string("ACCEL_OP_") + sdk::op_set_name(op) + " = " + std::to_string(op) + ",";
    EXPECT_NE(text.str().find(enumerator), std::string::npos) << "accel_plugin.h has no `" << enumerator << "`";
  }
}

// docs/op-set.md's table of names, as the code gives them.
std::string expected_names_table() {
  std::string table = "| TensorFlow name | op-set name (AccelOp) | logs, traces and reports |\n|---|---|---|\n";
  for (int32_t op = 0; op < ACCEL_OP_COUNT; ++op) {
    table += "| `" + std::string(detail::op_info(op).name) + "` | `" + sdk::op_set_name(op) + "` (" +
             std::to_string(op) + ") | `" + profiler::op_name(op) + "` |\n";
  }
  return table;
}

// The table in the doc: the lines from its header row to the first line that is not a row.
std::string documented_names_table() {
  std::ifstream doc(ACCEL_SOURCE_DIR "/docs/op-set.md");
  std::string line;
  std::string table;
  bool inside = false;
  while (std::getline(doc, line)) {
    if (!inside && line.rfind("| TensorFlow name |", 0) == 0) inside = true;
    if (!inside) continue;
    if (line.rfind("|", 0) != 0) break;
    table += line + "\n";
  }
  return table;
}

TEST(OpNames, OpSetDocListsEveryOpsTensorFlowAndOpSetNameAsTheCodeDoes) {
  const std::string expected = expected_names_table();
  EXPECT_EQ(documented_names_table(), expected)
      << "docs/op-set.md's \"TensorFlow names\" table is out of date; replace it with:\n"
      << expected;
}

TEST(OpNames, ProfilerRecordsCarryBothNames) {
  DeviceScope scope("/CPU:0");
  const Tensor x = Tensor::from_vector<float>({-1, 2}, Shape{2});
  profiler::start();
  (void)ops::add(x, x);
  (void)ops::relu(x);
  profiler::stop();
  std::vector<std::string> names;
  for (const profiler::OpRecord& record : profiler::records()) names.push_back(record.op);
  EXPECT_EQ(names, (std::vector<std::string>{"AddV2 (ADD)", "Relu"}));
}

TEST(OpNames, ThePlacementLogGivesBothNames) {
  DeviceScope scope("/CPU:0");
  const Tensor x = Tensor::from_vector<float>({-1, 2}, Shape{2});
  config::set_log_device_placement(true);
  ::testing::internal::CaptureStderr();
  (void)ops::add(x, x);
  (void)ops::matmul(x.reshape(Shape{1, 2}), x.reshape(Shape{2, 1}));
  const std::string log = ::testing::internal::GetCapturedStderr();
  config::set_log_device_placement(false);
  EXPECT_NE(log.find("Executing op AddV2 (ADD) in device /job:localhost/replica:0/task:0/device:CPU:0\n"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("Executing op MatMul in device /job:localhost/replica:0/task:0/device:CPU:0\n"),
            std::string::npos)
      << log;
}

// The fault plugin "dup" is a good plugin whose TESTDEV device supports no op.
void load_device_without_ops() {
  setenv("ACCEL_PLUGIN_PATH", ACCEL_TEST_FAULT_PLUGIN_DIR "/libaccel-plugin-fault_none_dup.so", 1);
}

TEST(OpNames, TheFallbackWarningGivesBothNames) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        load_device_without_ops();
        DeviceScope scope("/TESTDEV:0");
        const Tensor x = Tensor::from_vector<float>({-1, 2}, Shape{2});
        (void)ops::add(x, x);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "op AddV2 \\(ADD\\) with dtype float32 is not supported on /job:localhost/replica:0/task:0/device:TESTDEV:0; "
      "running it on /job:localhost/replica:0/task:0/device:CPU:0 with copies");
}

TEST(OpNames, WithoutSoftPlacementTheErrorGivesBothNames) {
  testing::in_fresh_process([] {
    load_device_without_ops();
    config::set_soft_device_placement(false);
    DeviceScope scope("/TESTDEV:0");
    const Tensor x = Tensor::from_vector<float>({-1, 2}, Shape{2});
    try {
      (void)ops::relu_backward(x, x);
      ADD_FAILURE() << "expected InvalidArgumentError";
    } catch (const InvalidArgumentError& error) {
      EXPECT_NE(std::string(error.what()).find("cannot run op ReluGrad (RELU_BACKWARD) with dtype float32 on "),
                std::string::npos)
          << error.what();
    }
  });
}

}  // namespace
}  // namespace accel
