// data.tokens: fashion_mnist_blocks, the token sequences the model zoo's
// Transformer encoder classifies (docs/model-zoo.md): a uint8 image
// (N, 28, 28) -> int32 (N, 49), a 7x7 grid of 4x4-pixel blocks read
// row-major, each block's token min(S / 255, 15) in integer arithmetic, S the
// sum of its 16 pixels. The same function as examples/model_zoo's
// fashion_mnist_tokens (a test compares them); here so that the experiment
// runner does not depend on the examples.
#pragma once

#include <accel/tensor.hpp>

namespace accel::experiment {

Tensor fashion_mnist_block_tokens(const Tensor& images_uint8);

}  // namespace accel::experiment
