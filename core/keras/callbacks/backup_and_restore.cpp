// BackupAndRestore: one atomic checkpoint file holding the weights, the
// optimizer's state and the position to resume at.
#include <accel/error.hpp>
#include <accel/keras/callbacks/backup_and_restore.hpp>
#include <accel/keras/model.hpp>
#include <accel/keras/saving/checkpoint.hpp>

#include <charconv>
#include <filesystem>
#include <string>

#include "folder_lock.hpp"
#include "worker_file_paths.hpp"

namespace accel::keras {
namespace {

// Metadata keys: the epoch to run next and the batches of it already trained.
constexpr const char* kResumeEpochKey = "resume_epoch";
constexpr const char* kResumeStepKey = "resume_step";

int64_t read_counter(const std::map<std::string, std::string>& metadata, const char* key, const std::string& path) {
  const auto found = metadata.find(key);
  if (found != metadata.end()) {
    // Decimal digits only: no sign, space, exponent or base prefix.
    const std::string& text = found->second;
    int64_t value = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size() && !text.empty() && text.front() != '-') return value;
  }
  throw InvalidArgumentError("BackupAndRestore: the backup '" + path + "' has no valid \"" + key +
                             "\" in its metadata (a non-negative integer); it was not written by BackupAndRestore");
}

// The position a backup says to resume at, checked against this fit: a
// backup from another run (more epochs, longer epochs) or a damaged one must
// not make fit replay for ever, wrap an epoch number around or fail far away.
keras::Model::TrainingPosition resume_position(const std::map<std::string, std::string>& metadata,
                                               const CallbackParams& params, const std::string& path) {
  const int64_t epoch = read_counter(metadata, kResumeEpochKey, path);
  const int64_t step = read_counter(metadata, kResumeStepKey, path);
  const auto refuse = [&](const std::string& what) {
    return InvalidArgumentError("BackupAndRestore: the backup '" + path + "' cannot be resumed by this fit: " + what +
                                "; remove the backup folder to start afresh, or run the fit that wrote it");
  };
  if (epoch > params.epochs) {
    throw refuse("its \"" + std::string(kResumeEpochKey) + "\" is " + std::to_string(epoch) + ", past this fit's " +
                 std::to_string(params.epochs) + " epochs (expected 0.." + std::to_string(params.epochs) + ")");
  }
  // A backup at an epoch's end says (epoch + 1, 0), never (epoch, steps).
  if (params.steps && step >= *params.steps) {
    throw refuse("its \"" + std::string(kResumeStepKey) + "\" is " + std::to_string(step) + ", past the " +
                 std::to_string(*params.steps) + " steps of an epoch (expected 0.." + std::to_string(*params.steps - 1) +
                 ")");
  }
  if (epoch == params.epochs && step != 0) {
    throw refuse("it says epoch " + std::to_string(epoch) + " step " + std::to_string(step) +
                 ", but this fit has no epoch " + std::to_string(epoch + 1));
  }
  return {static_cast<int>(epoch), step};
}

}  // namespace

BackupAndRestore::BackupAndRestore(std::string backup_dir, BackupAndRestoreOptions options)
    : backup_dir_(std::move(backup_dir)), options_(options), lock_(std::make_unique<detail::FolderLock>()) {
  if (backup_dir_.empty()) throw InvalidArgumentError("BackupAndRestore: backup_dir is empty");
  if (options_.save_freq && *options_.save_freq <= 0) {
    throw InvalidArgumentError("BackupAndRestore: save_freq must be positive, got " + std::to_string(*options_.save_freq));
  }
}

BackupAndRestore::~BackupAndRestore() = default;

std::string BackupAndRestore::checkpoint_path() const {
  return (std::filesystem::path(backup_dir_) / "checkpoint.safetensors").string();
}

// Every worker restores from the chief's backup; only the chief's saves land
// there (the others write to a temporary folder, removed after each save), and
// only the chief locks the folder: it is the one writer.
void BackupAndRestore::on_train_begin(const Logs&) {
  if (detail::writes_real_files(model())) {
    std::filesystem::create_directories(backup_dir_);
    lock_->acquire(backup_dir_, "BackupAndRestore");
  }
  batches_since_save_ = 0;
  const std::string path = checkpoint_path();
  if (!std::filesystem::exists(path)) return;
  const auto metadata = saving::load_checkpoint(model(), path, {.include_optimizer = true});
  model().resume_training_at(resume_position(metadata, params(), path));
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

// Only a fit that ended normally gets here (a failing one throws past it), so
// a failed run keeps its backup, as Keras does.
void BackupAndRestore::on_train_end(const Logs&) {
  if (options_.delete_checkpoint && detail::writes_real_files(model())) {
    std::filesystem::remove(checkpoint_path());
    std::error_code ignored;  // the folder stays if anything else is in it
    std::filesystem::remove(backup_dir_, ignored);
  }
  lock_->release();
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
