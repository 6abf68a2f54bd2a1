// Hdf5File over the HDF5 C API: handles closed by RAII, errors taken from
// HDF5's error stack instead of printed by it.
#include "hdf5_file.hpp"

#include <accel/error.hpp>

#include <hdf5.h>
#include <hdf5_hl.h>

#include <filesystem>
#include <mutex>
#include <utility>

namespace accel::keras::saving {
namespace {

std::mutex& hdf5_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Taken by every public operation: the lock, and HDF5's own error printing off
// (once), so that failures reach the caller as exceptions only.
class Hdf5Lock {
 public:
  Hdf5Lock() : lock_(hdf5_mutex()) {
    static const bool printing_off = [] {
      H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
      return true;
    }();
    (void)printing_off;
  }

 private:
  std::lock_guard<std::mutex> lock_;
};

// The innermost messages of HDF5's error stack, joined.
std::string hdf5_reason() {
  std::string reason;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* error, void* data) -> herr_t {
        auto& text = *static_cast<std::string*>(data);
        if (error->desc != nullptr && error->desc[0] != '\0') text += (text.empty() ? "" : "; ") + std::string(error->desc);
        return 0;
      },
      &reason);
  H5Eclear2(H5E_DEFAULT);
  return reason.empty() ? "unknown HDF5 error" : reason;
}

// An HDF5 identifier closed by the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) { other.id_ = -1; }
  Handle& operator=(Handle&&) = delete;
  ~Handle() {
    if (id_ >= 0) closer_(id_);
  }
  hid_t get() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }

 private:
  hid_t id_;
  Closer closer_;
};

[[noreturn]] void fail(const std::string& source, const std::string& path, const std::string& what) {
  throw InvalidArgumentError(source + ": " + what + (path.empty() ? "" : " '" + path + "'") + ": " + hdf5_reason());
}

// HDF5 wants "/" for the root and absolute paths.
std::string absolute(const std::string& path) { return path.empty() || path[0] != '/' ? "/" + path : path; }

// The HDF5 type a tensor of `dtype` is stored in, and read into (the same
// type both ways: the bytes are copied as they are). float16 is h5py's
// (an IEEE binary16 made from the float32 type); bfloat16 is an untagged
// 2-byte opaque type, as Keras 3 writes ml_dtypes' bfloat16 through h5py.
// Invalid (-1) for a dtype HDF5 files do not hold here (bool).
Handle stored_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return Handle(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
    case DType::kInt32: return Handle(H5Tcopy(H5T_STD_I32LE), H5Tclose);
    case DType::kInt64: return Handle(H5Tcopy(H5T_STD_I64LE), H5Tclose);
    case DType::kUInt8: return Handle(H5Tcopy(H5T_STD_U8LE), H5Tclose);
    case DType::kFloat16: {
      Handle type(H5Tcopy(H5T_IEEE_F32LE), H5Tclose);
      if (H5Tset_fields(type.get(), 15, 10, 5, 0, 10) < 0 || H5Tset_size(type.get(), 2) < 0 ||
          H5Tset_ebias(type.get(), 15) < 0) {
        return Handle(-1, H5Tclose);
      }
      return type;
    }
    case DType::kBFloat16: return Handle(H5Tcreate(H5T_OPAQUE, 2), H5Tclose);
    default: return Handle(-1, H5Tclose);
  }
}

std::optional<DType> dtype_of(hid_t type) {
  const H5T_class_t type_class = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (type_class == H5T_FLOAT && size == 4) return DType::kFloat32;
  if (type_class == H5T_FLOAT && size == 2) return DType::kFloat16;
  if (type_class == H5T_OPAQUE && size == 2) return DType::kBFloat16;
  if (type_class == H5T_INTEGER) {
    const bool is_signed = H5Tget_sign(type) == H5T_SGN_2;
    if (is_signed && size == 4) return DType::kInt32;
    if (is_signed && size == 8) return DType::kInt64;
    if (!is_signed && size == 1) return DType::kUInt8;
  }
  return std::nullopt;
}

std::string describe_type(hid_t type) {
  const H5T_class_t type_class = H5Tget_class(type);
  const std::string size = std::to_string(H5Tget_size(type) * 8) + "-bit";
  switch (type_class) {
    case H5T_FLOAT: return size + " float";
    case H5T_INTEGER: return size + (H5Tget_sign(type) == H5T_SGN_2 ? " signed" : " unsigned") + " integer";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum (h5py's bool?)";
    case H5T_OPAQUE: return size + " opaque";
    default: return "HDF5 type class " + std::to_string(static_cast<int>(type_class));
  }
}

}  // namespace

