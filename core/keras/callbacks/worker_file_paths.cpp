#include "worker_file_paths.hpp"

#include <accel/keras/model.hpp>

#include <filesystem>

namespace accel::keras::detail {

bool writes_real_files(const Model& model) {
  const DistributedTraining* strategy = model.distribute_strategy();
  return strategy == nullptr || strategy->is_chief();
}

std::string worker_write_dirpath(const std::string& dirpath, const Model& model) {
  if (writes_real_files(model)) return dirpath;
  const int task = model.distribute_strategy()->worker_index();
  return (std::filesystem::path(dirpath) / ("workertemp_" + std::to_string(task))).string();
}

std::string worker_write_filepath(const std::string& filepath, const Model& model) {
  if (writes_real_files(model)) return filepath;
  const std::filesystem::path path(filepath);
  return (std::filesystem::path(worker_write_dirpath(path.parent_path().string(), model)) / path.filename()).string();
}

void remove_worker_temp_dirpath(const std::string& dirpath, const Model& model) {
  if (writes_real_files(model)) return;
  std::error_code ignored;
  std::filesystem::remove_all(worker_write_dirpath(dirpath, model), ignored);
}

}  // namespace accel::keras::detail
