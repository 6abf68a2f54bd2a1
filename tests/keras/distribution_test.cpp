// keras.distribution in C++: DeviceMesh checks, LayoutMap's matching as
// Keras's (exact key first, then the one regular expression that re.search
// finds; two matches are an error), DataParallel and ModelParallel layouts,
// and their translation into the SPMD pass's shardings.
#include <accel/config.hpp>
#include <accel/error.hpp>
#include <accel/keras/distribution/distribution.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../../core/keras/distribution/layout_sharding.hpp"

namespace accel::keras::distribution {
namespace {

std::vector<std::string> devices(int count) {
  std::vector<std::string> names;
  for (int index = 0; index < count; ++index) names.push_back("/device:CPU:" + std::to_string(index));
  return names;
}

TensorLayout layout(std::vector<std::optional<std::string>> axes) { return TensorLayout{std::move(axes)}; }

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const InvalidArgumentError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(DeviceMesh, ChecksItsShapeNamesAndDevices) {
  const DeviceMesh mesh({2, 4}, {"data", "model"}, devices(8));
  EXPECT_EQ(mesh.axis_size("model"), 4);
  EXPECT_EQ(mesh.axis_index("data"), 0);
  EXPECT_EQ(mesh.axis_index("expert"), -1);
  EXPECT_NE(error_of([] { DeviceMesh({2, 4}, {"data", "model"}, devices(6)); }).find("holds 8 devices; 6 given"),
            std::string::npos);
  EXPECT_NE(error_of([] { DeviceMesh({2, 2}, {"data", "data"}, devices(4)); }).find("distinct"), std::string::npos);
  EXPECT_NE(error_of([] { DeviceMesh({2, 0}, {"data", "model"}, devices(0)); }).find("axis 'model' has size 0"),
            std::string::npos);
  EXPECT_NE(error_of([] { DeviceMesh({2}, {"data", "model"}, devices(2)); }).find("one length"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)mesh.axis_size("expert"); }).find("the mesh's axes are [data, model]"),
            std::string::npos);
}

TEST(DeviceMesh, WithoutDevicesTakesTheFirstTypeThatHasEnough) {
  const DeviceMesh one({1}, {"batch"});
  ASSERT_EQ(one.devices().size(), 1u);
  const std::string message = error_of([] { DeviceMesh({4096}, {"batch"}); });
  EXPECT_NE(message.find("a mesh of 4096 devices"), std::string::npos) << message;
  EXPECT_NE(message.find("set_logical_device_configuration"), std::string::npos) << message;
}

TEST(LayoutMap, MatchesAsKerasDoes) {
  LayoutMap map(DeviceMesh({2, 2}, {"data", "model"}, devices(4)));
  map.set("dense.*kernel", layout({std::nullopt, "model"}));
  map.set("dense.*bias", layout({"model"}));
  map.set("dense_1/kernel", layout({"model", std::nullopt}));
  // An exact key wins over the regular expressions that also match.
  EXPECT_EQ(map.find("dense_1/kernel"), layout({"model", std::nullopt}));
  EXPECT_EQ(map.find("dense/kernel"), layout({std::nullopt, "model"}));
  EXPECT_EQ(map.find("encoder/dense/bias"), layout({"model"}));  // re.search, not re.match
  EXPECT_FALSE(map.find("embedding/embeddings").has_value());
  map.set(".*kernel", layout({"data", std::nullopt}));
  const std::string twice = error_of([&] { (void)map.find("dense/kernel"); });
  EXPECT_NE(twice.find("matches several keys: ['dense.*kernel', '.*kernel']"), std::string::npos) << twice;
  // Setting a key again replaces its layout.
  map.set(".*kernel", layout({"data", "model"}));
  EXPECT_EQ(map.entries().size(), 4u);
}

TEST(LayoutMap, RefusesLayoutsTheMeshCannotHold) {
  LayoutMap map(DeviceMesh({2, 2}, {"data", "model"}, devices(4)));
  EXPECT_NE(error_of([&] { map.set("kernel", layout({"expert"})); }).find("no axis 'expert'; its axes are [data, model]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { map.set("kernel", layout({"model", "model"})); }).find("axis 'model' splits two dimensions"),
            std::string::npos);
  EXPECT_NE(error_of([&] { map.set("kernel[", layout({"model"})); }).find("not a regular expression"), std::string::npos);
}

TEST(Distribution, DataParallelSplitsTheBatchAndKeepsVariablesWhole) {
  const DataParallel data_parallel(devices(4));
  EXPECT_EQ(data_parallel.mesh().shape(), std::vector<int64_t>{4});
  EXPECT_EQ(data_parallel.data_layout(3), layout({"batch", std::nullopt, std::nullopt}));
  EXPECT_EQ(data_parallel.variable_layout("dense/kernel", 2), TensorLayout::replicated(2));
}

TEST(Distribution, ModelParallelLaysOutVariablesByTheMap) {
  LayoutMap map(DeviceMesh({2, 2}, {"data", "model"}, devices(4)));
  map.set("mlp_in/kernel", layout({"data", "model"}));  // FSDP on rows, tensor parallel on columns
  map.set("mlp_out/kernel", layout({"model", "data"}));
  const ModelParallel model_parallel(map);
  EXPECT_EQ(model_parallel.batch_dim_name(), "data");
  EXPECT_EQ(model_parallel.variable_layout("mlp_in/kernel", 2), layout({"data", "model"}));
  EXPECT_EQ(model_parallel.variable_layout("mlp_in/bias", 1), TensorLayout::replicated(1));
  const std::string rank = error_of([&] { (void)model_parallel.variable_layout("mlp_out/kernel", 3); });
  EXPECT_NE(rank.find("has 2 axes; the variable has 3 dimensions"), std::string::npos) << rank;
  EXPECT_NE(error_of([&] { ModelParallel(map, "batch"); }).find("no axis 'batch'"), std::string::npos);
}

TEST(Distribution, LayoutsBecomeTheShardingsOfTheSpmdPass) {
  const DeviceMesh mesh({2, 4}, {"data", "model"}, devices(8));
  const graph::MeshShape shape = mesh_shape(mesh);
  EXPECT_EQ(shape.axis_names, (std::vector<std::string>{"data", "model"}));
  EXPECT_EQ(shape.axis_sizes, (std::vector<int64_t>{2, 4}));
  const graph::ValueSharding sharding = to_sharding(layout({std::nullopt, "model", "data"}), mesh);
  EXPECT_EQ(sharding.dimension_axes, (std::vector<int32_t>{graph::kReplicated, 1, 0}));
  EXPECT_EQ(graph::describe(sharding, shape), "[-, model, data]");
  EXPECT_THROW(to_sharding(layout({"expert"}), mesh), InvalidArgumentError);
}

}  // namespace
}  // namespace accel::keras::distribution
