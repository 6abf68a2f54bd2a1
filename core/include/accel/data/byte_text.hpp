// A text file as next-byte prediction examples: the task a byte-level
// language model learns (the model zoo's decoder, the YAML experiments'
// `data.source: text`). Bytes are the vocabulary (256 tokens), so any file
// works and nothing is tokenized.
#pragma once

#include <accel/tensor.hpp>

#include <cstdint>
#include <string>

namespace accel::data {

struct ByteTextOptions {
  int64_t sequence_length = 64;  // bytes per example
  double held_out = 0.1;         // the fraction of the text, at its end, kept for evaluation
};

// Examples of `sequence_length` bytes, one every `sequence_length` bytes,
// each labelled with the bytes that follow it (the text shifted by one):
// int32 [N, sequence_length] inputs and targets. The training windows come
// from the text's first (1 - held_out), the held-out ones from the rest, so
// no held-out byte is ever a training target.
struct ByteText {
  Tensor train_inputs, train_targets;
  Tensor held_out_inputs, held_out_targets;
  // The entropy in nats of the held-out targets' byte frequencies: the loss
  // of a model that knows how often each byte occurs and nothing else. A
  // language model has learned context only when it goes below.
  double held_out_unigram_entropy = 0;
};

inline constexpr int64_t kByteVocabulary = 256;
inline constexpr uint64_t kMaxTextBytes = uint64_t{1} << 30;

// Reads `path` (a regular file of at most kMaxTextBytes; input_file.hpp).
// InvalidArgumentError when sequence_length < 1, held_out is outside (0, 1),
// or either part of the text holds less than one window (naming the sizes).
ByteText load_byte_text(const std::string& path, const ByteTextOptions& options);

// The same from bytes in memory; `what` names them in errors.
ByteText byte_text_examples(const std::string& text, const ByteTextOptions& options, const std::string& what);

}  // namespace accel::data
