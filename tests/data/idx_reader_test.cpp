// IDX readers on small files the tests write: raw and gzip, dtypes, and the
// errors for bad magic, truncation, trailing bytes, forged dims, empty sets,
// unexpected image sizes, labels out of range and decompression bombs.
#include <accel/data/data_error.hpp>
#include <accel/data/idx_reader.hpp>
#include <accel/error.hpp>

#include "data_test_support.hpp"

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace accel::data {
namespace {

using testing::TemporaryDirectory;
using testing::write_bytes;

using testing::idx_images_header;
using testing::idx_labels;

// Two 2x3 images with pixels 0, 51, 102, ...
std::vector<uint8_t> images_file() {
  std::vector<uint8_t> bytes = idx_images_header(2, 2, 3);
  for (int i = 0; i < 12; ++i) bytes.push_back(static_cast<uint8_t>((i * 51) % 256));
  return bytes;
}

std::vector<uint8_t> labels_file() { return idx_labels({9, 0, 4}); }

std::vector<uint8_t> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Expects a DataError naming `path` whose message contains `text`.
template <typename Call>
void expect_data_error_saying(Call call, const std::string& path, const std::string& text) {
  try {
    call();
    FAIL() << "expected DataError for " << path;
  } catch (const DataError& error) {
    EXPECT_EQ(error.file(), path);
    EXPECT_NE(std::string(error.what()).find(text), std::string::npos) << error.what();
  }
}

void write_gzip(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(file);
}

// Expects a DataError naming `path` whose location contains `location`.
template <typename Call>
void expect_data_error(Call call, const std::string& path, const std::string& location) {
  try {
    call();
    FAIL() << "expected DataError for " << path;
  } catch (const DataError& error) {
    EXPECT_EQ(error.file(), path);
    EXPECT_NE(error.location().find(location), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
  }
}

TEST(IdxReaderTest, ReadsRawImagesAsUInt8) {
  TemporaryDirectory directory;
  write_bytes(directory.file("images"), images_file());
  Tensor images = read_idx_images(directory.file("images"));
  EXPECT_EQ(images.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(images.dtype(), DType::kUInt8);
  auto pixels = images.to_vector<uint8_t>();
  EXPECT_EQ(pixels[1], 51);
  EXPECT_EQ(pixels[5], 255);
}

TEST(IdxReaderTest, ReadsGzipImagesAsScaledFloat) {
  TemporaryDirectory directory;
  write_gzip(directory.file("images.gz"), images_file());
  Tensor images = read_idx_images(directory.file("images.gz"), DType::kFloat32);
  EXPECT_EQ(images.dtype(), DType::kFloat32);
  auto pixels = images.to_vector<float>();
  EXPECT_FLOAT_EQ(pixels[0], 0.0f);
  EXPECT_FLOAT_EQ(pixels[1], 0.2f);
  EXPECT_FLOAT_EQ(pixels[5], 1.0f);
}

TEST(IdxReaderTest, ReadsLabelsAsInt32AndInt64) {
  TemporaryDirectory directory;
  write_bytes(directory.file("labels"), labels_file());
  EXPECT_EQ(read_idx_labels(directory.file("labels")).to_vector<int32_t>(), (std::vector<int32_t>{9, 0, 4}));
  EXPECT_EQ(read_idx_labels(directory.file("labels"), DType::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{9, 0, 4}));
  EXPECT_EQ(read_idx(directory.file("labels")).shape(), (Shape{3}));
}

TEST(IdxReaderTest, TruncatedDataNamesFileAndOffset) {
  TemporaryDirectory directory;
  auto bytes = images_file();
  bytes.resize(bytes.size() - 4);
  write_bytes(directory.file("short"), bytes);
  expect_data_error([&] { read_idx_images(directory.file("short")); }, directory.file("short"),
                    "byte " + std::to_string(bytes.size()));
}

TEST(IdxReaderTest, TruncatedHeaderNamesFileAndOffset) {
  TemporaryDirectory directory;
  auto bytes = images_file();
  bytes.resize(10);
  write_bytes(directory.file("header"), bytes);
  expect_data_error([&] { read_idx_images(directory.file("header")); }, directory.file("header"), "byte 10");
}

TEST(IdxReaderTest, TruncatedGzipStreamIsAnError) {
  TemporaryDirectory directory;
  write_gzip(directory.file("full.gz"), images_file());
  std::ifstream in(directory.file("full.gz"), std::ios::binary);
  std::vector<uint8_t> compressed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  compressed.resize(compressed.size() / 2);
  write_bytes(directory.file("half.gz"), compressed);
  expect_data_error([&] { read_idx_images(directory.file("half.gz")); }, directory.file("half.gz"), "byte");
}

TEST(IdxReaderTest, GzipOfTruncatedIdxReportsDecompressedOffset) {
  TemporaryDirectory directory;
  auto bytes = images_file();
  bytes.resize(20);
  write_gzip(directory.file("short.gz"), bytes);
  expect_data_error([&] { read_idx_images(directory.file("short.gz")); }, directory.file("short.gz"),
                    "decompressed byte 20");
}

TEST(IdxReaderTest, BadMagicIsAnError) {
  TemporaryDirectory directory;
  write_bytes(directory.file("text"), {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!'});
  expect_data_error([&] { read_idx(directory.file("text")); }, directory.file("text"), "byte 0");
  // A labels file where images are expected.
  write_bytes(directory.file("labels"), labels_file());
  expect_data_error([&] { read_idx_images(directory.file("labels")); }, directory.file("labels"), "byte 0");
}

TEST(IdxReaderTest, TrailingBytesAreAnError) {
  TemporaryDirectory directory;
  auto bytes = labels_file();
  bytes.push_back(7);
  write_bytes(directory.file("long"), bytes);
  expect_data_error([&] { read_idx_labels(directory.file("long")); }, directory.file("long"), "byte 11");
}

TEST(IdxReaderTest, EmptyAndMissingFiles) {
  TemporaryDirectory directory;
  write_bytes(directory.file("empty"), {});
  expect_data_error([&] { read_idx(directory.file("empty")); }, directory.file("empty"), "byte 0");
  EXPECT_THROW(read_idx(directory.file("missing")), NotFoundError);
}

TEST(IdxReaderTest, DimsWhoseProductIsAbsurdAreRefusedBeforeAnyAllocation) {
  TemporaryDirectory directory;
  // 65536 x 65536 x 65536 overflows nothing here but would ask for 2^48 bytes.
  write_bytes(directory.file("huge"), idx_images_header(65536, 65536, 65536));
  expect_data_error_saying([&] { read_idx(directory.file("huge")); }, directory.file("huge"),
                           "more than the 2147483648 elements");
  // 2^32-1 cubed would wrap a 64-bit product.
  write_bytes(directory.file("wrap"), idx_images_header(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF));
  expect_data_error([&] { read_idx(directory.file("wrap")); }, directory.file("wrap"), "byte 4");
}

TEST(IdxReaderTest, ZeroImagesOrLabelsAreAnError) {
  TemporaryDirectory directory;
  write_bytes(directory.file("no-images"), idx_images_header(0, 28, 28));
  expect_data_error_saying([&] { read_idx_images(directory.file("no-images")); }, directory.file("no-images"),
                           "holds no images");
  write_bytes(directory.file("no-labels"), idx_labels({}));
  expect_data_error([&] { read_idx_labels(directory.file("no-labels")); }, directory.file("no-labels"), "byte 4");
}

TEST(IdxReaderTest, ImagesOfZeroRowsAreAnError) {
  TemporaryDirectory directory;
  write_bytes(directory.file("flat"), idx_images_header(3, 0, 28));
  expect_data_error([&] { read_idx_images(directory.file("flat")); }, directory.file("flat"), "byte 8");
}

TEST(IdxReaderTest, ImagesOfAnotherSizeThanExpectedNameTheDimension) {
  TemporaryDirectory directory;
  auto bytes = idx_images_header(1, 28, 27);
  bytes.resize(bytes.size() + 28 * 27);
  write_bytes(directory.file("28x27"), bytes);
  EXPECT_EQ(read_idx_images(directory.file("28x27")).shape(), (Shape{1, 28, 27}));  // any size by default
  expect_data_error([&] { read_idx_images(directory.file("28x27"), DType::kUInt8, {28, 28}); },
                    directory.file("28x27"), "byte 12");
  expect_data_error_saying([&] { read_idx_images(directory.file("28x27"), DType::kUInt8, {28, 28}); },
                           directory.file("28x27"), "images are 28x27, expected 28x28");
}

TEST(IdxReaderTest, LabelOutsideTheClassesNamesItsByte) {
  TemporaryDirectory directory;
  write_bytes(directory.file("labels"), idx_labels({3, 9, 200, 1}));
  EXPECT_EQ(read_idx_labels(directory.file("labels")).shape(), (Shape{4}));  // any value by default
  expect_data_error([&] { read_idx_labels(directory.file("labels"), DType::kInt32, 10); },
                    directory.file("labels"), "byte 10");
  expect_data_error_saying([&] { read_idx_labels(directory.file("labels"), DType::kInt32, 10); },
                           directory.file("labels"), "label 200 of example 2 is outside [0, 10)");
}

TEST(IdxReaderTest, GzipBombStopsAtTheSizeTheHeaderImplies) {
  TemporaryDirectory directory;
  // One 28x28 image, then 16 MiB of zeros that compress to about 16 KiB.
  auto bytes = idx_images_header(1, 28, 28);
  bytes.resize(bytes.size() + 28 * 28 + (size_t{16} << 20));
  write_gzip(directory.file("bomb.gz"), bytes);
  ASSERT_LT(std::filesystem::file_size(directory.file("bomb.gz")), size_t{1} << 20);
  expect_data_error([&] { read_idx_images(directory.file("bomb.gz")); }, directory.file("bomb.gz"),
                    "decompressed byte 800");
  expect_data_error_saying([&] { read_idx_images(directory.file("bomb.gz")); }, directory.file("bomb.gz"),
                           "unexpected bytes after the IDX data of shape (1, 28, 28)");
}

TEST(IdxReaderTest, GarbageAfterTheGzipStreamIsAnError) {
  TemporaryDirectory directory;
  write_gzip(directory.file("labels.gz"), labels_file());
  auto compressed = read_whole(directory.file("labels.gz"));
  const size_t gzip_size = compressed.size();
  compressed.insert(compressed.end(), {'j', 'u', 'n', 'k'});
  write_bytes(directory.file("junk.gz"), compressed);
  expect_data_error([&] { read_idx_labels(directory.file("junk.gz")); }, directory.file("junk.gz"),
                    "byte " + std::to_string(gzip_size));
}

TEST(IdxReaderTest, ConcatenatedGzipMembersReadAsOneFile) {
  TemporaryDirectory directory;
  const auto whole = labels_file();
  write_gzip(directory.file("a.gz"), {whole.begin(), whole.begin() + 6});
  write_gzip(directory.file("b.gz"), {whole.begin() + 6, whole.end()});
  auto both = read_whole(directory.file("a.gz"));
  const auto second = read_whole(directory.file("b.gz"));
  both.insert(both.end(), second.begin(), second.end());
  write_bytes(directory.file("both.gz"), both);
  EXPECT_EQ(read_idx_labels(directory.file("both.gz")).to_vector<int32_t>(), (std::vector<int32_t>{9, 0, 4}));
}

}  // namespace
}  // namespace accel::data
