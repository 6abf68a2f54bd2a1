// Tensors: host round trips, dtypes, reshape aliasing, copies between devices,
// and op errors that leave the runtime usable.
#include <accel/accel.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <limits>

namespace accel {
namespace {

TEST(TensorTest, RoundTripsEveryHostType) {
  DeviceScope scope("/CPU:0");
  EXPECT_EQ(Tensor::from_vector<float>({1.5f, -2}, Shape{2}).to_vector<float>(), (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(Tensor::from_vector<int32_t>({7, 8, 9}, Shape{3}).to_vector<int32_t>(), (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(Tensor::from_vector<int64_t>({1LL << 40}, Shape{1}).item<int64_t>(), 1LL << 40);
  EXPECT_EQ(Tensor::from_vector<uint8_t>({255}, Shape{}).item<uint8_t>(), 255);
  EXPECT_EQ(Tensor::from_vector<bool>({true, false}, Shape{2}).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(TensorTest, WrongCountOrTypeIsAnError) {
  EXPECT_THROW(Tensor::from_vector<float>({1, 2, 3}, Shape{2, 2}), InvalidArgumentError);
  Tensor t = Tensor::from_vector<float>({1}, Shape{1});
  EXPECT_THROW(t.to_vector<int32_t>(), InvalidArgumentError);
  EXPECT_THROW(ops::add(t, Tensor::from_vector<int32_t>({1}, Shape{1})), InvalidArgumentError);
}

TEST(TensorTest, ReshapeAliasesAndInfers) {
  Tensor t = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor r = t.reshape(Shape{3, -1});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.storage(), t.storage());
  EXPECT_NE(r.id(), t.id());
  EXPECT_THROW(t.reshape(Shape{4, -1}), InvalidArgumentError);
  EXPECT_THROW(t.reshape(Shape{7}), InvalidArgumentError);
}

TEST(TensorTest, EmptyTensorsWork) {
  Tensor empty = ops::zeros(Shape{0, 3});
  EXPECT_EQ(empty.element_count(), 0);
  EXPECT_TRUE(ops::add(empty, empty).to_vector<float>().empty());
  EXPECT_EQ(ops::reduce_sum(empty, {0}).to_vector<float>(), (std::vector<float>{0, 0, 0}));
}

// As in TensorFlow: max / min over an empty axis give the identity (-inf / +inf,
// an integer's lowest / highest); argmax has none and stays an error.
TEST(TensorTest, MaxAndMinOverAnEmptyAxisGiveTheirIdentity) {
  DeviceScope scope("/CPU:0");
  const float inf = std::numeric_limits<float>::infinity();
  Tensor empty = ops::zeros(Shape{0, 3});
  EXPECT_EQ(ops::reduce_max(empty, {0}).to_vector<float>(), (std::vector<float>{-inf, -inf, -inf}));
  EXPECT_EQ(ops::reduce_min(empty, {0}, true).to_vector<float>(), (std::vector<float>{inf, inf, inf}));
  EXPECT_EQ(ops::reduce_max(empty).item<float>(), -inf);
  Tensor empty_ints = ops::cast(empty, DType::kInt32);
  EXPECT_EQ(ops::reduce_max(empty_ints, {0}).to_vector<int32_t>(),
            std::vector<int32_t>(3, std::numeric_limits<int32_t>::lowest()));
  EXPECT_EQ(ops::reduce_min(empty_ints, {0}).to_vector<int32_t>(),
            std::vector<int32_t>(3, std::numeric_limits<int32_t>::max()));
  EXPECT_TRUE(ops::reduce_max(empty, {1}).to_vector<float>().empty());
  EXPECT_THROW(ops::argmax(empty, 0), InvalidArgumentError);
}

// TensorFlow's VALID rule: a window longer than the (padded) input fits no
// times, even with a stride that would make plain integer division say once.
// The output is empty and the gradients of the empty output are zeros.
TEST(TensorTest, AWindowLongerThanTheInputGivesAnEmptyOutput) {
  DeviceScope scope("/CPU:0");
  Tensor x = ops::ones(Shape{1, 2, 2, 1});
  ops::Pool2DOptions pool{{3, 3}, {2, 2}, ops::Padding::kValid};
  EXPECT_EQ(ops::max_pool2d(x, pool).shape(), (Shape{1, 0, 0, 1}));
  EXPECT_EQ(ops::avg_pool2d(x, pool).shape(), (Shape{1, 0, 0, 1}));
  Tensor empty_gradient = ops::zeros(Shape{1, 0, 0, 1});
  EXPECT_EQ(ops::max_pool2d_backward(x, empty_gradient, pool).to_vector<float>(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(ops::avg_pool2d_backward(empty_gradient, x.shape(), pool).to_vector<float>(), std::vector<float>(4, 0.0f));

  Tensor filter = ops::ones(Shape{3, 3, 1, 2});
  ops::Conv2DOptions conv{{2, 2}, ops::Padding::kValid, {1, 1}};
  EXPECT_EQ(ops::conv2d(x, filter, conv).shape(), (Shape{1, 0, 0, 2}));
  Tensor empty_conv_gradient = ops::zeros(Shape{1, 0, 0, 2});
  EXPECT_EQ(ops::conv2d_backward_input(empty_conv_gradient, filter, x.shape(), conv).to_vector<float>(),
            std::vector<float>(4, 0.0f));
  EXPECT_EQ(ops::conv2d_backward_filter(x, empty_conv_gradient, filter.shape(), conv).to_vector<float>(),
            std::vector<float>(18, 0.0f));
}

TEST(TensorTest, BadShapesNameWhatWasWrong) {
  Tensor a = ops::zeros(Shape{2, 3});
  Tensor b = ops::zeros(Shape{4, 5});
  try {
    ops::matmul(a, b);
    FAIL();
  } catch (const InvalidArgumentError& error) {
    EXPECT_NE(std::string(error.what()).find("MatMul"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("(2, 3)"), std::string::npos) << error.what();
  }
  EXPECT_THROW(ops::add(a, b), InvalidArgumentError);
  // The runtime stays usable.
  EXPECT_EQ(ops::matmul(a, ops::ones(Shape{3, 1})).shape(), (Shape{2, 1}));
}

TEST(TensorTest, AssignCopiesIntoExistingStorage) {
  Tensor target = ops::zeros(Shape{3});
  auto storage = target.storage();
  target.assign(Tensor::from_vector<float>({1, 2, 3}, Shape{3}));
  EXPECT_EQ(target.storage(), storage);
  EXPECT_EQ(target.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_THROW(target.assign(ops::zeros(Shape{4})), InvalidArgumentError);
}

TEST(TensorTest, RandomIsStatelessAndSeeded) {
  Tensor first = ops::random_uniform(Shape{64}, 7);
  Tensor second = ops::random_uniform(Shape{64}, 7);
  Tensor other = ops::random_uniform(Shape{64}, 8);
  EXPECT_EQ(first.to_vector<float>(), second.to_vector<float>());
  EXPECT_NE(first.to_vector<float>(), other.to_vector<float>());
  // Element i depends only on (seed, offset + i).
  Tensor shifted = ops::random_uniform(Shape{32}, 7, 0.0, 1.0, DType::kFloat32, 32);
  std::vector<float> all = first.to_vector<float>();
  std::vector<float> tail(all.begin() + 32, all.end());
  EXPECT_EQ(shifted.to_vector<float>(), tail);
}

TEST(TensorTest, ProfilerRecordsOpsAndWritesATrace) {
  profiler::start();
  ops::matmul(ops::ones(Shape{8, 8}), ops::ones(Shape{8, 8}));
  runtime::synchronize();
  profiler::stop();
  auto records = profiler::records();
  bool found = false;
  for (const auto& record : records) found = found || record.op == "MatMul";
  EXPECT_TRUE(found);
  std::string path = ::testing::TempDir() + "/trace.json";
  profiler::write_chrome_trace(path);
  std::ifstream file(path);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(text.find("MatMul"), std::string::npos);
}

}  // namespace
}  // namespace accel
