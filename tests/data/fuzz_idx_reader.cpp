// libFuzzer target: any bytes, raw or gzip, given to the IDX reader and to
// the Fashion-MNIST checks either parse into exactly the elements the header
// promises or give one DataError naming the file -- never a crash, a hang,
// another exception type, an allocation beyond the input's worth, or a
// sanitizer report. Built and run by tests/fuzz/run_libfuzzer.sh (ctest
// label "fuzz").
#include "idx_format.hpp"

#include <accel/data/data_error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {

constexpr std::string_view kName = "fuzz.idx";

void require_named(const accel::data::DataError& error) {
  if (error.file() != kName || !std::string_view(error.what()).starts_with("fuzz.idx:")) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace accel::data::detail;
  ByteReader reader(std::vector<std::uint8_t>(data, data + size), std::string(kName));
  try {
    const IdxContents idx = parse_idx(reader);
    uint64_t elements = 1;
    for (int64_t dim : idx.dims) elements *= static_cast<uint64_t>(dim);
    if (idx.payload.size() != elements || elements > kMaxIdxElements) std::abort();
    try {
      check_idx_images(idx, {28, 28});
    } catch (const accel::data::DataError& error) {
      require_named(error);
    }
    try {
      check_idx_labels(idx, 10);
    } catch (const accel::data::DataError& error) {
      require_named(error);
    }
  } catch (const accel::data::DataError& error) {
    require_named(error);
  }
  return 0;
}
