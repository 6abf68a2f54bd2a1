#include <accel/data/fashion_mnist_tokens.hpp>

#include <accel/error.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace accel::data {

Tensor fashion_mnist_block_tokens(const Tensor& images_uint8) {
  constexpr int64_t kImageSide = 28;
  constexpr int64_t kBlock = 4;
  constexpr int64_t kGrid = kImageSide / kBlock;
  constexpr int32_t kVocabulary = 16;
  const Shape& shape = images_uint8.shape();
  if (images_uint8.dtype() != DType::kUInt8 || shape.rank() != 3 || shape[1] != kImageSide || shape[2] != kImageSide) {
    throw InvalidArgumentError("fashion_mnist_block_tokens: expected uint8 images (N, 28, 28), got " +
                               std::string(dtype_name(images_uint8.dtype())) + " " + shape.to_string());
  }
  const std::vector<uint8_t> pixels = images_uint8.to_vector<uint8_t>();
  const int64_t images = shape[0];
  std::vector<int32_t> tokens(static_cast<size_t>(images * kGrid * kGrid));
  for (int64_t image = 0; image < images; ++image) {
    const uint8_t* first = pixels.data() + image * kImageSide * kImageSide;
    for (int64_t block_row = 0; block_row < kGrid; ++block_row) {
      for (int64_t block_column = 0; block_column < kGrid; ++block_column) {
        int32_t sum = 0;
        for (int64_t row = 0; row < kBlock; ++row) {
          for (int64_t column = 0; column < kBlock; ++column) {
            sum += first[(block_row * kBlock + row) * kImageSide + block_column * kBlock + column];
          }
        }
        tokens[static_cast<size_t>((image * kGrid + block_row) * kGrid + block_column)] =
            std::min(sum / 255, kVocabulary - 1);
      }
    }
  }
  return Tensor::from_vector<int32_t>(tokens, Shape{images, kGrid * kGrid});
}

}  // namespace accel::data