Hdf5File Hdf5File::open(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw NotFoundError(path + ": no such file (expected a Keras .weights.h5 / HDF5 file)");
  }
  Hdf5Lock lock;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw InvalidArgumentError(path + ": not an HDF5 file (no HDF5 signature); expected a Keras .weights.h5 file");
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) fail(path, "", "cannot open the HDF5 file");
  return Hdf5File(file, path);
}

Hdf5File Hdf5File::open_image(std::string_view bytes, const std::string& source) {
  Hdf5Lock lock;
  // H5LTopen_file_image wants a non-const buffer even read-only; it copies it.
  std::string copy(bytes);
  const hid_t file = copy.empty() ? -1 : H5LTopen_file_image(copy.data(), copy.size(), 0);
  if (file < 0) fail(source, "", "not a readable HDF5 file image");
  return Hdf5File(file, source);
}

Hdf5File Hdf5File::create_in_memory(const std::string& source) {
  Hdf5Lock lock;
  Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  // The core driver without a backing store: the file lives in memory only.
  if (!access.valid() || H5Pset_fapl_core(access.get(), 1 << 16, 0) < 0) fail(source, "", "cannot set up an in-memory file");
  const hid_t file = H5Fcreate(source.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
  if (file < 0) fail(source, "", "cannot create an in-memory HDF5 file");
  return Hdf5File(file, source);
}

Hdf5File::Hdf5File(Hdf5File&& other) noexcept
    : file_(std::exchange(other.file_, -1)), source_(std::move(other.source_)) {}

Hdf5File& Hdf5File::operator=(Hdf5File&& other) noexcept {
  if (this != &other) {
    this->~Hdf5File();
    file_ = std::exchange(other.file_, -1);
    source_ = std::move(other.source_);
  }
  return *this;
}

Hdf5File::~Hdf5File() {
  if (file_ < 0) return;
  Hdf5Lock lock;
  H5Fclose(file_);
}

bool Hdf5File::has_object(const std::string& path, int object_type) const {
  Hdf5Lock lock;
  // H5Lexists fails (rather than answering false) when a parent is missing,
  // so walk the path one link at a time.
  const std::string full = absolute(path);
  size_t position = 1;
  while (position <= full.size()) {
    const size_t next = full.find('/', position);
    const std::string prefix = full.substr(0, next);
    if (prefix.size() > 1 && H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    if (next == std::string::npos) break;
    position = next + 1;
  }
  Handle object(H5Oopen(file_, full.c_str(), H5P_DEFAULT), H5Oclose);
  if (!object.valid()) {
    H5Eclear2(H5E_DEFAULT);
    return false;
  }
  return H5Iget_type(object.get()) == static_cast<H5I_type_t>(object_type);
}

bool Hdf5File::has_group(const std::string& path) const { return has_object(path, H5I_GROUP); }

bool Hdf5File::has_dataset(const std::string& path) const { return has_object(path, H5I_DATASET); }

std::vector<std::string> Hdf5File::members(const std::string& group_path) const {
  Hdf5Lock lock;
  Handle group(H5Gopen2(file_, absolute(group_path).c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.valid()) fail(source_, group_path, "no group");
  std::vector<std::string> names;
  const herr_t status = H5Literate(
      group.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  if (status < 0) fail(source_, group_path, "cannot list the group");
  return names;
}

std::optional<std::string> Hdf5File::string_attribute(const std::string& path, const std::string& name) const {
  Hdf5Lock lock;
  const std::string full = absolute(path);
  if (H5Aexists_by_name(file_, full.c_str(), name.c_str(), H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  Handle attribute(H5Aopen_by_name(file_, full.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  Handle type(attribute.valid() ? H5Aget_type(attribute.get()) : -1, H5Tclose);
  if (!type.valid()) fail(source_, path, "cannot open attribute '" + name + "' of");
  if (H5Tget_class(type.get()) != H5T_STRING) {
    throw InvalidArgumentError(source_ + ": attribute '" + name + "' of '" + path + "' is a " +
                               describe_type(type.get()) + ", expected a string");
  }
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle memory_type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory_type.get(), H5T_VARIABLE);
    H5Tset_cset(memory_type.get(), H5Tget_cset(type.get()));
    char* value = nullptr;
    if (H5Aread(attribute.get(), memory_type.get(), &value) < 0) fail(source_, path, "cannot read attribute '" + name + "' of");
    std::string text = value == nullptr ? "" : value;
    Handle space(H5Aget_space(attribute.get()), H5Sclose);
    H5Dvlen_reclaim(memory_type.get(), space.get(), H5P_DEFAULT, &value);
    return text;
  }
  std::string text(H5Tget_size(type.get()), '\0');
  if (H5Aread(attribute.get(), type.get(), text.data()) < 0) fail(source_, path, "cannot read attribute '" + name + "' of");
  text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
  return text;
}

StoredTensor Hdf5File::read_dataset(const std::string& path) const {
  Hdf5Lock lock;
  Handle dataset(H5Dopen2(file_, absolute(path).c_str(), H5P_DEFAULT), H5Dclose);
  if (!dataset.valid()) fail(source_, path, "no dataset");
  Handle type(H5Dget_type(dataset.get()), H5Tclose);
  Handle space(H5Dget_space(dataset.get()), H5Sclose);
  if (!type.valid() || !space.valid()) fail(source_, path, "cannot read the type and shape of dataset");
  const std::optional<DType> dtype = dtype_of(type.get());
  if (!dtype) {
    throw InvalidArgumentError(source_ + ": dataset '" + path + "' holds " + describe_type(type.get()) +
                               " elements; expected float32, float16, bfloat16 (2-byte opaque), int32, int64 or uint8");
  }
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || H5Sget_simple_extent_type(space.get()) == H5S_NULL) fail(source_, path, "dataset has no simple shape:");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  StoredTensor tensor{path, *dtype, Shape(std::vector<int64_t>(dims.begin(), dims.end())), {}};
  tensor.bytes.resize(static_cast<size_t>(tensor.shape.element_count()) * dtype_size(*dtype));
  const Handle memory_type = stored_type(*dtype);
  if (!tensor.bytes.empty() &&
      H5Dread(dataset.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, tensor.bytes.data()) < 0) {
    fail(source_, path, "cannot read dataset");
  }
  return tensor;
}

void Hdf5File::create_group(const std::string& path) {
  Hdf5Lock lock;
  Handle link_properties(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(link_properties.get(), 1);
  Handle group(H5Gcreate2(file_, absolute(path).c_str(), link_properties.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!group.valid()) fail(source_, path, "cannot create group");
}

void Hdf5File::set_string_attribute(const std::string& path, const std::string& name, const std::string& value) {
  Hdf5Lock lock;
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  Handle attribute(H5Acreate_by_name(file_, absolute(path).c_str(), name.c_str(), type.get(), space.get(),
                                     H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   H5Aclose);
  const char* text = value.c_str();
  if (!attribute.valid() || H5Awrite(attribute.get(), type.get(), &text) < 0) {
    fail(source_, path, "cannot write attribute '" + name + "' of");
  }
}

void Hdf5File::write_dataset(const std::string& path, const StoredTensor& tensor) {
  Hdf5Lock lock;
  const Handle type = stored_type(tensor.dtype);
  if (!type.valid()) {
    throw InvalidArgumentError(source_ + ": cannot store '" + path + "' of dtype " +
                               std::string(dtype_name(tensor.dtype)) +
                               " (float32, float16, bfloat16, int32, int64 and uint8 only)");
  }
  const std::vector<hsize_t> dims(tensor.shape.dims().begin(), tensor.shape.dims().end());
  Handle space(dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
               H5Sclose);
  Handle link_properties(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(link_properties.get(), 1);
  Handle dataset(H5Dcreate2(file_, absolute(path).c_str(), type.get(), space.get(),
                            link_properties.get(), H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose);
  if (!dataset.valid()) fail(source_, path, "cannot create dataset");
  if (!tensor.bytes.empty() &&
      H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, tensor.bytes.data()) < 0) {
    fail(source_, path, "cannot write dataset");
  }
}

std::string Hdf5File::image() const {
  Hdf5Lock lock;
  if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) fail(source_, "", "cannot flush");
  const ssize_t size = H5Fget_file_image(file_, nullptr, 0);
  if (size < 0) fail(source_, "", "cannot take the file image");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (H5Fget_file_image(file_, bytes.data(), bytes.size()) < 0) fail(source_, "", "cannot take the file image");
  return bytes;
}

}  // namespace accel::keras::saving
