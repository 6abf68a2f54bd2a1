// libFuzzer target: any bytes given to the safetensors reader (the weights
// files and BackupAndRestore / ModelCheckpoint checkpoints) either parse, and
// then serialize and parse again to the same tensors and metadata, or give one
// InvalidArgumentError naming the file -- never a crash, another exception
// type, an allocation beyond the input's worth or a sanitizer report. Built
// and run by tests/fuzz/run_libfuzzer.sh (ctest safetensors_reader_fuzz).
#include <accel/error.hpp>
#include <accel/keras/saving/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::keras::saving;
  const std::string source = "fuzz.safetensors";
  SafetensorsContents contents;
  try {
    contents = parse_safetensors(std::string_view(reinterpret_cast<const char*>(data), size), source);
  } catch (const accel::InvalidArgumentError& error) {
    if (std::string_view(error.what()).find(source) == std::string_view::npos) std::abort();  // unnamed
    return 0;
  }
  const SafetensorsContents again = parse_safetensors(serialize_safetensors(contents), source);
  if (again.tensors.size() != contents.tensors.size() || again.metadata != contents.metadata) std::abort();
  for (std::size_t index = 0; index < contents.tensors.size(); ++index) {
    const StoredTensor* same = again.find(contents.tensors[index].name);
    if (same == nullptr || same->bytes != contents.tensors[index].bytes || same->dtype != contents.tensors[index].dtype) {
      std::abort();
    }
  }
  return 0;
}
