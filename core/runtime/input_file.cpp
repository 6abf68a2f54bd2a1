// input_file.hpp: stat() decides the kind without opening the path, so a FIFO never blocks.
#include <accel/input_file.hpp>

#include <accel/error.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace accel {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string quoted(std::string_view what, const std::string& path) { return std::string(what) + " '" + path + "'"; }

}  // namespace

uint64_t check_input_file(const std::string& path, std::string_view what, uint64_t max_bytes) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) throw NotFoundError(quoted(what, path) + " not found");
    throw InvalidArgumentError(quoted(what, path) + " cannot be read: " + std::strerror(error));
  }
  if (!S_ISREG(status.st_mode)) {
    throw InvalidArgumentError(quoted(what, path) + " is " + kind_of(status.st_mode) + "; expected a regular file");
  }
  const auto size = static_cast<uint64_t>(status.st_size);
  if (size > max_bytes) {
    throw InvalidArgumentError(quoted(what, path) + " has " + std::to_string(size) + " bytes; expected at most " +
                               std::to_string(max_bytes) + " bytes");
  }
  return size;
}

std::string read_input_file(const std::string& path, std::string_view what, uint64_t max_bytes) {
  const uint64_t size = check_input_file(path, what, max_bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgumentError(quoted(what, path) + " cannot be opened: " + std::strerror(errno));
  std::string text;
  text.reserve(size);
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) throw InvalidArgumentError(quoted(what, path) + ": reading failed");
  if (text.size() > max_bytes) {  // grew while being read
    throw InvalidArgumentError(quoted(what, path) + " has more than " + std::to_string(max_bytes) + " bytes");
  }
  return text;
}

}  // namespace accel
