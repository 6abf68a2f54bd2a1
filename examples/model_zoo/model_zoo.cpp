// The zoo's names and the Transformer's token task (docs/model-zoo.md).
#include "model_zoo.hpp"

#include <accel/error.hpp>

#include <algorithm>
#include <functional>
#include <map>

namespace accel::model_zoo {
namespace {

const std::map<std::string, std::function<std::shared_ptr<keras::Model>()>>& builders() {
  static const std::map<std::string, std::function<std::shared_ptr<keras::Model>()>> table = {
      {"resnet50", [] { return resnet50(); }},
      {"resnet18", [] { return resnet18(); }},
      {"resnet_small_28x28", [] { return resnet_small_28x28(); }},
      {"vit_fashion_mnist", [] { return vit_fashion_mnist(); }},
      {"transformer_encoder_classifier", [] { return transformer_encoder_classifier(); }},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& entry : builders()) list.push_back(entry.first);
    return list;
  }();
  return names;
}

std::shared_ptr<keras::Model> build_model(const std::string& name) {
  const auto found = builders().find(name);
  if (found == builders().end()) {
    std::string known;
    for (const std::string& candidate : model_names()) known += (known.empty() ? "" : ", ") + candidate;
    throw NotFoundError("no model '" + name + "' in the zoo; expected one of " + known);
  }
  return found->second();
}

Tensor fashion_mnist_tokens(const Tensor& images_uint8) {
  constexpr int64_t kImageSide = 28;
  constexpr int64_t kBlock = 4;
  constexpr int64_t kGrid = kImageSide / kBlock;
  constexpr int32_t kVocabulary = 16;
  const Shape& shape = images_uint8.shape();
  if (images_uint8.dtype() != DType::kUInt8 || shape.rank() != 3 || shape[1] != kImageSide || shape[2] != kImageSide) {
    throw InvalidArgumentError("fashion_mnist_tokens: expected uint8 images (N, 28, 28), got " +
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

}  // namespace accel::model_zoo
