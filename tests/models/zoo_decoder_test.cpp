// The zoo's decoder-only language model learns real text: byte-level
// next-token prediction on the GNU GPL version 3 as Debian's base-files ships
// it (/usr/share/common-licenses/GPL-3), compiled steps, and the loss falls
// far below the uniform guess's log(256).
#include <accel/keras/backend.hpp>
#include <accel/keras/losses.hpp>
#include <accel/keras/optimizers.hpp>
#include <accel/placement.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "../common/batch_losses.hpp"
#include "model_zoo.hpp"

namespace accel::model_zoo {
namespace {

constexpr const char* kText = "/usr/share/common-licenses/GPL-3";

// Three epochs of byte-level next-token prediction on the text; the losses per step.
std::vector<double> train_on_the_text(const DecoderLanguageModelOptions& options, int64_t* parameters) {
  std::ifstream in(kText, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const int64_t length = options.sequence_length;
  // Windows of length + 1 bytes, one every `length`: the input and its next bytes.
  std::vector<int32_t> inputs, targets;
  int64_t sequences = 0;
  for (size_t start = 0; start + length + 1 <= text.size() && sequences < 384; start += length, ++sequences) {
    for (int64_t offset = 0; offset < length; ++offset) {
      inputs.push_back(static_cast<unsigned char>(text[start + offset]));
      targets.push_back(static_cast<unsigned char>(text[start + offset + 1]));
    }
  }
  EXPECT_GE(sequences, 256) << "the text is shorter than expected";

  DeviceScope on_cpu("/CPU:0");
  keras::clear_session();
  keras::set_random_seed(7);
  std::shared_ptr<keras::Model> model = decoder_language_model(options);
  EXPECT_EQ(model->outputs().front().shape(), keras::LayerShape({keras::kUnknownDim, length, options.vocabulary}));
  *parameters = model->count_params();
  model->compile(std::make_shared<keras::Adam>(keras::AdamOptions{.learning_rate = 3e-3}),
                 std::make_shared<keras::SparseCategoricalCrossentropy>(keras::CrossentropyOptions{.from_logits = true}),
                 {}, {.jit_compile = true});
  auto losses = std::make_shared<testing::BatchLosses>();
  model->fit(Tensor::from_vector<int32_t>(inputs, Shape{sequences, length}),
             Tensor::from_vector<int32_t>(targets, Shape{sequences, length}),
             {.epochs = 3, .batch_size = 32, .verbose = 0, .callbacks = {losses}, .seed = 3});
  EXPECT_EQ(model->train_function()->statistics().eager_reason, "");
  return losses->losses;
}

TEST(ZooDecoderLanguageModel, LearnsTheNextByteOfARealText) {
  if (!std::filesystem::exists(kText)) GTEST_SKIP() << kText << " is missing (Debian's base-files ships it)";
  DecoderLanguageModelOptions options;
  int64_t parameters = 0;
  const std::vector<double> losses = train_on_the_text(options, &parameters);
  ASSERT_EQ(losses.size(), 36u);
  EXPECT_NEAR(losses.front(), std::log(256.0), 0.5);  // a fresh model guesses about uniformly
  EXPECT_LT(losses.back(), 3.2) << "three epochs of an English text should reach well under log(256) = 5.55";

  // Rotary positions: no position embedding's weights, and it learns as well.
  options.rotary_positions = true;
  int64_t rotary_parameters = 0;
  const std::vector<double> rotary = train_on_the_text(options, &rotary_parameters);
  EXPECT_EQ(rotary_parameters, parameters - options.sequence_length * options.dim);
  ASSERT_EQ(rotary.size(), 36u);
  EXPECT_LT(rotary.back(), 3.2);

  // Logits tied to the embedding: the logits' kernel and bias are gone (the
  // table is one variable, trained by both uses), and it learns as well.
  options.rotary_positions = false;
  options.tied_logits = true;
  int64_t tied_parameters = 0;
  const std::vector<double> tied = train_on_the_text(options, &tied_parameters);
  EXPECT_EQ(tied_parameters, parameters - (options.dim + 1) * options.vocabulary);
  ASSERT_EQ(tied.size(), 36u);
  EXPECT_NEAR(tied.front(), std::log(256.0), 0.5);
  EXPECT_LT(tied.back(), 3.2);
}

}  // namespace
}  // namespace accel::model_zoo
