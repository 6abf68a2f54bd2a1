// The .keras / .weights.h5 loaders against damaged files: thousands of
// seeded mutations of TensorFlow's golden archives (bytes flipped anywhere;
// the weights member corrupted inside an otherwise sound zip, so that the
// HDF5 reader sees it; config.json edited so the JSON and config readers
// do). Every outcome must be a model or a typed accel::Error naming the file,
// never a crash or another exception type. The suite runs under AddressSanitizer
// with the rest, which turns a stray read into a failure.
#include <accel/error.hpp>
#include <accel/keras/backend.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/keras_file.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "saving_test_support.hpp"
#include "zip_archive.hpp"

namespace accel::keras {
namespace {

using testing::TemporaryFolder;

std::string golden(const std::string& name) { return std::string(ACCEL_KERAS_GOLDEN_DIR) + "/keras3/" + name; }

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Flips, overwrites, inserts or deletes a few bytes, or truncates.
std::string mutate(std::string bytes, std::mt19937& random) {
  std::uniform_int_distribution<int> kind(0, 4);
  const int edits = 1 + static_cast<int>(random() % 4);
  for (int edit = 0; edit < edits && !bytes.empty(); ++edit) {
    const size_t at = random() % bytes.size();
    switch (kind(random)) {
      case 0: bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8))); break;
      case 1: bytes[at] = static_cast<char>(random()); break;
      case 2: bytes.insert(at, 1 + random() % 8, static_cast<char>(random())); break;
      case 3: bytes.erase(at, 1 + random() % 16); break;
      default: bytes.resize(at); break;
    }
  }
  return bytes;
}

// Loads `path`; a failure must be an accel::Error naming the file.
void expect_model_or_typed_error(const std::string& path, const std::string& what) {
  clear_session();
  try {
    std::unique_ptr<Model> model = saving::load_model(path);
    EXPECT_TRUE(model->built()) << what;
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << what << ": " << error.what();
  } catch (const std::exception& error) {
    ADD_FAILURE() << what << ": untyped " << typeid(error).name() << ": " << error.what();
  }
}

class Keras3FuzzTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Keras3FuzzTest, DamagedArchivesAreTypedErrors) {
  TemporaryFolder folder;
  const std::string original = read_bytes(golden(GetParam() + ".keras"));
  std::mt19937 random(20261125);
  for (int trial = 0; trial < 400; ++trial) {
    const std::string path = folder.file("archive.keras");
    std::ofstream(path, std::ios::binary) << mutate(original, random);
    expect_model_or_typed_error(path, "archive mutation " + std::to_string(trial));
  }
}

TEST_P(Keras3FuzzTest, DamagedWeightsAndConfigsInsideSoundZipsAreTypedErrors) {
  TemporaryFolder folder;
  const auto members = saving::read_zip_archive(golden(GetParam() + ".keras"));
  std::mt19937 random(1125);
  for (int trial = 0; trial < 400; ++trial) {
    auto damaged = members;
    const char* target = trial % 2 == 0 ? "model.weights.h5" : "config.json";
    damaged[target] = mutate(damaged[target], random);
    const std::string path = folder.file("member.keras");
    std::ofstream(path, std::ios::binary) << saving::make_zip_archive(
        {{"metadata.json", damaged["metadata.json"]}, {"config.json", damaged["config.json"]},
         {"model.weights.h5", damaged["model.weights.h5"]}},
        path);
    expect_model_or_typed_error(path, std::string(target) + " mutation " + std::to_string(trial));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Keras3FuzzTest, ::testing::Values("mlp", "functional"));

}  // namespace
}  // namespace accel::keras
