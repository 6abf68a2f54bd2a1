// data::load_byte_text: a file as next-byte examples. Windows and their
// targets, the held-out tail kept out of training, the unigram entropy, and
// the refusals (sizes, fractions, paths that are not regular files).
#include <accel/data/byte_text.hpp>
#include <accel/error.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace accel::data {
namespace {

std::vector<int32_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

TEST(ByteText, WindowsAreFollowedByTheirNextBytes) {
  // 20 bytes, a tenth held out: training reads bytes [0, 18), held out [18, 20).
  const std::string text = "abcdefghijklmnopqrst";
  const ByteText examples = byte_text_examples(text, {.sequence_length = 1, .held_out = 0.1}, "text");
  EXPECT_EQ(examples.train_inputs.shape(), (Shape{17, 1}));
  EXPECT_EQ(examples.train_inputs.to_vector<int32_t>(), bytes_of("abcdefghijklmnopq"));
  EXPECT_EQ(examples.train_targets.to_vector<int32_t>(), bytes_of("bcdefghijklmnopqr"));
  EXPECT_EQ(examples.held_out_inputs.to_vector<int32_t>(), bytes_of("s"));
  EXPECT_EQ(examples.held_out_targets.to_vector<int32_t>(), bytes_of("t"));
}

TEST(ByteText, NoHeldOutByteIsATrainingInputOrTarget) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>('a' + i % 26);
  const ByteText examples = byte_text_examples(text, {.sequence_length = 7, .held_out = 0.25}, "text");
  // The training windows end before byte 750, where the held-out part starts.
  EXPECT_EQ(examples.train_inputs.shape(), (Shape{(750 - 1) / 7, 7}));
  EXPECT_EQ(examples.held_out_inputs.shape(), (Shape{(250 - 1) / 7, 7}));
  const std::vector<int32_t> last_targets = examples.train_targets.to_vector<int32_t>();
  const size_t last_target_index = last_targets.size();  // = the byte index of the last target
  EXPECT_LT(last_target_index, 750u);
  EXPECT_EQ(last_targets.back(), 'a' + static_cast<int>(last_target_index % 26));
  EXPECT_EQ(examples.held_out_inputs.to_vector<int32_t>().front(), 'a' + 750 % 26);
}

TEST(ByteText, TheUnigramEntropyIsThatOfTheHeldOutTargets) {
  // Held-out targets "abab...": two bytes equally often, log(2) nats.
  std::string text(90, 'z');
  for (int i = 0; i < 10; ++i) text += i % 2 == 0 ? 'a' : 'b';
  const ByteText examples = byte_text_examples(text, {.sequence_length = 3, .held_out = 0.1}, "text");
  // Held-out bytes [90, 100): windows at 90, 93, 96; targets 91..99.
  EXPECT_EQ(examples.held_out_targets.to_vector<int32_t>(), bytes_of("babababab"));
  const double p = 5.0 / 9.0;
  EXPECT_NEAR(examples.held_out_unigram_entropy, -(p * std::log(p) + (1 - p) * std::log(1 - p)), 1e-12);
}

TEST(ByteText, BadSizesAndFractionsAreNamed) {
  const std::string text(100, 'x');
  auto message = [&](ByteTextOptions options) {
    try {
      byte_text_examples(text, options, "notes.txt");
    } catch (const InvalidArgumentError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.sequence_length = 0}).find("notes.txt: sequence_length = 0; expected at least 1"),
            std::string::npos);
  EXPECT_NE(message({.held_out = 1.0}).find("held_out = 1; expected a fraction in (0, 1)"), std::string::npos);
  EXPECT_NE(message({.held_out = 0.0}).find("held_out = 0"), std::string::npos);
  // 10 bytes held out cannot hold a window of 65.
  EXPECT_NE(message({.sequence_length = 64, .held_out = 0.1})
                .find("notes.txt: 100 bytes, 90 for training and 10 held out; each part needs a window of "
                      "sequence_length + 1 = 65 bytes"),
            std::string::npos)
      << message({.sequence_length = 64, .held_out = 0.1});
}

TEST(ByteText, APathThatIsNotARegularFileIsRefusedBeforeReading) {
  const std::filesystem::path folder = std::filesystem::temp_directory_path();
  EXPECT_THROW(load_byte_text(folder.string(), {}), InvalidArgumentError);
  EXPECT_THROW(load_byte_text((folder / "accel-no-such-text").string(), {}), NotFoundError);
  const std::filesystem::path file = folder / "accel-byte-text-test.txt";
  std::ofstream(file) << std::string(200, 'q');
  const ByteText examples = load_byte_text(file.string(), {.sequence_length = 4, .held_out = 0.5});
  EXPECT_EQ(examples.train_inputs.shape(), (Shape{24, 4}));
  EXPECT_EQ(examples.held_out_unigram_entropy, 0.0);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace accel::data
