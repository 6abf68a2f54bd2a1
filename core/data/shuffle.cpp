// Dataset::shuffle with tf.data's semantics: a buffer holds the first
// buffer_size elements; each output takes a uniformly random slot and the slot
// is refilled from the input. With reshuffle_each_iteration, every pass seeds
// its generator from (seed, pass number), so epochs differ yet are reproducible.
#include "element_codec.hpp"
#include "transformations.hpp"

#include <random>
#include <sstream>

namespace accel::data::detail {
namespace {

class ShuffleIterator : public IteratorNode {
 public:
  ShuffleIterator(std::unique_ptr<IteratorNode> input, int64_t buffer_size, uint64_t seed)
      : input_(std::move(input)), buffer_size_(static_cast<size_t>(buffer_size)), generator_(seed) {}

  std::optional<Element> next() override {
    while (!input_exhausted_ && buffer_.size() < buffer_size_) {
      auto element = input_->next();
      if (!element) {
        input_exhausted_ = true;
        break;
      }
      buffer_.push_back(std::move(*element));
    }
    if (buffer_.empty()) return std::nullopt;
    std::uniform_int_distribution<size_t> pick(0, buffer_.size() - 1);
    size_t slot = pick(generator_);
    Element chosen = std::move(buffer_[slot]);
    std::optional<Element> refill = input_exhausted_ ? std::nullopt : input_->next();
    if (refill) {
      buffer_[slot] = std::move(*refill);
    } else {
      input_exhausted_ = true;
      buffer_[slot] = std::move(buffer_.back());
      buffer_.pop_back();
    }
    return chosen;
  }

  void save(nlohmann::json& state) override {
    std::ostringstream generator_text;
    generator_text << generator_;
    state["generator"] = generator_text.str();
    state["input_exhausted"] = input_exhausted_;
    nlohmann::json buffer = nlohmann::json::array();
    for (const auto& element : buffer_) buffer.push_back(nlohmann::json::binary(encode_element(element)));
    state["buffer"] = std::move(buffer);
    input_->save(state["input"]);
  }
  void restore(const nlohmann::json& state) override {
    std::istringstream generator_text(state.at("generator").get<std::string>());
    generator_text >> generator_;
    input_exhausted_ = state.at("input_exhausted").get<bool>();
    buffer_.clear();
    for (const auto& encoded : state.at("buffer")) {
      const auto& bytes = encoded.get_binary();
      MemoryElementReader reader(bytes, "iterator checkpoint (shuffle buffer)");
      buffer_.push_back(decode_element(reader));
    }
    input_->restore(state.at("input"));
  }
  void report(std::vector<NodeReport>& reports) const override { input_->report(reports); }

 private:
  std::unique_ptr<IteratorNode> input_;
  size_t buffer_size_;
  std::mt19937_64 generator_;
  std::vector<Element> buffer_;
  bool input_exhausted_ = false;
};

class ShuffleNode : public UnaryDatasetNode {
 public:
  ShuffleNode(NodePtr input, int64_t buffer_size, ShuffleOptions options)
      : UnaryDatasetNode(std::move(input)),
        buffer_size_(buffer_size),
        options_(options),
        seed_(options.seed ? *options.seed : std::random_device{}()) {}

  std::unique_ptr<IteratorNode> make_iterator(const IteratorContext& context) const override {
    uint64_t seed = options_.reshuffle_each_iteration ? mix_seed(seed_, context.iteration) : seed_;
    return std::make_unique<ShuffleIterator>(input()->make_iterator(context), buffer_size_, seed);
  }
  std::string describe() const override {
    return input()->describe() + ".shuffle(" + std::to_string(buffer_size_) + ")";
  }

 private:
  int64_t buffer_size_;
  ShuffleOptions options_;
  uint64_t seed_;  // drawn once per Dataset when no seed was given
};

}  // namespace

NodePtr make_shuffle_node(NodePtr input, int64_t buffer_size, ShuffleOptions options) {
  return std::make_shared<ShuffleNode>(std::move(input), buffer_size, options);
}

}  // namespace accel::data::detail
