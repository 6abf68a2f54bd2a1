// Skipping a test that needs GPUs, saying why there are none: the cuda
// plugin's own reason ("reports zero devices: no CUDA driver"), as `accel
// devices` lists it, or how many GPUs were found. Lists physical devices
// only, so the test may still change device settings afterwards.
#pragma once

#include <accel/config.hpp>
#include <accel/runtime.hpp>

#include <gtest/gtest.h>

#include <string>

namespace accel::testing {

// "" when at least `needed` physical GPUs exist, otherwise why not.
inline std::string missing_gpus_reason(size_t needed = 1) {
  const size_t found = config::list_physical_devices("GPU").size();
  if (found >= needed) return "";
  if (found > 0) return "needs " + std::to_string(needed) + " GPUs, found " + std::to_string(found);
  for (const runtime::SkippedPlugin& plugin : runtime::skipped_plugins()) {
    if (plugin.name == "cuda") return "no GPU: the cuda plugin " + plugin.reason;
  }
  return "no GPU: no cuda plugin was found";
}

}  // namespace accel::testing

// Skips the current test unless `needed` physical GPUs exist.
#define ACCEL_SKIP_WITHOUT_GPUS(needed)                                                 \
  if (const std::string accel_missing_gpus = ::accel::testing::missing_gpus_reason(needed); \
      !accel_missing_gpus.empty())                                                     \
  GTEST_SKIP() << accel_missing_gpus
