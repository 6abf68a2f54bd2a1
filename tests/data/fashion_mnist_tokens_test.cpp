// The model zoo Transformer's token task (docs/model-zoo.md): each 4x4 block of a
// 28x28 uint8 image becomes min(S / 255, 15), S the block's pixel sum, read
// row-major over the 7x7 grid of blocks.
#include <accel/data/fashion_mnist_tokens.hpp>

#include <accel/error.hpp>

#include <gtest/gtest.h>

namespace accel {
namespace {

TEST(FashionMnistTokensTest, EachBlockIsItsQuantizedMeanInRowMajorOrder) {
  std::vector<uint8_t> pixels(2 * 28 * 28, 0);
  auto fill_block = [&](int image, int block_row, int block_column, uint8_t value) {
    for (int row = 0; row < 4; ++row) {
      for (int column = 0; column < 4; ++column) {
        pixels[static_cast<size_t>(image * 784 + (block_row * 4 + row) * 28 + block_column * 4 + column)] = value;
      }
    }
  };
  fill_block(0, 0, 1, 255);  // S = 4080: 16, clipped to 15
  fill_block(0, 2, 3, 16);   // S = 256: 1
  fill_block(0, 6, 6, 15);   // S = 240: 0 (floor)
  fill_block(1, 3, 0, 128);  // S = 2048: 8
  pixels[28 * 28 + 5 * 4 * 28 + 2 * 4] = 255;  // image 1, block (5, 2): S = 255 exactly: 1

  const Tensor tokens = data::fashion_mnist_block_tokens(Tensor::from_vector<uint8_t>(pixels, Shape{2, 28, 28}));
  ASSERT_EQ(tokens.shape(), (Shape{2, 49}));
  ASSERT_EQ(tokens.dtype(), DType::kInt32);
  std::vector<int32_t> expected(2 * 49, 0);
  expected[0 * 7 + 1] = 15;
  expected[2 * 7 + 3] = 1;
  expected[6 * 7 + 6] = 0;
  expected[49 + 3 * 7 + 0] = 8;
  expected[49 + 5 * 7 + 2] = 1;
  EXPECT_EQ(tokens.to_vector<int32_t>(), expected);
}

TEST(FashionMnistTokensTest, RejectsImagesThatAreNotUint8Of28x28) {
  EXPECT_THROW(data::fashion_mnist_block_tokens(Tensor::from_vector<float>(std::vector<float>(784), Shape{1, 28, 28})),
               InvalidArgumentError);
  EXPECT_THROW(data::fashion_mnist_block_tokens(Tensor::from_vector<uint8_t>(std::vector<uint8_t>(32 * 32), Shape{1, 32, 32})),
               InvalidArgumentError);
}

}  // namespace
}  // namespace accel
