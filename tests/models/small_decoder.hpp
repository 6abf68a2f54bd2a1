// The zoo's decoder at a size that trains in a few steps, and the batches it
// learns: what the sharding tests (in one process and across processes)
// train, so that both train the same model on the same data.
#pragma once

#include <accel/keras/backend.hpp>
#include <accel/keras/distribution/distribution.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/tensor.hpp>

#include "model_zoo.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace accel::model_zoo {

// Vocabulary 32, 8 tokens, width 16, 2 heads, 2 blocks.
inline DecoderLanguageModelOptions small_decoder() {
  DecoderLanguageModelOptions options;
  options.vocabulary = 32;
  options.sequence_length = 8;
  options.dim = 16;
  options.heads = 2;
  options.feed_forward = 32;
  options.blocks = 2;
  return options;
}

// `rows` sequences of `length` tokens (of 32) and their next tokens: a fixed
// pattern to learn.
inline std::pair<Tensor, Tensor> pattern_batch(int32_t rows, int32_t length = 8) {
  std::vector<int32_t> tokens, next;
  for (int32_t row = 0; row < rows; ++row) {
    for (int32_t column = 0; column < length; ++column) {
      tokens.push_back((row * 5 + column * 3) % 32);
      next.push_back((row * 5 + column * 3 + 3) % 32);
    }
  }
  return {Tensor::from_vector<int32_t>(tokens, Shape{rows, length}),
          Tensor::from_vector<int32_t>(next, Shape{rows, length})};
}

// The decoder of `options` from seed 5, compiled under `distribution`
// (null: one device) with SGD and momentum (its slots take their
// variables' layouts; Adam's division by sqrt(v) would turn a gradient that
// is zero up to rounding into rounding-sized updates of either sign).
inline std::shared_ptr<keras::Model> compiled_decoder(const DecoderLanguageModelOptions& options,
                                                      std::shared_ptr<const keras::distribution::Distribution> distribution,
                                                      keras::CompileOptions compile = {.jit_compile = true}) {
  keras::clear_session();
  keras::set_random_seed(5);
  keras::distribution::set_distribution(std::move(distribution));
  std::shared_ptr<keras::Model> model = decoder_language_model(options);
  model->compile(std::make_shared<keras::SGD>(keras::SGDOptions{.learning_rate = 0.2, .momentum = 0.9}),
                 std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                 {}, compile);
  keras::distribution::set_distribution(nullptr);
  return model;
}

}  // namespace accel::model_zoo
