// Internal: the few HDF5 operations Keras 3's weight files need, over the
// HDF5 C library (Debian's libhdf5): groups, string attributes and
// contiguous datasets of accel's dtypes, in a file on disk or in memory (the
// `model.weights.h5` inside a `.keras` zip never touches the disk).
//
// Every failure is an accel error naming the file (`source`), the object
// path and HDF5's own reason. The serial HDF5 library is not thread-safe, so
// every call holds one process-wide lock.
#pragma once

#include <accel/keras/saving/safetensors.hpp>  // StoredTensor: dtype, shape, bytes

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel::keras::saving {

class Hdf5File {
 public:
  // Opens an existing file read-only. A missing file is NotFoundError; a file
  // that is not HDF5 is InvalidArgumentError.
  static Hdf5File open(const std::string& path);
  // Opens a file image (the bytes of an HDF5 file) read-only; `source` names it in errors.
  static Hdf5File open_image(std::string_view bytes, const std::string& source);
  // A new, empty file held in memory; image() gives its bytes.
  static Hdf5File create_in_memory(const std::string& source);

  Hdf5File(Hdf5File&& other) noexcept;
  Hdf5File& operator=(Hdf5File&& other) noexcept;
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;
  ~Hdf5File();

  const std::string& source() const noexcept { return source_; }

  // Paths are absolute inside the file ("layers/dense/vars/0"; "" is the root).
  bool has_group(const std::string& path) const;
  bool has_dataset(const std::string& path) const;
  // The names of a group's members (groups and datasets), in name order.
  std::vector<std::string> members(const std::string& group_path) const;
  // A string attribute (fixed or variable length), or nullopt when absent.
  std::optional<std::string> string_attribute(const std::string& path, const std::string& name) const;
  // A dataset's dtype, shape and bytes (`name` is set to its path).
  // Element types accel has no dtype for are InvalidArgumentError.
  StoredTensor read_dataset(const std::string& path) const;

  // Creates a group (and any missing parents).
  void create_group(const std::string& path);
  // A variable-length UTF-8 string attribute, as h5py writes Python strings.
  void set_string_attribute(const std::string& path, const std::string& name, const std::string& value);
  // A contiguous, uncompressed dataset (rank 0 is a scalar dataspace).
  void write_dataset(const std::string& path, const StoredTensor& tensor);

  // The bytes of a file made by create_in_memory.
  std::string image() const;

 private:
  Hdf5File(int64_t file, std::string source) : file_(file), source_(std::move(source)) {}
  bool has_object(const std::string& path, int object_type) const;

  int64_t file_ = -1;  // hid_t
  std::string source_;
};

}  // namespace accel::keras::saving
