#include "data_format.hpp"

#include <accel/error.hpp>

#include <algorithm>
#include <cctype>

namespace accel::keras::data_format {

void check_channels_last(std::string_view data_format, const std::string& layer_name) {
  std::string lower(data_format);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.empty() || lower == "channels_last") return;
  const std::string message = layer_name + ": data_format \"" + std::string(data_format) +
                              "\" is not supported; only \"channels_last\" is (accel's images are NHWC and "
                              "sequences (batch, steps, features))";
  // channels_first is a valid Keras value that accel does not compute; any other is a mistake.
  if (lower == "channels_first") throw UnimplementedError(message);
  throw InvalidArgumentError(message);
}

}  // namespace accel::keras::data_format
