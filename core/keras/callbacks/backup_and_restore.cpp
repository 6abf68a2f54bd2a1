// BackupAndRestore: one atomic checkpoint file holding the weights, the
// optimizer's state and the position to resume at.
#include <accel/error.hpp>
#include <accel/keras/callbacks/backup_and_restore.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/checkpoint.hpp>

#include <filesystem>

#include "worker_file_paths.hpp"

namespace accel::keras {
namespace {

// Metadata keys: the epoch to run next and the batches of it already trained.
constexpr const char* kResumeEpochKey = "resume_epoch";
constexpr const char* kResumeStepKey = "resume_step";

int64_t read_counter(const std::map<std::string, std::string>& metadata, const char* key, const std::string& path) {
  const auto found = metadata.find(key);
  try {
    if (found == metadata.end()) throw std::invalid_argument("missing");
    size_t used = 0;
    const int64_t value = std::stoll(found->second, &used);
    if (used != found->second.size() || value < 0) throw std::invalid_argument("malformed");
    return value;
  } catch (const std::exception&) {
    throw InvalidArgumentError("BackupAndRestore: the backup '" + path + "' has no valid \"" + key +
                               "\" in its metadata; it was not written by BackupAndRestore");
  }
}

}  // namespace

BackupAndRestore::BackupAndRestore(std::string backup_dir, BackupAndRestoreOptions options)
    : backup_dir_(std::move(backup_dir)), options_(options) {
  if (backup_dir_.empty()) throw InvalidArgumentError("BackupAndRestore: backup_dir is empty");
  if (options_.save_freq && *options_.save_freq <= 0) {
    throw InvalidArgumentError("BackupAndRestore: save_freq must be positive, got " + std::to_string(*options_.save_freq));
  }
}

std::string BackupAndRestore::checkpoint_path() const {
  return (std::filesystem::path(backup_dir_) / "checkpoint.safetensors").string();
}

// Every worker restores from the chief's backup; only the chief's saves land
// there (the others write to a temporary folder, removed after each save).
void BackupAndRestore::on_train_begin(const Logs&) {
  if (detail::writes_real_files(model())) std::filesystem::create_directories(backup_dir_);
  batches_since_save_ = 0;
  const std::string path = checkpoint_path();
  if (!std::filesystem::exists(path)) return;
  const auto metadata = saving::load_checkpoint(model(), path, {.include_optimizer = true});
  model().resume_training_at({static_cast<int>(read_counter(metadata, kResumeEpochKey, path)),
                              read_counter(metadata, kResumeStepKey, path)});
}

void BackupAndRestore::on_epoch_begin(int epoch, const Logs&) { current_epoch_ = epoch; }

void BackupAndRestore::on_train_batch_end(int64_t batch, const Logs&) {
  if (!options_.save_freq || ++batches_since_save_ < *options_.save_freq) return;
  // The epoch's last batch is saved by on_epoch_end right after (a backup at
  // the very end of an epoch would resume into an epoch with no batches left).
  if (params().steps && batch + 1 >= *params().steps) return;
  save_backup(current_epoch_, batch + 1);
}

void BackupAndRestore::on_epoch_end(int epoch, Logs&) { save_backup(epoch + 1, 0); }

void BackupAndRestore::on_train_end(const Logs&) {
  if (!options_.delete_checkpoint || !detail::writes_real_files(model())) return;
  std::filesystem::remove(checkpoint_path());
  std::error_code ignored;  // the folder stays if anything else is in it
  std::filesystem::remove(backup_dir_, ignored);
}

void BackupAndRestore::save_backup(int epoch, int64_t step) {
  const std::string path = detail::worker_write_filepath(checkpoint_path(), model());
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  saving::save_checkpoint(model(), path,
                          {.include_optimizer = true,
                           .metadata = {{kResumeEpochKey, std::to_string(epoch)}, {kResumeStepKey, std::to_string(step)}}});
  detail::remove_worker_temp_dirpath(backup_dir_, model());
  batches_since_save_ = 0;
}

}  // namespace accel::keras
