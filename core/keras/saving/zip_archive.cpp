// Zip archives through libzip: read from a file, written to memory (so that
// the caller writes the bytes atomically).
#include "zip_archive.hpp"

#include <accel/error.hpp>

#include <zip.h>

#include <filesystem>
#include <memory>

namespace accel::keras::saving {
namespace {

// Deflate cannot expand data more than about 1032 times; a member declaring
// more than that is damaged or hostile.
constexpr uint64_t kMaxCompressionRatio = 1100;

std::string zip_reason(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string reason = zip_error_strerror(&error);
  zip_error_fini(&error);
  return reason;
}

struct ArchiveCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }
};
struct FileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

}  // namespace

std::map<std::string, std::string> read_zip_archive(const std::string& path) {
  std::error_code filesystem_error;
  if (!std::filesystem::is_regular_file(path, filesystem_error)) {
    throw NotFoundError(path + ": no such file (expected a Keras .keras archive)");
  }
  const uint64_t file_size = std::filesystem::file_size(path, filesystem_error);
  int code = 0;
  std::unique_ptr<zip_t, ArchiveCloser> archive(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!archive) {
    throw InvalidArgumentError(path + ": not a readable zip archive (" + zip_reason(code) +
                               "); a .keras file is a zip of config.json, metadata.json and model.weights.h5");
  }
  std::map<std::string, std::string> members;
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t index = 0; index < count; ++index) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive.get(), static_cast<zip_uint64_t>(index), 0, &stat) != 0 ||
        !(stat.valid & ZIP_STAT_NAME) || !(stat.valid & ZIP_STAT_SIZE)) {
      throw InvalidArgumentError(path + ": zip entry " + std::to_string(index) + " cannot be read (" +
                                 zip_strerror(archive.get()) + ")");
    }
    const std::string name = stat.name;
    if (stat.size > file_size * kMaxCompressionRatio + 4096) {
      throw InvalidArgumentError(path + ": member '" + name + "' declares " + std::to_string(stat.size) +
                                 " bytes, more than a " + std::to_string(file_size) + "-byte archive can hold");
    }
    std::unique_ptr<zip_file_t, FileCloser> file(zip_fopen_index(archive.get(), static_cast<zip_uint64_t>(index), 0));
    if (!file) {
      throw InvalidArgumentError(path + ": member '" + name + "' cannot be opened (" + zip_strerror(archive.get()) + ")");
    }
    // Read one byte past the declared size: a member longer than it says is as damaged as a shorter one.
    std::string bytes(static_cast<size_t>(stat.size) + 1, '\0');
    zip_int64_t total = 0;
    while (total < static_cast<zip_int64_t>(bytes.size())) {
      const zip_int64_t read = zip_fread(file.get(), bytes.data() + total, bytes.size() - static_cast<size_t>(total));
      if (read < 0) {
        throw InvalidArgumentError(path + ": member '" + name + "' is damaged (" +
                                   zip_error_strerror(zip_file_get_error(file.get())) + ")");
      }
      if (read == 0) break;
      total += read;
    }
    if (total != static_cast<zip_int64_t>(stat.size)) {
      throw InvalidArgumentError(path + ": member '" + name + "' holds " + std::to_string(total) +
                                 " bytes but the archive declares " + std::to_string(stat.size));
    }
    bytes.resize(static_cast<size_t>(total));
    members[name] = std::move(bytes);
  }
  return members;
}

std::string make_zip_archive(const std::vector<std::pair<std::string, std::string>>& members,
                             const std::string& source) {
  zip_error_t error;
  zip_error_init(&error);
  auto fail = [&](const std::string& what, const std::string& reason) {
    zip_error_fini(&error);
    throw InternalError(source + ": " + what + ": " + reason);
  };
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (buffer == nullptr) fail("cannot make an in-memory zip", zip_error_strerror(&error));
  zip_source_keep(buffer);  // still ours after zip_close, to read the archive back
  std::unique_ptr<zip_source_t, decltype(&zip_source_free)> owned(buffer, zip_source_free);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  if (archive == nullptr) fail("cannot make an in-memory zip", zip_error_strerror(&error));
  for (const auto& [name, bytes] : members) {
    zip_source_t* member = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    const zip_int64_t index = member == nullptr ? -1 : zip_file_add(archive, name.c_str(), member, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      if (member != nullptr) zip_source_free(member);
      const std::string reason = zip_strerror(archive);
      zip_discard(archive);
      fail("cannot add '" + name + "'", reason);
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
  }
  if (zip_close(archive) != 0) {
    const std::string reason = zip_strerror(archive);
    zip_discard(archive);
    fail("cannot finish the zip", reason);
  }
  if (zip_source_open(buffer) != 0) fail("cannot read the zip back", zip_error_strerror(zip_source_error(buffer)));
  zip_source_seek(buffer, 0, SEEK_END);
  const zip_int64_t size = zip_source_tell(buffer);
  zip_source_seek(buffer, 0, SEEK_SET);
  std::string bytes(static_cast<size_t>(size < 0 ? 0 : size), '\0');
  const zip_int64_t read = zip_source_read(buffer, bytes.data(), bytes.size());
  zip_source_close(buffer);
  if (read != size) fail("cannot read the zip back", "short read");
  zip_error_fini(&error);
  return bytes;
}

}  // namespace accel::keras::saving
