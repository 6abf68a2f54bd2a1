// The key=value options a test worker binary takes after its mode
// (`worker single output=/tmp/x steps=20`), shared by the workers that the
// multi-process tests start.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <string>

namespace accel::testing {

// argv[2..] as a map; nullopt (after printing which) for an argument that
// is not key=value.
inline std::optional<std::map<std::string, std::string>> worker_options(int argc, char** argv) {
  std::map<std::string, std::string> options;
  for (int i = 2; i < argc; ++i) {
    const std::string argument = argv[i];
    const size_t equals = argument.find('=');
    if (equals == std::string::npos) {
      std::fprintf(stderr, "not key=value: %s\n", argv[i]);
      return std::nullopt;
    }
    options[argument.substr(0, equals)] = argument.substr(equals + 1);
  }
  return options;
}

}  // namespace accel::testing
