#include <accel/data/byte_text.hpp>

#include <accel/error.hpp>
#include <accel/input_file.hpp>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <vector>

namespace accel::data {
namespace {

struct Windows {
  Tensor inputs, targets;
};

// Non-overlapping windows of `length` bytes inside text[begin, end), each
// with the window one byte later, also inside, as its targets.
Windows windows(const std::string& text, size_t begin, size_t end, int64_t length) {
  const size_t count = (end - begin - 1) / static_cast<size_t>(length);
  std::vector<int32_t> inputs(count * static_cast<size_t>(length));
  std::vector<int32_t> targets(inputs.size());
  for (size_t window = 0; window < count; ++window) {
    const size_t start = begin + window * static_cast<size_t>(length);
    for (int64_t offset = 0; offset < length; ++offset) {
      const size_t at = window * static_cast<size_t>(length) + static_cast<size_t>(offset);
      inputs[at] = static_cast<unsigned char>(text[start + static_cast<size_t>(offset)]);
      targets[at] = static_cast<unsigned char>(text[start + static_cast<size_t>(offset) + 1]);
    }
  }
  const Shape shape{static_cast<int64_t>(count), length};
  return {Tensor::from_vector(inputs, shape), Tensor::from_vector(targets, shape)};
}

double unigram_entropy(const Tensor& targets) {
  std::array<double, kByteVocabulary> counts{};
  const std::vector<int32_t> bytes = targets.to_vector<int32_t>();
  for (int32_t byte : bytes) counts[static_cast<size_t>(byte)] += 1;
  double entropy = 0;
  for (double count : counts) {
    if (count == 0) continue;
    const double p = count / static_cast<double>(bytes.size());
    entropy -= p * std::log(p);
  }
  return entropy;
}

}  // namespace

ByteText byte_text_examples(const std::string& text, const ByteTextOptions& options, const std::string& what) {
  const int64_t length = options.sequence_length;
  if (length < 1) {
    throw InvalidArgumentError(fmt::format("{}: sequence_length = {}; expected at least 1", what, length));
  }
  if (!(options.held_out > 0 && options.held_out < 1)) {
    throw InvalidArgumentError(fmt::format("{}: held_out = {}; expected a fraction in (0, 1)", what, options.held_out));
  }
  // Training windows read text[0, split]; held-out ones text[split, end).
  const size_t split = static_cast<size_t>(std::floor(static_cast<double>(text.size()) * (1 - options.held_out)));
  const size_t window = static_cast<size_t>(length) + 1;
  if (split < window || text.size() - split < window) {
    throw InvalidArgumentError(fmt::format(
        "{}: {} bytes, {} for training and {} held out; each part needs a window of sequence_length + 1 = {} bytes",
        what, text.size(), split, text.size() - split, window));
  }
  ByteText result;
  Windows train = windows(text, 0, split, length);
  Windows held_out = windows(text, split, text.size(), length);
  result.train_inputs = std::move(train.inputs);
  result.train_targets = std::move(train.targets);
  result.held_out_inputs = std::move(held_out.inputs);
  result.held_out_targets = std::move(held_out.targets);
  result.held_out_unigram_entropy = unigram_entropy(result.held_out_targets);
  return result;
}

ByteText load_byte_text(const std::string& path, const ByteTextOptions& options) {
  return byte_text_examples(read_input_file(path, "text", kMaxTextBytes), options, path);
}

}  // namespace accel::data
