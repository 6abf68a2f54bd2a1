// libFuzzer target: any text given as TF_CONFIG either parses into a config
// whose task is inside its cluster, or gives one InvalidArgumentError whose
// message starts with "TF_CONFIG" -- never a crash, a hang, an nlohmann
// exception or a sanitizer report. Built and run by
// tests/fuzz/run_libfuzzer.sh (ctest label "fuzz").
#include <accel/distribute/tf_config_parser.hpp>
#include <accel/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const accel::distribute::TFConfig config = accel::distribute::parse_tf_config(text, "TF_CONFIG");
    if (!config.cluster.empty() && !config.task_type.empty()) {
      (void)config.cluster.task_address(config.task_type, config.task_index);  // must exist
    }
  } catch (const accel::InvalidArgumentError& error) {
    if (!std::string_view(error.what()).starts_with("TF_CONFIG")) std::abort();  // every message names its source
  }
  return 0;
}
