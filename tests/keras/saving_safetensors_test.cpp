// The safetensors reader and writer: round trips of every dtype, the layout
// Python's safetensors reads (golden files of golden/safetensors_golden.py),
// every kind of corrupt file named in the error, and atomic replacement.
#include <accel/error.hpp>
#include <accel/keras/saving/atomic_file.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "saving_test_support.hpp"

namespace accel::keras::saving {
namespace {

using keras::testing::read_text;
using keras::testing::TemporaryFolder;

template <typename T>
std::vector<uint8_t> raw_bytes(std::initializer_list<T> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

// The table of golden/safetensors_golden.py's EXPECTED, in accel's write order.
SafetensorsContents golden_contents() {
  SafetensorsContents contents;
  contents.tensors = {
      {"weights/f32", DType::kFloat32, Shape{2, 3}, raw_bytes<float>({0.5f, -1.25f, 3.0f, 1e-3f, -0.0f, 65504.0f})},
      {"weights/bf16", DType::kBFloat16, Shape{3}, raw_bytes<uint16_t>({0x3F80, 0xC000, 0x3E80})},
      {"weights/f16", DType::kFloat16, Shape{2}, raw_bytes<uint16_t>({0x3C00, 0xB800})},
      {"counters/i32", DType::kInt32, Shape{2}, raw_bytes<int32_t>({7, -3})},
      {"counters/i64", DType::kInt64, Shape{}, raw_bytes<int64_t>({1234567890123})},
      {"mask/u8", DType::kUInt8, Shape{4}, {0, 1, 254, 255}},
      {"mask/bool", DType::kBool, Shape{3}, {1, 0, 1}},
      {"empty", DType::kFloat32, Shape{0, 2}, {}},
  };
  contents.metadata = {{"format", "accel"}, {"epoch", "3"}};
  return contents;
}

void expect_same_tensors(const SafetensorsContents& actual, const SafetensorsContents& expected) {
  ASSERT_EQ(actual.tensors.size(), expected.tensors.size());
  for (const StoredTensor& want : expected.tensors) {
    const StoredTensor* got = actual.find(want.name);
    ASSERT_NE(got, nullptr) << want.name;
    EXPECT_EQ(got->dtype, want.dtype) << want.name;
    EXPECT_EQ(got->shape, want.shape) << want.name;
    EXPECT_EQ(got->bytes, want.bytes) << want.name;
  }
  EXPECT_EQ(actual.metadata, expected.metadata);
}

std::string golden_path(const std::string& name) { return std::string(ACCEL_KERAS_GOLDEN_DIR) + "/" + name; }

TEST(Safetensors, RoundTripsEveryDtypeScalarsEmptyTensorsAndMetadata) {
  const SafetensorsContents contents = golden_contents();
  expect_same_tensors(parse_safetensors(serialize_safetensors(contents), "memory"), contents);
}

TEST(Safetensors, LayoutIsLengthThenPaddedJsonThenPackedData) {
  SafetensorsContents contents;
  contents.tensors = {{"a", DType::kFloat32, Shape{2}, raw_bytes<float>({1.0f, 2.0f})},
                      {"b", DType::kUInt8, Shape{1}, {9}}};
  const std::string file = serialize_safetensors(contents);
  const std::string json = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                           R"("b":{"dtype":"U8","shape":[1],"data_offsets":[8,9]}})";
  const size_t padded = (json.size() + 7) / 8 * 8;  // spaces up to a multiple of 8, as the reference writer
  ASSERT_EQ(file.size(), 8 + padded + 9);
  EXPECT_EQ(static_cast<uint8_t>(file[0]), padded);
  EXPECT_EQ(file.substr(1, 7), std::string(7, '\0'));
  EXPECT_EQ(file.substr(8, padded), json + std::string(padded - json.size(), ' '));
  EXPECT_EQ(file.substr(8 + padded), std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x09", 9));
}

TEST(Safetensors, WriterRefusesDuplicateNamesAndWrongByteCounts) {
  SafetensorsContents duplicate;
  duplicate.tensors = {{"a", DType::kUInt8, Shape{1}, {1}}, {"a", DType::kUInt8, Shape{1}, {2}}};
  EXPECT_THROW(serialize_safetensors(duplicate), InvalidArgumentError);
  SafetensorsContents short_data;
  short_data.tensors = {{"a", DType::kFloat32, Shape{2}, {1, 2, 3}}};
  EXPECT_THROW(serialize_safetensors(short_data), InvalidArgumentError);
}

// --- Interoperability with Python's safetensors (golden/safetensors_golden.py).

TEST(SafetensorsGolden, AccelWritesTheFilePythonRead) {
  const std::string path = golden_path("accel_written.safetensors");
  const std::string bytes = serialize_safetensors(golden_contents());
  if (std::getenv("ACCEL_WRITE_GOLDEN") != nullptr) write_file_atomically(path, bytes);
  // These bytes were read and checked by Python's safetensors.
  EXPECT_EQ(read_text(path), bytes) << "accel's safetensors output changed; rerun golden/safetensors_golden.py";
}

TEST(SafetensorsGolden, PythonReadEveryTensorAsAccelMeantIt) {
  // accel_written.python_view.txt: "name|dtype|shape|hex" as Python read them.
  std::ifstream view(golden_path("accel_written.python_view.txt"));
  ASSERT_TRUE(view) << "missing golden file; run golden/safetensors_golden.py";
  const SafetensorsContents expected = golden_contents();
  std::string line;
  size_t checked = 0;
  while (std::getline(view, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    for (size_t start = 0, bar; start <= line.size(); start = bar + 1) {
      bar = line.find('|', start);
      if (bar == std::string::npos) bar = line.size();
      fields.push_back(line.substr(start, bar - start));
    }
    ASSERT_EQ(fields.size(), 4u) << line;
    const StoredTensor* tensor = expected.find(fields[0]);
    ASSERT_NE(tensor, nullptr) << fields[0];
    EXPECT_EQ(fields[1], safetensors_dtype_name(tensor->dtype));
    std::string shape = "[";
    for (int32_t axis = 0; axis < tensor->shape.rank(); ++axis) shape += (axis ? ", " : "") + std::to_string(tensor->shape[axis]);
    EXPECT_EQ(fields[2], shape + "]");
    std::string hex;
    for (uint8_t byte : tensor->bytes) {
      char two[3];
      std::snprintf(two, sizeof two, "%02x", byte);
      hex += two;
    }
    EXPECT_EQ(fields[3], hex) << fields[0];
    ++checked;
  }
  EXPECT_EQ(checked, expected.tensors.size());
}

TEST(SafetensorsGolden, ReadsAFileWrittenByPython) {
  expect_same_tensors(read_safetensors_file(golden_path("python_written.safetensors")), golden_contents());
}

// --- Corrupt files: each names the file and the fault.

// A file from a header text and data bytes (length prefix computed).
std::string file_with_header(const std::string& header, const std::string& data = "") {
  std::string file(8, '\0');
  for (int index = 0; index < 8; ++index) file[index] = static_cast<char>((header.size() >> (8 * index)) & 0xff);
  return file + header + data;
}

void expect_corrupt(const std::string& bytes, const std::string& fault) {
  try {
    parse_safetensors(bytes, "/data/model.safetensors");
    ADD_FAILURE() << "parsed a file with: " << fault;
  } catch (const InvalidArgumentError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("/data/model.safetensors"), std::string::npos) << message;
    EXPECT_NE(message.find(fault), std::string::npos) << "expected '" << fault << "' in: " << message;
  }
}

TEST(SafetensorsCorrupt, ShorterThanTheLengthField) { expect_corrupt("abc", "fewer than the 8"); }

TEST(SafetensorsCorrupt, HeaderLengthPastTheEndOfTheFile) {
  std::string file = file_with_header(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "x");
  file[0] = static_cast<char>(200);
  expect_corrupt(file, "runs past the end of the file");
}

TEST(SafetensorsCorrupt, HugeHeaderLength) {
  std::string file = file_with_header("{}");
  file[7] = 1;
  expect_corrupt(file, "exceeds the format's limit");
}

TEST(SafetensorsCorrupt, BadJson) { expect_corrupt(file_with_header(R"({"a": {"dtype": )"), "not valid JSON"); }

// Found by the fuzzer: nlohmann raises out_of_range, not parse_error, for a number it cannot hold.
TEST(SafetensorsCorrupt, ANumberTooLargeForJson) {
  expect_corrupt(file_with_header(R"({"a": {"dtype": "F32", "shape": [1e99999], "data_offsets": [0, 4]}})"),
                 "not valid JSON");
}

TEST(SafetensorsCorrupt, HeaderNotAnObject) { expect_corrupt(file_with_header("[1, 2]"), "does not start with '{'"); }

TEST(SafetensorsCorrupt, UnknownDtype) {
  expect_corrupt(file_with_header(R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", std::string(8, 'x')),
                 "dtype \"F64\"");
}

TEST(SafetensorsCorrupt, MissingField) {
  expect_corrupt(file_with_header(R"({"a":{"dtype":"U8","data_offsets":[0,1]}})", "x"), "no \"shape\"");
}

TEST(SafetensorsCorrupt, OffsetsThatDoNotMatchTheShape) {
  expect_corrupt(file_with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "xxxx"),
                 "tensor 'a': data_offsets [0,4] hold 4 bytes but shape [2] of F32 needs 8");
}

TEST(SafetensorsCorrupt, OffsetsOutOfRange) {
  // A truncated file: the last tensor ends past the data.
  expect_corrupt(file_with_header(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", "xx"),
                 "tensor 'a' ends at data offset 4 past the end of the data (2 bytes; truncated?)");
}

TEST(SafetensorsCorrupt, OverlappingTensors) {
  expect_corrupt(file_with_header(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                  R"("b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
                                  "xxx"),
                 "overlapping data");
}

TEST(SafetensorsCorrupt, GapBetweenTensors) {
  expect_corrupt(file_with_header(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                                  R"("b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})",
                                  "xxx"),
                 "a gap in the data");
}

TEST(SafetensorsCorrupt, TrailingBytesAfterTheData) {
  expect_corrupt(file_with_header(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "xx"),
                 "cover 1 bytes of data but the file holds 2");
}

TEST(SafetensorsCorrupt, NonStringMetadata) {
  expect_corrupt(file_with_header(R"({"__metadata__":{"epoch":3}})"), "\"__metadata__\" entry 'epoch' is not a string");
}

TEST(SafetensorsCorrupt, TruncatedRealFileAtEveryLength) {
  // Every prefix of a valid file is refused (never a crash or a silent partial read).
  const std::string file = serialize_safetensors(golden_contents());
  for (size_t length = 0; length < file.size(); ++length) {
    EXPECT_THROW(parse_safetensors(file.substr(0, length), "prefix"), InvalidArgumentError) << length;
  }
}

TEST(SafetensorsFile, MissingFileIsNotFound) {
  TemporaryFolder folder;
  EXPECT_THROW(read_safetensors_file(folder.file("none.safetensors")), NotFoundError);
}

// --- Atomic replacement.

class AtomicWrite : public ::testing::Test {
 protected:
  void TearDown() override { set_atomic_write_hook_for_testing({}); }

  // The folder holds only the target (no temporary file left behind).
  static void expect_only_file(const TemporaryFolder& folder, const std::string& name) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(folder.path())) names.push_back(entry.path().filename());
    EXPECT_EQ(names, std::vector<std::string>{name});
  }
};

TEST_F(AtomicWrite, FailureHalfWayLeavesTheOldFileIntact) {
  TemporaryFolder folder;
  const std::string path = folder.file("weights.safetensors");
  SafetensorsContents old_contents = golden_contents();
  write_safetensors_file(path, old_contents);
  const std::string old_bytes = read_text(path);

  SafetensorsContents new_contents;
  new_contents.tensors = {{"other", DType::kUInt8, Shape{3}, {1, 2, 3}}};
  for (AtomicWriteStage stage : {AtomicWriteStage::kHalfWritten, AtomicWriteStage::kBeforeRename}) {
    set_atomic_write_hook_for_testing([stage](AtomicWriteStage at) {
      if (at == stage) throw InternalError("injected failure (disk full)");
    });
    EXPECT_THROW(write_safetensors_file(path, new_contents), InternalError);
    EXPECT_EQ(read_text(path), old_bytes);
    expect_only_file(folder, "weights.safetensors");
  }
  set_atomic_write_hook_for_testing({});
  write_safetensors_file(path, new_contents);
  expect_same_tensors(read_safetensors_file(path), new_contents);
  expect_only_file(folder, "weights.safetensors");
}

TEST_F(AtomicWrite, MissingFolderIsNotFound) {
  TemporaryFolder folder;
  EXPECT_THROW(write_file_atomically(folder.file("no/such/dir/w.safetensors"), "x"), NotFoundError);
}

TEST_F(AtomicWrite, ReadOnlyFolderFailsAndKeepsTheOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores folder permissions; the injected failures cover this";
  TemporaryFolder folder;
  const std::string path = folder.file("w.bin");
  write_file_atomically(path, "old");
  std::filesystem::permissions(folder.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  EXPECT_THROW(write_file_atomically(path, "new"), FailedPreconditionError);
  std::filesystem::permissions(folder.path(), std::filesystem::perms::owner_all);
  EXPECT_EQ(read_text(path), "old");
}

}  // namespace
}  // namespace accel::keras::saving
