// load_fashion_mnist on the real files when installed (Debian's
// dataset-fashion-mnist), the directory override, and small written
// directories with one defect each (image size, label range, empty split,
// count mismatch), each a DataError naming the file.
#include <accel/data/data_error.hpp>
#include <accel/data/dataset.hpp>
#include <accel/data/fashion_mnist.hpp>
#include <accel/data/idx_reader.hpp>
#include <accel/error.hpp>

#include "data_test_support.hpp"

#include <cstdlib>
#include <filesystem>

namespace accel::data {
namespace {

using testing::idx_images_header;
using testing::idx_labels;

std::vector<uint8_t> images_file(uint32_t count, uint32_t rows = 28, uint32_t cols = 28) {
  std::vector<uint8_t> bytes = idx_images_header(count, rows, cols);
  bytes.resize(bytes.size() + size_t{count} * rows * cols, 128);
  return bytes;
}

std::vector<uint8_t> labels_file(const std::vector<uint8_t>& labels) { return idx_labels(labels); }

// A Fashion-MNIST directory of 3 train and 2 test examples.
struct SmallDataset {
  testing::TemporaryDirectory directory;
  SmallDataset() {
    write("train-images-idx3-ubyte", images_file(3));
    write("train-labels-idx1-ubyte", labels_file({0, 9, 4}));
    write("t10k-images-idx3-ubyte", images_file(2));
    write("t10k-labels-idx1-ubyte", labels_file({1, 2}));
  }
  void write(const std::string& name, const std::vector<uint8_t>& bytes) {
    testing::write_bytes(directory.file(name), bytes);
  }
  std::string dir() const { return directory.path().string(); }
};

// Expects a DataError naming the file `name` of `dataset` and saying `text`.
void expect_defect(const SmallDataset& dataset, const std::string& name, const std::string& text) {
  try {
    load_fashion_mnist(dataset.dir());
    FAIL() << "expected a DataError for " << name;
  } catch (const DataError& error) {
    EXPECT_EQ(error.file(), dataset.directory.file(name)) << error.what();
    EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
  }
}

TEST(FashionMnistTest, LoadsAWellFormedDirectory) {
  SmallDataset dataset;
  FashionMnist data = load_fashion_mnist(dataset.dir());
  EXPECT_EQ(data.train_images.shape(), (Shape{3, 28, 28}));
  EXPECT_EQ(data.train_labels.to_vector<int32_t>(), (std::vector<int32_t>{0, 9, 4}));
  EXPECT_EQ(data.test_images.shape(), (Shape{2, 28, 28}));
}

// As TensorFlow's tutorial (train_images / 255.0): a division, so every byte
// value x becomes float(x) / 255.0f exactly; x * (1/255) would differ in the
// last bit for 126 of the 256 values, which the test also checks.
TEST(FashionMnistTest, EveryByteValueBecomesItsValueOver255Exactly) {
  SmallDataset dataset;
  std::vector<uint8_t> bytes = idx_images_header(1, 28, 28);
  for (int pixel = 0; pixel < 28 * 28; ++pixel) bytes.push_back(static_cast<uint8_t>(pixel % 256));
  dataset.write("train-images-idx3-ubyte", bytes);
  dataset.write("train-labels-idx1-ubyte", labels_file({3}));
  const std::vector<float> pixels = load_fashion_mnist(dataset.dir()).train_images.to_vector<float>();
  ASSERT_EQ(pixels.size(), 28u * 28u);
  int off_by_multiplying = 0;
  for (int x = 0; x < 256; ++x) {
    const float expected = static_cast<float>(x) / 255.0f;
    EXPECT_EQ(pixels[static_cast<size_t>(x)], expected) << "byte " << x;
    EXPECT_EQ(pixels[static_cast<size_t>(x + 256)], expected) << "byte " << x << ", second pixel";
    if (static_cast<float>(x) * (1.0f / 255.0f) != expected) ++off_by_multiplying;
  }
  EXPECT_EQ(off_by_multiplying, 126);
}

TEST(FashionMnistTest, ImagesThatAreNot28x28AreNamed) {
  SmallDataset dataset;
  dataset.write("t10k-images-idx3-ubyte", images_file(2, 28, 27));
  expect_defect(dataset, "t10k-images-idx3-ubyte", "byte 12: images are 28x27, expected 28x28");
}

TEST(FashionMnistTest, ALabelOutsideTheTenClassesIsNamed) {
  SmallDataset dataset;
  dataset.write("train-labels-idx1-ubyte", labels_file({0, 200, 4}));
  expect_defect(dataset, "train-labels-idx1-ubyte", "byte 9: label 200 of example 1 is outside [0, 10)");
}

TEST(FashionMnistTest, AnEmptySplitIsNamed) {
  SmallDataset dataset;
  dataset.write("t10k-images-idx3-ubyte", images_file(0));
  expect_defect(dataset, "t10k-images-idx3-ubyte", "holds no images");
}

TEST(FashionMnistTest, MoreLabelsThanImagesNamesBothFiles) {
  SmallDataset dataset;
  dataset.write("train-labels-idx1-ubyte", labels_file({0, 9, 4, 4}));
  expect_defect(dataset, "train-labels-idx1-ubyte",
                "byte 4: holds 4 labels but '" + dataset.directory.file("train-images-idx3-ubyte") + "' holds 3");
}

TEST(FashionMnistTest, ALabelsFileWhereImagesBelongIsNamed) {
  SmallDataset dataset;
  dataset.write("train-images-idx3-ubyte", labels_file({0, 9, 4}));
  expect_defect(dataset, "train-images-idx3-ubyte", "byte 0: IDX magic 0x00000801 is not the images magic");
}

TEST(FashionMnistTest, EnvironmentOverridesTheDefaultDirectory) {
  const char* previous = std::getenv("ACCEL_FASHION_MNIST_DIR");
  std::string saved = previous ? previous : "";
  ::setenv("ACCEL_FASHION_MNIST_DIR", "/somewhere/else", 1);
  EXPECT_EQ(default_fashion_mnist_dir(), "/somewhere/else");
  if (previous) {
    ::setenv("ACCEL_FASHION_MNIST_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("ACCEL_FASHION_MNIST_DIR");
  }
}

TEST(FashionMnistTest, MissingDirectoryIsNotFound) {
  testing::TemporaryDirectory directory;
  EXPECT_THROW(load_fashion_mnist(directory.path().string()), NotFoundError);
}

TEST(FashionMnistTest, LoadsTheInstalledDataset) {
  std::string dir = default_fashion_mnist_dir();
  if (!std::filesystem::exists(dir + "/train-images-idx3-ubyte.gz") &&
      !std::filesystem::exists(dir + "/train-images-idx3-ubyte")) {
    GTEST_SKIP() << "Fashion-MNIST is not installed in " << dir;
  }
  FashionMnist data = load_fashion_mnist();
  EXPECT_EQ(data.train_images.shape(), (Shape{60000, 28, 28}));
  EXPECT_EQ(data.train_labels.shape(), (Shape{60000}));
  EXPECT_EQ(data.test_images.shape(), (Shape{10000, 28, 28}));
  EXPECT_EQ(data.test_labels.shape(), (Shape{10000}));
  EXPECT_EQ(data.train_images.dtype(), DType::kFloat32);
  EXPECT_EQ(data.train_labels.dtype(), DType::kInt32);
  auto pixels = data.test_images.to_vector<float>();
  float most = 0.0f;
  for (float p : pixels) most = std::max(most, p);
  EXPECT_FLOAT_EQ(most, 1.0f);
  auto labels = data.test_labels.to_vector<int32_t>();
  EXPECT_EQ(*std::max_element(labels.begin(), labels.end()), 9);

  // The tutorial's pipeline over it.
  Iterator iterator = Dataset::from_tensor_slices({data.test_images, data.test_labels})
                          .shuffle(1000, 1)
                          .batch(32)
                          .prefetch(AUTOTUNE)
                          .make_iterator();
  auto batch = iterator.next();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ((*batch)[0].shape(), (Shape{32, 28, 28}));
  EXPECT_EQ((*batch)[1].shape(), (Shape{32}));
}

}  // namespace
}  // namespace accel::data
