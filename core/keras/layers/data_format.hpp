// Keras's `data_format` argument of the reshaping and global pooling layers.
// accel lays images out NHWC and sequences as (batch, steps, features), so
// only "channels_last" is computed. Private to core/keras/layers.
#pragma once

#include <string>
#include <string_view>

namespace accel::keras::data_format {

// Accepts "channels_last" (any case, as Keras lowercases it) and "" (Keras's
// None: the default image data format, channels_last). "channels_first" is an
// UnimplementedError, anything else an InvalidArgumentError; both name
// `layer_name` and say that only "channels_last" is supported.
void check_channels_last(std::string_view data_format, const std::string& layer_name);

}  // namespace accel::keras::data_format
