// Fashion-MNIST as token sequences: the task the model zoo's Transformer
// encoder classifies (docs/model-zoo.md), shared by the C++ zoo and the YAML
// experiments' `data.tokens: fashion_mnist_blocks`.
#pragma once

#include <accel/tensor.hpp>

namespace accel::data {

// uint8 images (N, 28, 28) -> int32 tokens (N, 49): a 7x7 grid of 4x4-pixel
// blocks read row-major; a block's token is min(S / 255, 15) in integer
// arithmetic, S the sum of its 16 pixel values (its mean quantized to 16
// levels). InvalidArgumentError for anything but uint8 (N, 28, 28).
Tensor fashion_mnist_block_tokens(const Tensor& images_uint8);

}  // namespace accel::data
