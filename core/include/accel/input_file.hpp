// Reading a file a user named, safely. Every reader of user input (experiment
// YAML, presets, model and weight files, datasets) checks the path by kind
// before opening it: a folder, a FIFO (whose open would block until a writer
// comes), a device (/dev/zero never ends) or a socket is refused with what
// it is, and so is a file larger than the reader's bound, before a byte is
// read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace accel {

// The size of `path` if it is a regular file (symbolic links followed) of at
// most `max_bytes`. A missing path is NotFoundError; anything else
// InvalidArgumentError "<what> '<path>' is a folder|FIFO|...; expected a
// regular file" or "... has N bytes; expected at most M bytes".
uint64_t check_input_file(const std::string& path, std::string_view what, uint64_t max_bytes);

// check_input_file, then the whole file. A read failure is InvalidArgumentError naming the path.
std::string read_input_file(const std::string& path, std::string_view what, uint64_t max_bytes);

}  // namespace accel
